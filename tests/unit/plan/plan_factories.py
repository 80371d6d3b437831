"""Intakes for the planner tests: the sources' worked example, and workloads built from it."""

from __future__ import annotations

import copy
from datetime import UTC, datetime
from typing import Any

from chipwise.plan.document import PlanDocument, WorkloadPlan
from chipwise.plan.intake import IntakeRequest
from chipwise.plan.planner import build_plan

CREATED = datetime(2026, 11, 22, 12, 0, tzinfo=UTC)
PLAN_ID = "T" * 43

# The worked example of the seed documents: 10 M requests/day, 20 req/s per g5.xlarge, 6 instances.
WORKED_WORKLOAD: dict[str, Any] = {
    "name": "chat serving",
    "stage": "inference",
    "model_family": "llama",
    "parameters_billion": 8,
    "custom_cuda_kernels": False,
    "traffic": "steady",
    "current_instance_type": "g5.xlarge",
    "instance_count": 6,
    "hours_per_month": 730,
    "requests_per_day": 10_000_000,
    "current_throughput_per_instance": 20,
    "latency_ms_target": 200,
    "one_off": False,
    "foundation_model_only": False,
}

BASE_INTAKE: dict[str, Any] = {
    "company": {
        "name": "Acme AI",
        "website": "https://acme.example",
        "country": "US",
        "stage": "seed",
        "institutional_funding": True,
        "activate_provider_org_id": None,
        "ai_first": True,
    },
    "contact": {"name": "Ada Lovelace", "email": "ada@acme.example"},
    "aws": {"monthly_spend_usd": 40000, "account_ids": ["123456789012"], "region": "us-east-1"},
    "workloads": [WORKED_WORKLOAD],
}


def workload(**fields: Any) -> dict[str, Any]:
    """The worked example's workload with ``fields`` changed (None removes a field)."""
    data = {**WORKED_WORKLOAD, **fields}
    return {k: v for k, v in data.items() if v is not None}


def intake_dict(*workloads: dict[str, Any], **company: Any) -> dict[str, Any]:
    data = copy.deepcopy(BASE_INTAKE)
    if workloads:
        data["workloads"] = list(workloads)
    data["company"].update(company)
    return data


def intake(*workloads: dict[str, Any], **company: Any) -> IntakeRequest:
    return IntakeRequest.model_validate(intake_dict(*workloads, **company))


def plan_for(*workloads: dict[str, Any], **company: Any) -> PlanDocument:
    return build_plan(intake(*workloads, **company), plan_id=PLAN_ID, created_at=CREATED)


def only(plan: PlanDocument) -> WorkloadPlan:
    assert len(plan.workloads) == 1
    return plan.workloads[0]
