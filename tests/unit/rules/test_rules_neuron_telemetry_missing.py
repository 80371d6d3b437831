"""neuron_telemetry_missing: an inf/trn resource with no Neuron metrics gets "install the agent", no saving."""

from __future__ import annotations

from decimal import Decimal

from rules_factories import ctx, flat, profile

from chipwise.analyse.metric_keys import EKS_NEURONCORE, NEURON_CORE, NEURON_MONITOR
from chipwise.analyse.profiles import Coverage
from chipwise.rules.builtin.neuron_telemetry_missing import NeuronTelemetryMissing, NeuronTelemetryMissingParams

RULE = NeuronTelemetryMissing(NeuronTelemetryMissingParams())
MISSING = {NEURON_CORE: Coverage(False, 0), NEURON_MONITOR: Coverage(False, 0)}


def test_a_busy_endpoint_without_neuron_metrics_is_asked_for_the_agent() -> None:
    # Given a busy ml.inf2.xlarge endpoint ($0.99/h) whose Neuron metrics do not exist
    endpoint = profile(
        "classifier",
        kind="sagemaker_endpoint",
        instance_type="ml.inf2.xlarge",
        rate="0.99",
        invocations=flat(115_000.0),
        cpu_util=flat(140.0),
        coverage=MISSING,
    )
    # When the rule runs
    draft = RULE.evaluate(endpoint, ctx())
    # Then it recommends the agent, claims no saving and shows the spend it cannot judge
    assert draft is not None
    assert draft.recommendation.action == "enable_telemetry"
    assert draft.estimated_monthly_savings_usd == Decimal("0.00")
    assert draft.monthly_cost_usd == Decimal("722.70")
    assert draft.evidence.neuron_sources_checked == 2
    assert "neuroncore_utilization" in draft.signals_missing


def test_any_neuron_source_with_data_counts_as_telemetry() -> None:
    # Given an EKS node publishing Container Insights NeuronCore metrics only, and one with Neuron data
    eks = profile("eks", coverage={**MISSING, EKS_NEURONCORE: Coverage(True, 336)})
    reporting = profile("reporting", neuron_util=flat(60.0))
    # Then neither is missing telemetry
    assert RULE.evaluate(eks, ctx()) is None
    assert RULE.evaluate(reporting, ctx()) is None


def test_unchecked_telemetry_is_not_missing_telemetry() -> None:
    # Given an instance with no coverage rows at all (the metrics stage did not run)
    unknown = profile("unknown", coverage={})
    # Then nothing is claimed
    assert RULE.evaluate(unknown, ctx()) is None


def test_gpus_training_jobs_and_new_resources_are_out_of_scope() -> None:
    # Given a GPU instance, a Trainium training job and an inf2 instance up for 10 hours, none with Neuron data
    gpu = profile("gpu", instance_type="g5.xlarge", coverage=MISSING)
    job = profile("job", kind="sagemaker_training_job", instance_type="ml.trn1.32xlarge", coverage=MISSING)
    fresh = profile("fresh", coverage=MISSING, run_hours=10)
    # Then none is reported
    for resource in (gpu, job, fresh):
        assert RULE.evaluate(resource, ctx()) is None
