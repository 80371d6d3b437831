"""Builders for benchmark tests: findings, resources, parameters and results, with realistic defaults.

The default finding is the demo's ``chat-mistral-g5``: Mistral-7B on 4 × ml.g5.2xlarge, recommended to move to
ml.inf2.xlarge. Objects are built in memory; integration tests add them to a session.
"""

from __future__ import annotations

import json
import uuid
from datetime import UTC, datetime
from decimal import Decimal
from pathlib import Path
from typing import Any

from chipwise.models.benchmark import (
    BenchmarkParameters,
    BenchmarkResult,
    Measurement,
    result_uri,
)
from chipwise.store.tables import Account, Finding, Resource

EVENTS = Path(__file__).resolve().parents[3] / "events"
ACCOUNT_ID = "123456789012"
REGION = "us-east-1"
BUCKET = "chipwise-artifacts"
STARTED = datetime(2026, 11, 22, 7, 0, tzinfo=UTC)


def account(account_id: str = ACCOUNT_ID) -> Account:
    return Account(account_id=account_id, name="demo")


def endpoint_arn(name: str) -> str:
    return f"arn:aws:sagemaker:{REGION}:{ACCOUNT_ID}:endpoint/{name}"


def resource(name: str = "chat-mistral-g5", **overrides: Any) -> Resource:
    values: dict[str, Any] = {
        "account_id": ACCOUNT_ID,
        "region": REGION,
        "arn": endpoint_arn(name),
        "kind": "sagemaker_endpoint",
        "name": name,
        "instance_type": "ml.g5.2xlarge",
        "instance_count": 4,
        "platform": "nvidia",
        "hints": {
            "model_family": "mistral",
            "hf_model_id": "mistralai/Mistral-7B-Instruct-v0.3",
            "serving_stack": "tgi",
            "workload": "inference",
        },
        "details": {"environment": {"HF_MODEL_ID": "mistralai/Mistral-7B-Instruct-v0.3", "SM_NUM_GPUS": "1"}},
    }
    values.update(overrides)
    return Resource(**values)


def finding(name: str = "chat-mistral-g5", **overrides: Any) -> Finding:
    """An open gpu_inference_portable finding: 4 × ml.g5.2xlarge ($1.515/h) at 22 req/s, p95 70 ms."""
    values: dict[str, Any] = {
        "id": str(uuid.uuid4()),
        "account_id": ACCOUNT_ID,
        "region": REGION,
        "rule_id": "gpu_inference_portable",
        "resource_arn": endpoint_arn(name),
        "resource_kind": "sagemaker_endpoint",
        "resource_name": name,
        "instance_type": "ml.g5.2xlarge",
        "instance_count": 4,
        "monthly_cost_usd": Decimal("4423.80"),  # 4 × 1.515 × 730
        "estimated_monthly_savings_usd": Decimal("2978.40"),
        "measured_monthly_savings_usd": None,
        "recommendation": {
            "action": "migrate",
            "target_platform": "inferentia",
            "target_instance_type": "ml.inf2.xlarge",
            "target_count": 2,
        },
        "confidence": "medium",
        "effort": "days",
        "summary": "Mistral-7B on 4 GPUs could be served by 2 Inferentia2 instances.",
        "evidence": {"requests_per_hour": 79200, "peak_requests_per_hour": 95040, "latency_p95_ms": 70},
        "status": "open",
    }
    values.update(overrides)
    return Finding(**values)


def training_finding(name: str = "llama3-8b-finetune", **overrides: Any) -> Finding:
    """A gpu_training_portable finding: a LoRA fine-tune on 2 × p4d.24xlarge, 100 h a month."""
    values: dict[str, Any] = {
        "rule_id": "gpu_training_portable",
        "resource_arn": f"arn:aws:sagemaker:{REGION}:{ACCOUNT_ID}:training-job/{name}",
        "resource_kind": "sagemaker_training_job",
        "instance_type": "ml.p4d.24xlarge",
        "instance_count": 2,
        "monthly_cost_usd": Decimal("5000.00"),
        "estimated_monthly_savings_usd": Decimal("2000.00"),
        "recommendation": {
            "action": "migrate",
            "target_platform": "trainium",
            "target_instance_type": "ml.trn1.32xlarge",
            "target_count": 2,
        },
        "evidence": {"run_hours": 100},
    }
    values.update(overrides)
    return finding(name, **values)


def parameters(finding_id: str = "f-1", **overrides: Any) -> BenchmarkParameters:
    run_id = overrides.pop("run_id", str(uuid.uuid4()))
    values: dict[str, Any] = {
        "run_id": run_id,
        "finding_id": finding_id,
        "role": "target",
        "task": "text-generation",
        "model_id": "mistralai/Mistral-7B-Instruct-v0.3",
        "model_family": "mistral",
        "instance_type": "inf2.xlarge",
        "priced_as": "ml.inf2.xlarge",
        "runner": "optimum-neuron",
        "batch_sizes": (1, 4, 8, 16),
        "sequence_lengths": (512,),
        "output_tokens": 128,
        "neuron_cores": 2,
        "latency_target_ms": Decimal("84"),
        "iterations": 20,
        "result_uri": result_uri(BUCKET, run_id),
    }
    values.update(overrides)
    return BenchmarkParameters(**values)


def measurement(
    batch: int, rps: str, p95: str, *, tps: str | None = None, seq: int = 512, out: int = 128, p50: str | None = None
) -> Measurement:
    return Measurement(
        batch_size=batch,
        sequence_length=seq,
        output_tokens=out,
        requests_per_second=Decimal(rps),
        tokens_per_second=Decimal(tps) if tps else None,
        latency_p50_ms=Decimal(p50 or p95),
        latency_p95_ms=Decimal(p95),
        iterations=20,
    )


def result(params: BenchmarkParameters, measurements: list[Measurement] | None = None) -> BenchmarkResult:
    """A result for ``params``: by default four batch sizes, the larger ones above an 84 ms p95 limit."""
    return BenchmarkResult(
        schema_version=1,
        run_id=params.run_id,
        finding_id=params.finding_id,
        role=params.role,
        task=params.task,
        model_id=params.model_id,
        instance_type=params.instance_type,
        runner=params.runner,
        sdk_versions={"neuronx-cc": "2.15.128", "optimum-neuron": "0.0.27"},
        started_at=STARTED,
        finished_at=STARTED.replace(minute=23),
        compile_time_seconds=Decimal("412.5"),
        measurements=measurements
        or [
            measurement(1, "14.2", "71.0", tps="1817.6"),
            measurement(4, "40.5", "80.2", tps="5184.0"),
            measurement(8, "61.0", "131.0", tps="7808.0"),
            measurement(16, "88.0", "182.0", tps="11264.0"),
        ],
    )


def sample_event(name: str, **overrides: Any) -> dict[str, Any]:
    """A sample event from events/ (``benchmark_result/succeeded``), top-level keys overridden."""
    event: dict[str, Any] = json.loads((EVENTS / f"{name}.json").read_text(encoding="utf-8"))
    event.update(overrides)
    return event
