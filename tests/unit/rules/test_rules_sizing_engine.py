"""One sizing engine (chipwise.analyse.sizing): the founder's plan and the scan's rule size the same workload to
the same target, count and figures; and what the engine itself decides (memory fit, load, ties, software)."""

from __future__ import annotations

from datetime import UTC, datetime
from decimal import Decimal
from typing import Any

from rules_factories import ctx, flat, profile

from chipwise.analyse import sizing
from chipwise.catalog import get_assumptions, get_catalog
from chipwise.plan.context import Context
from chipwise.plan.inputs import resolve
from chipwise.plan.intake import IntakeRequest
from chipwise.plan.planner import build_plan
from chipwise.plan.serving import serving_need
from chipwise.rules.builtin.gpu_inference_portable import GpuInferencePortable, GpuInferencePortableParams

# 10 x g5.2xlarge serving Mistral-7B at 20 req/s each. The founder states 156 req/s: the load the scan sizes for
# when the GPUs are 60 % busy at p95 (6 busy A10Gs x the core headroom 1.3 = 7.8 A10G-equivalents = 156 / 20).
WORKLOAD: dict[str, Any] = {
    "name": "chat serving",
    "stage": "inference",
    "model_family": "mistral",
    "parameters_billion": 7,
    "traffic": "steady",
    "current_instance_type": "g5.2xlarge",
    "instance_count": 10,
    "hours_per_month": 730,
    "requests_per_day": 156 * 86400,
    "current_throughput_per_instance": 20,
}
INTAKE: dict[str, Any] = {
    "company": {"name": "Acme AI", "country": "US", "stage": "seed", "institutional_funding": True, "ai_first": True},
    "contact": {"name": "Ada Lovelace", "email": "ada@acme.example"},
    "aws": {"monthly_spend_usd": 40000, "region": "us-east-1"},
    "workloads": [WORKLOAD],
}


def _scanned() -> Any:
    rate = get_catalog().price("g5.2xlarge")
    return profile(
        "chat",
        kind="ec2_instance",
        instance_type="g5.2xlarge",
        count=10,
        rate=str(rate),
        hints={"model_family": "mistral", "hf_model_id": "mistralai/Mistral-7B-Instruct-v0.3", "workload": "inference"},
        gpu_util=flat(60.0),
        gpu_source="CWAgent",
    )


def test_the_planner_and_the_rule_size_one_workload_to_the_same_target_count_and_figures() -> None:
    # Given the workload as a scan sees it (a profile) and as a founder states it (the intake)
    draft = GpuInferencePortable(GpuInferencePortableParams()).evaluate(_scanned(), ctx())
    plan = build_plan(
        IntakeRequest.model_validate(INTAKE), plan_id="T" * 43, created_at=datetime(2026, 11, 22, tzinfo=UTC)
    )
    moved = plan.workloads[0]
    assert draft is not None
    # Then both size it to ceil(7.8 / 2 A10G-equivalents per inf2 chip) = 4 x inf2.xlarge (32 GiB holds
    # 7B x 2 bytes x 1.2 = 15.65 GiB)
    assert (draft.recommendation.target_instance_type, draft.recommendation.target_count) == ("inf2.xlarge", 4)
    assert (moved.recommended_instance_type, moved.recommended_count) == ("inf2.xlarge", 4)
    # and the same figures: $0.7582 x 4 x 730 = $2,213.94 against $1.212 x 10 x 730 = $8,847.60 today
    assert draft.evidence.target_monthly_usd == 2213.94
    assert moved.projected_monthly_cost_usd == Decimal("2213.94")
    assert draft.monthly_cost_usd == moved.current_monthly_cost_usd == Decimal("8847.60")
    assert draft.estimated_monthly_savings_usd == moved.monthly_savings_usd == Decimal("6633.66")
    assert draft.evidence.required_memory_gib == 15.65


def test_both_paths_hand_the_engine_the_same_need() -> None:
    # Given the planner's need for the stated workload
    plan_ctx = Context.load("us-east-1")
    need = serving_need(resolve(IntakeRequest.model_validate(INTAKE).workloads[0], plan_ctx), plan_ctx)
    # Then it is the scan's: 7.8 A10G-equivalents (6 busy GPUs x 1.3) and 15.65 GiB a replica
    assert need.a10g_units == Decimal("7.8")
    assert round(need.memory_gib, 2) == Decimal("15.65")
    # and the engine sizes it the same whichever path asks
    catalog, economics = get_catalog(), get_assumptions()
    fit = sizing.cheapest_fit(sizing.candidates(catalog, ("inf2",)), catalog, "us-east-1", need, economics)
    assert fit is not None and (fit.instance.name, fit.count) == ("inf2.xlarge", 4)


def test_memory_decides_the_size_and_load_the_count() -> None:
    # Given a replica that needs 40 GiB (more than inf2.xlarge's 32) and 3 A10G-equivalents of load
    catalog, economics = get_catalog(), get_assumptions()
    need = sizing.Need(memory_gib=Decimal(40), a10g_units=Decimal(3))
    fit = sizing.cheapest_fit(sizing.candidates(catalog, ("inf2",)), catalog, "us-east-1", need, economics)
    # Then the smallest inf2 with more memory (inf2.24xlarge, 6 chips, 192 GiB) carries it alone
    assert fit is not None and (fit.instance.name, fit.count) == ("inf2.24xlarge", 1)


def test_an_inferentia1_chip_counts_as_the_inf2_ratio_over_inf2s_gain() -> None:
    # Given the economics' ratios (inf2 = 2 A10G-equivalents a chip; inf2 up to 4x inf1)
    catalog, economics = get_catalog(), get_assumptions()
    inf1, g5 = catalog.require("inf1.xlarge"), catalog.require("g5.xlarge")
    # Then one inf1 chip is 2 / 4 = 0.5 A10G-equivalents, one g5 GPU is 1
    assert sizing.chip_units(inf1, economics) == Decimal("0.5")
    assert sizing.chip_units(g5, economics) == Decimal(1)


def test_the_software_path_comes_from_the_data_file() -> None:
    # Given inf2 serving and trn1 training
    serving = sizing.software("ml.inf2", "inference")
    training = sizing.software("trn1", "training")
    # Then each names its stack and status as neuron_software.json says; inf2 has no training stack
    assert serving is not None and serving.status == "maintenance" and serving.name.startswith("NxD Inference")
    assert training is not None and training.name.startswith("native PyTorch")
    assert sizing.software("inf2", "training") is None
    assert sizing.software("g5", "inference") is None


def test_a_training_cluster_is_one_instance_when_one_holds_it_else_the_largest_as_many_as_needed() -> None:
    # Given trn1 sizes (trn1.2xlarge 32 GiB, trn1.32xlarge 512 GiB)
    catalog = get_catalog()
    trn1 = catalog.family("trn1")
    # Then 143 GiB of training state (8B x 16 bytes x 1.2) fits one trn1.32xlarge
    one = sizing.memory_cluster(trn1, catalog, "us-east-1", Decimal(143))
    assert one is not None and (one.instance.name, one.count) == ("trn1.32xlarge", 1)
    # and 2,000 GiB takes ceil(2000 / 512) = 4 of them
    four = sizing.memory_cluster(trn1, catalog, "us-east-1", Decimal(2000))
    assert four is not None and (four.instance.name, four.count) == ("trn1.32xlarge", 4)
    assert four.hourly_usd == 4 * (catalog.price("trn1.32xlarge") or Decimal(0))
