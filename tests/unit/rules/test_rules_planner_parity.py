"""One workload priced by the planner (the public intake) and by the rules (a scan): both paths call the one
economics module, so the monthly saving, the porting cost and the break-even agree to the cent and the tenth."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

from rules_factories import ctx, flat, profile

from chipwise.catalog import get_assumptions, get_catalog
from chipwise.economics import cents, monthly_cost
from chipwise.plan.context import Context
from chipwise.plan.inputs import resolve
from chipwise.plan.intake import IntakeRequest
from chipwise.plan.options import Option, judge
from chipwise.rules.builtin.gpu_inference_portable import GpuInferencePortable, GpuInferencePortableParams

INTAKE: dict[str, Any] = {
    "company": {"name": "Acme AI", "country": "US", "stage": "seed", "institutional_funding": True, "ai_first": True},
    "contact": {"name": "Ada Lovelace", "email": "ada@acme.example"},
    "aws": {"monthly_spend_usd": 40000, "region": "us-east-1"},
    "workloads": [
        {
            "name": "chat serving",
            "stage": "inference",
            "model_family": "mistral",
            "parameters_billion": 7,
            "traffic": "steady",
            "current_instance_type": "g5.2xlarge",
            "instance_count": 4,
            "hours_per_month": 730,
        }
    ],
}


def test_one_workload_gets_the_same_figures_from_the_planner_and_the_rules() -> None:
    # Given 4 x g5.2xlarge serving Mistral-7B, moving to 2 x inf2.xlarge (the rule's own example), at list prices
    catalog = get_catalog()
    current, target = catalog.get("g5.2xlarge"), catalog.get("inf2.xlarge")
    current_rate = catalog.price("g5.2xlarge") or Decimal(0)
    endpoint = profile(
        "chat",
        kind="ec2_instance",
        instance_type="g5.2xlarge",
        count=4,
        rate=str(current_rate),
        hints={"model_family": "mistral", "hf_model_id": "mistralai/Mistral-7B-Instruct-v0.3", "workload": "inference"},
        gpu_util=flat(60.0),
        gpu_source="CWAgent",
    )
    # When the rules price the move
    draft = GpuInferencePortable(GpuInferencePortableParams()).evaluate(endpoint, ctx())
    assert draft is not None
    assert (draft.recommendation.target_instance_type, draft.recommendation.target_count) == ("inf2.xlarge", 2)
    # and the planner judges the same move for the same workload
    plan_ctx = Context.load("us-east-1")
    intake = IntakeRequest.model_validate(INTAKE)
    inputs = resolve(intake.workloads[0], plan_ctx)
    option = Option(
        platform="inferentia",
        instance=target,
        count=2,
        monthly_cost=monthly_cost(catalog.price("inf2.xlarge") or Decimal(0), 2),
        effort=draft.effort,
        reason="the rule's target",
    )
    verdict, why = judge(inputs, option, plan_ctx)
    # Then the monthly saving, the porting cost and the break-even are the same figures
    assert verdict is not None, why
    assert current is not None and inputs.current == current
    assert cents(inputs.current_cost - option.monthly_cost) == draft.estimated_monthly_savings_usd
    assert verdict.port_cost == draft.evidence.porting_cost_usd == get_assumptions().porting_cost_usd(draft.effort)
    assert verdict.break_even == draft.break_even_months
