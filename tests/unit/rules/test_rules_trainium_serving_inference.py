"""trainium_serving_inference: trn capacity serving inference -> the inf2 size that holds the model and covers the
busy NeuronCores (NeuronCore-v2 on both), lower confidence when a Savings Plan covers the trn hours."""

from __future__ import annotations

from decimal import Decimal

from rules_factories import GIB, HOURS, ctx, flat, hourly, profile

from chipwise.rules.builtin.trainium_serving_inference import (
    TrainiumServingInference,
    TrainiumServingInferenceParams,
)

RULE = TrainiumServingInference(TrainiumServingInferenceParams())
TAGGED = {"workload": "inference", "model_family": "llama", "sources": {"workload": "tag"}}


def test_a_tagged_trn1_32xlarge_moves_to_one_inf2_24xlarge() -> None:
    # Given a trn1.32xlarge ($21.50/h) tagged inference: 32 cores at 20 % mean, 140 GiB of device memory
    instance = profile(
        "fleet-a",
        instance_type="trn1.32xlarge",
        rate="21.50",
        hints=TAGGED,
        neuron_util=flat(30.0),
        neuron_util_avg=flat(20.0),
        neuron_cores_in_use=32,
        neuron_memory_bytes=flat(140 * GIB),
        neuron_executions=flat(32_400.0),
    )
    # When the rule runs
    draft = RULE.evaluate(instance, ctx())
    # Then 168 GiB and 32 x 20 % x 1.3 = 8.32 cores fit one inf2.24xlarge ($6.49063/h):
    # 15,695.00 - 4,738.16 = $10,956.84 a month (the example)
    assert draft is not None
    assert draft.recommendation.model_dump() == {
        "action": "migrate",
        "target_platform": "inferentia",
        "target_instance_type": "inf2.24xlarge",
        "target_count": 1,
        "excluded_from_totals": None,
        "software_path": "NxD Inference / Optimum Neuron on inf2 (maintenance mode since Neuron 2.31 (critical fixes "
        "only, no new models))",
    }
    assert "the same stack trn1 serving uses" in draft.summary
    assert draft.monthly_cost_usd == Decimal("15695.00")
    assert draft.estimated_monthly_savings_usd == Decimal("10956.84")
    assert draft.confidence == "high"
    assert draft.evidence.workload_basis == "workload_tag"


def test_a_trn1_endpoint_with_busier_cores_needs_an_inf2_48xlarge() -> None:
    # Given an ml.trn1.32xlarge endpoint ($25.80/h): 32 cores at 40 % mean, 150 GiB of model
    endpoint = profile(
        "llama-70b",
        kind="sagemaker_endpoint",
        instance_type="ml.trn1.32xlarge",
        rate="25.80",
        neuron_util=flat(50.0),
        neuron_util_avg=flat(40.0),
        neuron_memory_bytes=flat(150 * GIB),
        invocations=flat(21_600.0),
    )
    # When the rule runs
    draft = RULE.evaluate(endpoint, ctx())
    # Then 16.64 cores: 2 x ml.inf2.24xlarge and 1 x ml.inf2.48xlarge both cost $15.58/h; fewer instances win.
    # 18,834.00 - 11,373.40 = $7,460.60 a month; break-even 4,000 / 7,460.60 = 0.54 months
    assert draft is not None
    assert (draft.recommendation.target_instance_type, draft.recommendation.target_count) == ("ml.inf2.48xlarge", 1)
    assert draft.estimated_monthly_savings_usd == Decimal("7460.60")
    assert draft.break_even_months == 0.6


def test_an_untagged_steady_instance_under_a_savings_plan_is_inferred_at_lower_confidence() -> None:
    # Given an untagged trn1.2xlarge whose hours a Savings Plan covers (effective $0.9675/h, 28 % below on-demand),
    # executing every hour with 16 GiB of its 32 GiB used, cores at 30 % mean
    instance = profile(
        "sp",
        instance_type="trn1.2xlarge",
        rate="0.9675",
        commitment_discount="0.28",
        neuron_util=flat(38.0),
        neuron_util_avg=flat(30.0),
        neuron_memory_bytes=flat(16 * GIB),
        neuron_executions=flat(18_000.0),
    )
    # When the rule runs
    draft = RULE.evaluate(instance, ctx())
    # Then one inf2.xlarge: 706.28 (0.9675 x 730 = 706.275) - 553.49 = $152.79, confidence medium -> low
    assert draft is not None
    assert (draft.recommendation.target_instance_type, draft.recommendation.target_count) == ("inf2.xlarge", 1)
    assert draft.estimated_monthly_savings_usd == Decimal("152.79")
    assert draft.evidence.workload_basis == "steady_executions"
    assert draft.evidence.commitment_covered is True
    assert draft.confidence == "low"
    assert "Savings Plan" in draft.summary


def test_training_looking_or_unsteady_instances_are_left_alone() -> None:
    # Given a tagged training node, an untagged node holding 420 of 512 GiB (optimizer state), and an untagged
    # node that executes only half the hours
    training = profile(
        "train",
        instance_type="trn1.32xlarge",
        hints={"workload": "training"},
        neuron_util=flat(88.0),
        neuron_memory_bytes=flat(420 * GIB),
        neuron_executions=flat(7200.0),
    )
    heavy = profile(
        "heavy",
        instance_type="trn1.32xlarge",
        neuron_util=flat(88.0),
        neuron_memory_bytes=flat(420 * GIB),
        neuron_executions=flat(7200.0),
    )
    sporadic = profile(
        "sporadic",
        instance_type="trn1.2xlarge",
        neuron_util=flat(30.0),
        neuron_memory_bytes=flat(8 * GIB),
        neuron_executions=hourly([100.0 if i % 2 else None for i in range(HOURS)]),
    )
    # Then none is taken for an inference server
    for resource in (training, heavy, sporadic):
        assert RULE.evaluate(resource, ctx()) is None


def test_no_finding_when_inferentia_would_cost_more() -> None:
    # Given a trn1.2xlarge at on-demand $1.34375/h with both cores 80 % busy: 2.08 cores need 2 x inf2.xlarge
    instance = profile(
        "hot",
        instance_type="trn1.2xlarge",
        rate="1.34375",
        hints=TAGGED,
        neuron_util=flat(90.0),
        neuron_util_avg=flat(80.0),
        neuron_memory_bytes=flat(16 * GIB),
    )
    # Then $1.5164/h is no saving
    assert RULE.evaluate(instance, ctx()) is None
