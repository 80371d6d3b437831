"""inferentia_idle: zero invocations or NeuronCores under 1 % for a week; the whole cost saved."""

from __future__ import annotations

from decimal import Decimal

from rules_factories import HOURS, ctx, flat, hourly, profile

from chipwise.analyse.metric_keys import INVOCATIONS
from chipwise.analyse.profiles import Coverage
from chipwise.rules.builtin.inferentia_idle import InferentiaIdle, InferentiaIdleParams

RULE = InferentiaIdle(InferentiaIdleParams())


def test_an_endpoint_without_requests_for_the_window_is_deleted_for_its_whole_cost() -> None:
    # Given an ml.inf2.xlarge endpoint at $0.99/h with no invocation in 14 days and NeuronCores at 0.2 %
    endpoint = profile(
        "rerank", kind="sagemaker_endpoint", instance_type="ml.inf2.xlarge", rate="0.99", neuron_util=flat(0.2)
    )
    # When the rule runs
    draft = RULE.evaluate(endpoint, ctx())
    # Then it is idle for 14 days and deleting it saves 0.99 x 730 = $722.70 a month
    assert draft is not None
    assert draft.recommendation.action == "delete"
    assert draft.monthly_cost_usd == draft.estimated_monthly_savings_usd == Decimal("722.70")
    assert draft.confidence == "high"
    assert draft.evidence.idle_days == 14.0
    assert draft.evidence.invocations_in_window == 0
    assert set(draft.signals_used) == {"invocations", "neuroncore_utilization"}


def test_an_instance_whose_neuroncores_stayed_under_one_percent_is_stopped() -> None:
    # Given two inf2.xlarge instances at $0.7582/h whose busiest NeuronCore never passed 0.5 %
    instance = profile("dev-box", instance_type="inf2.xlarge", count=2, rate="0.7582", neuron_util=flat(0.5))
    # When the rule runs
    draft = RULE.evaluate(instance, ctx())
    # Then stopping them saves 2 x 0.7582 x 730 = $1,106.972 -> $1,106.97
    assert draft is not None
    assert draft.recommendation.action == "stop"
    assert draft.estimated_monthly_savings_usd == Decimal("1106.97")


def test_the_idle_period_is_counted_from_the_last_busy_hour() -> None:
    # Given an instance busy for 6 days, then under 1 % for the last 8 days
    series = hourly([50.0] * (6 * 24) + [0.3] * (8 * 24))
    instance = profile("was-busy", neuron_util=series)
    # When the rule runs with the default (7 days) and with 10 days
    draft = RULE.evaluate(instance, ctx())
    stricter = InferentiaIdle(InferentiaIdleParams(min_idle_days=10)).evaluate(instance, ctx())
    # Then it is idle for 8 days: enough for 7, not for 10
    assert draft is not None and draft.evidence.idle_days == 8.0
    assert stricter is None


def test_an_instance_without_neuron_telemetry_is_never_idle() -> None:
    # Given an inf1 instance with no Neuron metrics and CPU at 1 %
    instance = profile("legacy", instance_type="inf1.xlarge", cpu_util=flat(1.0))
    # When the rule runs
    # Then there is no idle finding (that is neuron_telemetry_missing's job)
    assert RULE.evaluate(instance, ctx()) is None


def test_an_endpoint_without_neuron_telemetry_is_idle_on_zero_invocations_alone() -> None:
    # Given an endpoint without Neuron metrics that had no invocation for 14 days
    endpoint = profile("quiet", kind="sagemaker_endpoint", instance_type="ml.inf1.xlarge", rate="0.2736")
    # When the rule runs
    draft = RULE.evaluate(endpoint, ctx())
    # Then it fires on the invocations (SageMaker counts every request) and says what was missing
    assert draft is not None
    assert draft.estimated_monthly_savings_usd == Decimal("199.73")  # 0.2736 x 730 = 199.728
    assert draft.signals_missing == ("neuroncore_utilization",)


def test_recent_requests_or_busy_cores_keep_an_endpoint_out() -> None:
    # Given one endpoint with requests 4 days ago, and one with no requests but busy NeuronCores
    recent = hourly([None] * (HOURS - 100) + [120.0] + [None] * 99)
    asked = profile(
        "asked", kind="sagemaker_endpoint", instance_type="ml.inf2.xlarge", invocations=recent, neuron_util=flat(0.1)
    )
    busy = profile("busy", kind="sagemaker_endpoint", instance_type="ml.inf2.xlarge", neuron_util=flat(40.0))
    # When the rule runs
    # Then neither is idle
    assert RULE.evaluate(asked, ctx()) is None
    assert RULE.evaluate(busy, ctx()) is None


def test_unknown_traffic_is_not_zero_traffic() -> None:
    # Given an endpoint whose Invocations metric was never collected (no coverage row) and no Neuron data
    endpoint = profile("unknown", kind="sagemaker_endpoint", instance_type="ml.inf2.xlarge", coverage={})
    # When the rule runs
    # Then nothing is claimed
    assert RULE.evaluate(endpoint, ctx()) is None


def test_stopped_or_non_inferentia_resources_are_out_of_scope() -> None:
    # Given a stopped idle inf2 instance and an idle trn1 instance
    stopped = profile("stopped", state="stopped", neuron_util=flat(0.0))
    trainium = profile("trn", instance_type="trn1.2xlarge", neuron_util=flat(0.0))
    # When the rule runs
    # Then neither is an Inferentia idle finding
    assert RULE.evaluate(stopped, ctx()) is None
    assert RULE.evaluate(trainium, ctx()) is None


def test_sparse_telemetry_lowers_the_confidence() -> None:
    # Given an instance idle for the whole window but with datapoints in only 200 of its 336 hours
    sparse = hourly([0.1 if i % 5 < 3 else None for i in range(HOURS)])
    assert sparse is not None and sparse.hours < 0.9 * HOURS
    instance = profile("sparse", neuron_util=sparse)
    # When the rule runs
    draft = RULE.evaluate(instance, ctx())
    # Then the finding stands at medium confidence
    assert draft is not None and draft.confidence == "medium"


def test_the_coverage_says_whether_traffic_exists() -> None:
    # Given an endpoint whose invocations metric exists with no datapoint (SageMaker omits zero hours)
    endpoint = profile(
        "zero", kind="sagemaker_endpoint", instance_type="ml.inf2.xlarge", coverage={INVOCATIONS: Coverage(True, 0)}
    )
    # When the rule runs
    # Then zero traffic is read from the coverage
    assert RULE.evaluate(endpoint, ctx()) is not None
