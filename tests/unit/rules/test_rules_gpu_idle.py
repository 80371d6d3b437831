"""gpu_idle: the busiest GPU under 5 % for a week; the whole cost saved; no GPU telemetry, no finding."""

from __future__ import annotations

from decimal import Decimal

from rules_factories import HOURS, ctx, flat, hourly, profile

from chipwise.rules.builtin.gpu_idle import GpuIdle, GpuIdleParams

RULE = GpuIdle(GpuIdleParams())


def test_an_idle_p4d_is_stopped_for_its_whole_cost() -> None:
    # Given a p4d.24xlarge at the catalog's $21.957642/h whose busiest GPU peaked at 0.9 % for 14 days
    instance = profile(
        "research",
        instance_type="p4d.24xlarge",
        rate="21.957642",
        rate_source="catalog",
        gpu_util=hourly([0.4, 0.9] * (HOURS // 2)),
        gpu_source="CWAgent",
    )
    # When the rule runs
    draft = RULE.evaluate(instance, ctx())
    # Then stopping it saves 21.957642 x 730 = $16,029.07866 -> $16,029.08 a month
    assert draft is not None
    assert draft.recommendation.action == "stop"
    assert draft.estimated_monthly_savings_usd == draft.monthly_cost_usd == Decimal("16029.08")
    assert draft.evidence.gpu_max_pct == 0.9
    assert draft.confidence == "high"


def test_an_idle_gpu_endpoint_without_requests_is_deleted() -> None:
    # Given an ml.g5.xlarge endpoint ($1.41/h) with no requests and its GPU at 0.4 %
    endpoint = profile(
        "vision", kind="sagemaker_endpoint", instance_type="ml.g5.xlarge", rate="1.41", gpu_util=flat(0.4)
    )
    # When the rule runs
    draft = RULE.evaluate(endpoint, ctx())
    # Then deleting it saves 1.41 x 730 = $1,029.30
    assert draft is not None
    assert draft.recommendation.action == "delete"
    assert draft.estimated_monthly_savings_usd == Decimal("1029.30")
    assert "invocations" in draft.signals_used


def test_one_busy_hour_in_the_last_week_keeps_it_out() -> None:
    # Given a GPU idle except for one hour at 60 % three days ago
    values = [1.0] * HOURS
    values[HOURS - 72] = 60.0
    instance = profile("burst", instance_type="g5.xlarge", gpu_util=hourly(values))
    # When the rule runs
    # Then it is not idle (3 days since the busy hour)
    assert RULE.evaluate(instance, ctx()) is None


def test_an_endpoint_still_answering_requests_is_not_idle() -> None:
    # Given a GPU endpoint under 5 % GPU that still serves requests every hour (a CPU-bound model)
    endpoint = profile(
        "cpu-bound",
        kind="sagemaker_endpoint",
        instance_type="ml.g5.xlarge",
        gpu_util=flat(2.0),
        invocations=flat(500.0),
    )
    # When the rule runs
    # Then it is not called idle
    assert RULE.evaluate(endpoint, ctx()) is None


def test_missing_gpu_telemetry_is_never_idle() -> None:
    # Given a GPU instance with only CPU metrics, at 1 % CPU
    instance = profile("no-agent", instance_type="g5.xlarge", cpu_util=flat(1.0))
    # When the rule runs
    # Then nothing fires
    assert RULE.evaluate(instance, ctx()) is None


def test_the_threshold_comes_from_the_params() -> None:
    # Given a GPU steady at 4 %
    instance = profile("low", instance_type="g6.xlarge", gpu_util=flat(4.0))
    # When the rule runs with the default 5 % and with 3 %
    # Then only the default calls it idle
    assert RULE.evaluate(instance, ctx()) is not None
    assert GpuIdle(GpuIdleParams(max_gpu_utilization_pct=3)).evaluate(instance, ctx()) is None


def test_non_gpu_and_stopped_resources_are_out_of_scope() -> None:
    # Given an idle Inferentia instance and a stopped idle GPU instance
    inferentia = profile("inf", instance_type="inf2.xlarge", gpu_util=flat(0.0))
    stopped = profile("stopped", instance_type="g5.xlarge", state="stopped", gpu_util=flat(0.0))
    # Then neither is a GPU idle finding
    assert RULE.evaluate(inferentia, ctx()) is None
    assert RULE.evaluate(stopped, ctx()) is None
