"""inferentia_underutilized: p95 NeuronCore under 30 % -> the cheapest size (or count) that holds the model and
covers the busy cores, each with headroom (memory x1.2, cores x1.3 from assumptions.json)."""

from __future__ import annotations

from decimal import Decimal

from rules_factories import GIB, ctx, flat, profile

from chipwise.analyse.metric_keys import NEURON_CORE
from chipwise.analyse.profiles import Coverage
from chipwise.rules.builtin.inferentia_underutilized import InferentiaUnderutilized, InferentiaUnderutilizedParams

RULE = InferentiaUnderutilized(InferentiaUnderutilizedParams())


def test_an_8b_model_on_an_inf2_48xlarge_endpoint_moves_to_a_24xlarge() -> None:
    # Given an ml.inf2.48xlarge ($15.58/h) at 12 % busiest-core, 10 % mean over its 24 cores, 40 GiB used
    endpoint = profile(
        "summarizer",
        kind="sagemaker_endpoint",
        instance_type="ml.inf2.48xlarge",
        rate="15.58",
        neuron_util=flat(12.0),
        neuron_util_avg=flat(10.0),
        neuron_memory_bytes=flat(40 * GIB),
        invocations=flat(10_800.0),
    )
    # When the rule runs
    draft = RULE.evaluate(endpoint, ctx())
    # Then: memory 40 x 1.2 = 48 GiB (more than the 32 GiB sizes), cores 24 x 10 % x 1.3 = 3.12 -> one
    # ml.inf2.24xlarge at $7.79/h: 11,373.40 - 5,686.70 = $5,686.70 a month; porting 1 week x $4,000
    assert draft is not None
    assert draft.recommendation.action == "rightsize"
    assert draft.recommendation.target_instance_type == "ml.inf2.24xlarge"
    assert draft.recommendation.target_count == 1
    assert draft.monthly_cost_usd == Decimal("11373.40")
    assert draft.estimated_monthly_savings_usd == Decimal("5686.70")
    assert draft.break_even_months == 0.8  # 4,000 / 5,686.70 = 0.7034, rounded up
    assert draft.confidence == "high"
    assert draft.evidence.required_memory_gib == 48.0
    assert draft.evidence.required_cores == 3.12


def test_a_24xlarge_instance_shrinks_to_one_xlarge() -> None:
    # Given an inf2.24xlarge ($6.49063/h) using 12 cores at 12 % mean (p95) with 18 GiB of model
    instance = profile(
        "underused",
        instance_type="inf2.24xlarge",
        rate="6.49063",
        neuron_util=flat(15.0),
        neuron_util_avg=flat(12.0),
        neuron_cores_in_use=12,
        neuron_memory_bytes=flat(18 * GIB),
    )
    # When the rule runs
    draft = RULE.evaluate(instance, ctx())
    # Then 12 x 12 % x 1.3 = 1.872 cores and 21.6 GiB fit one inf2.xlarge ($0.7582/h):
    # 4,738.16 - 553.49 = $4,184.67 a month
    assert draft is not None
    assert (draft.recommendation.target_instance_type, draft.recommendation.target_count) == ("inf2.xlarge", 1)
    assert draft.estimated_monthly_savings_usd == Decimal("4184.67")


def test_more_busy_cores_take_more_small_instances() -> None:
    # Given the same instance at 20 % mean: 12 x 20 % x 1.3 = 3.12 cores
    instance = profile(
        "underused",
        instance_type="inf2.24xlarge",
        rate="6.49063",
        neuron_util=flat(25.0),
        neuron_util_avg=flat(20.0),
        neuron_cores_in_use=12,
        neuron_memory_bytes=flat(18 * GIB),
    )
    # When the rule runs
    draft = RULE.evaluate(instance, ctx())
    # Then two inf2.xlarge (2 cores each) are cheapest: 2 x 0.7582 x 730 = 1,106.97 -> saving $3,631.19
    assert draft is not None
    assert (draft.recommendation.target_instance_type, draft.recommendation.target_count) == ("inf2.xlarge", 2)
    assert draft.estimated_monthly_savings_usd == Decimal("3631.19")


def test_a_fleet_of_small_endpoints_needs_fewer_instances() -> None:
    # Given 4 x ml.inf2.xlarge ($0.99/h) at 8 % mean with 10 GiB of model
    endpoint = profile(
        "fleet",
        kind="sagemaker_endpoint",
        instance_type="ml.inf2.xlarge",
        count=4,
        rate="0.99",
        neuron_util=flat(10.0),
        neuron_util_avg=flat(8.0),
        neuron_memory_bytes=flat(10 * GIB),
        invocations=flat(3600.0),
    )
    # When the rule runs
    draft = RULE.evaluate(endpoint, ctx())
    # Then 2 x 4 x 8 % x 1.3 = 0.832 cores: one instance, 2,890.80 - 722.70 = $2,168.10 a month
    assert draft is not None
    assert (draft.recommendation.target_instance_type, draft.recommendation.target_count) == ("ml.inf2.xlarge", 1)
    assert draft.estimated_monthly_savings_usd == Decimal("2168.10")


def test_busy_or_full_capacity_is_left_alone() -> None:
    # Given one endpoint at 35 % p95 and one at 10 % whose 300 GiB model only fits its inf2.48xlarge
    busy = profile("busy", instance_type="inf2.xlarge", neuron_util=flat(35.0), neuron_memory_bytes=flat(8 * GIB))
    big = profile(
        "big",
        instance_type="inf2.48xlarge",
        rate="12.98127",
        neuron_util=flat(10.0),
        neuron_memory_bytes=flat(300 * GIB),
    )
    # Then neither has a smaller target
    assert RULE.evaluate(busy, ctx()) is None
    assert RULE.evaluate(big, ctx()) is None


def test_without_telemetry_traffic_far_below_capacity_fires_at_low_confidence() -> None:
    # Given 2 x ml.inf2.xlarge with no Neuron metrics, serving 360 requests an hour at 50 ms (DistilBERT)
    endpoint = profile(
        "sentiment",
        kind="sagemaker_endpoint",
        instance_type="ml.inf2.xlarge",
        count=2,
        rate="0.99",
        hints={"model_family": "distilbert", "hf_model_id": "distilbert-base-uncased"},
        invocations=flat(360.0),
        latency_us=flat(50_000.0),
        coverage={NEURON_CORE: Coverage(False, 0)},
    )
    # When the rule runs
    draft = RULE.evaluate(endpoint, ctx())
    # Then 0.1 req/s x 0.05 s / 2 instances = 0.25 % busy: one instance does, 1,445.40 - 722.70 = $722.70
    assert draft is not None
    assert draft.confidence == "low"
    assert draft.recommendation.target_count == 1
    assert draft.estimated_monthly_savings_usd == Decimal("722.70")
    assert draft.signals_missing == ("neuroncore_utilization",)
    assert draft.evidence.busy_cores_basis == "requests_x_latency"


def test_without_telemetry_a_busy_endpoint_is_not_guessed_idle() -> None:
    # Given an endpoint with no Neuron metrics serving 32 requests/s at 15 ms (48 % busy by Little's law)
    endpoint = profile(
        "classifier",
        kind="sagemaker_endpoint",
        instance_type="ml.inf2.xlarge",
        rate="0.99",
        hints={"model_family": "roberta"},
        invocations=flat(115_200.0),
        latency_us=flat(15_000.0),
        coverage={NEURON_CORE: Coverage(False, 0)},
    )
    # Then no rightsizing is proposed
    assert RULE.evaluate(endpoint, ctx()) is None


def test_small_savings_are_not_reported() -> None:
    # Given a 2-instance inf2.xlarge fleet that could drop one instance (1,106.97 - 553.49 = $553.48 a month)
    instance = profile(
        "pair",
        instance_type="inf2.xlarge",
        count=2,
        rate="0.7582",
        neuron_util=flat(5.0),
        neuron_memory_bytes=flat(4 * GIB),
    )
    # When the minimum saving is $600
    strict = InferentiaUnderutilized(InferentiaUnderutilizedParams(min_monthly_savings_usd=Decimal(600)))
    # Then only the default policy reports it
    assert RULE.evaluate(instance, ctx()) is not None
    assert strict.evaluate(instance, ctx()) is None
