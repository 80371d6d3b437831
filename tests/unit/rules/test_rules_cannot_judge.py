"""Trustworthy telemetry (issue 25): an EKS GPU node idle in Container Insights is idle only when its other signals
agree; a GPU reading 0 while memory or requests say busy is "cannot judge" with the reason, never idle."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

from rules_factories import ctx, flat, profile

from chipwise.analyse.profiles import ResourceProfile
from chipwise.rules.builtin.cannot_judge import CannotJudge, CannotJudgeParams
from chipwise.rules.builtin.gpu_idle import GpuIdle, GpuIdleParams

IDLE = GpuIdle(GpuIdleParams())
CANNOT = CannotJudge(CannotJudgeParams())


def _eks_node(**signals: Any) -> ResourceProfile:
    return profile(
        "gpu-node",
        instance_type="g5.12xlarge",
        rate="5.672",
        gpu_util=flat(0.0),
        gpu_source="ContainerInsights",
        **signals,
    )


def test_an_eks_gpu_node_idle_in_container_insights_only_gets_an_idle_finding() -> None:
    # Given an EKS g5.12xlarge ($5.672/h) whose only GPU source is Container Insights: GPUs at 0 %, frame buffer
    # at 0 %, no pod holding a GPU
    node = _eks_node(
        gpu_memory_util=flat(0.0),
        gpu_memory_source="ContainerInsights",
        gpus_requested=flat(0.0),
        gpu_limit=flat(4.0),
        gpu_power_watts=flat(21.0),
    )
    # When the rules run
    draft = IDLE.evaluate(node, ctx())
    # Then gpu_idle stops it for its whole cost: 5.672 x 730 = $4,140.56, on two agreeing signals and more
    assert draft is not None
    assert draft.recommendation.action == "stop"
    assert draft.estimated_monthly_savings_usd == Decimal("4140.56")
    assert draft.signals_used == ("gpu_utilization", "gpu_memory_used", "gpus_requested")
    assert draft.evidence.gpu_source == "ContainerInsights"
    assert draft.evidence.gpu_power_max_watts == 21.0
    assert CANNOT.evaluate(node, ctx()) is None


def test_a_gpu_reading_zero_while_memory_and_pods_say_busy_is_not_idle_but_cannot_be_judged() -> None:
    # Given the same node whose GPUs read 0 % while 70 % of the frame buffer is used and pods hold 4 GPUs
    node = _eks_node(
        gpu_memory_util=flat(70.0),
        gpu_memory_source="ContainerInsights",
        gpus_requested=flat(4.0),
        gpu_limit=flat(4.0),
    )
    # When the rules run
    # Then no idle finding; cannot_judge names the disagreement, claims no saving and names the fix
    assert IDLE.evaluate(node, ctx()) is None
    draft = CANNOT.evaluate(node, ctx())
    assert draft is not None
    assert draft.estimated_monthly_savings_usd == Decimal("0.00")
    assert draft.monthly_cost_usd == Decimal("4140.56")
    assert draft.evidence.verdict == "cannot_judge"
    assert draft.evidence.reason is not None
    assert "GPU memory in use (up to 70 %" in draft.evidence.reason
    assert "running pods hold GPUs (up to 4 requested)" in draft.evidence.reason
    assert draft.evidence.fix is not None and "DCGM" in draft.evidence.fix


def test_memory_alone_saying_busy_is_enough_to_withhold_idle() -> None:
    node = _eks_node(gpu_memory_util=flat(35.0), gpu_memory_source="ContainerInsights")
    assert IDLE.evaluate(node, ctx()) is None
    draft = CANNOT.evaluate(node, ctx())
    assert draft is not None and draft.evidence.reason is not None
    assert "running pods" not in draft.evidence.reason


def test_a_node_with_utilisation_only_is_judged_on_it() -> None:
    # Given an EKS node publishing only node_gpu_utilization (no second signal exists)
    node = _eks_node()
    # Then it is idle (one signal, nothing contradicts it) and nothing is left unjudged
    assert IDLE.evaluate(node, ctx()) is not None
    assert CANNOT.evaluate(node, ctx()) is None


def test_an_endpoint_at_zero_gpu_that_still_serves_requests_cannot_be_judged() -> None:
    # Given an ml.g5.xlarge endpoint whose GPU reads 0.2 % while 300 requests arrive every hour
    endpoint = profile(
        "chat",
        kind="sagemaker_endpoint",
        instance_type="ml.g5.xlarge",
        rate="1.41",
        gpu_util=flat(0.2),
        invocations=flat(300.0),
    )
    assert IDLE.evaluate(endpoint, ctx()) is None
    draft = CANNOT.evaluate(endpoint, ctx())
    assert draft is not None and draft.evidence.reason is not None
    assert "requests kept arriving" in draft.evidence.reason
    assert draft.signals_used == ("gpu_utilization", "invocations")


def test_an_idle_endpoint_holding_its_model_in_memory_is_still_idle() -> None:
    # Given an endpoint with no requests whose loaded model holds 55 % of GPU memory (SageMaker's own metric)
    endpoint = profile(
        "vision",
        kind="sagemaker_endpoint",
        instance_type="ml.g5.xlarge",
        rate="1.41",
        gpu_util=flat(0.4),
        gpu_memory_util=flat(55.0),
        gpu_memory_source="/aws/sagemaker/Endpoints",
    )
    # Then requests are its second signal and they agree: idle
    assert IDLE.evaluate(endpoint, ctx()) is not None
    assert CANNOT.evaluate(endpoint, ctx()) is None


def test_an_inference_component_on_inferentia_says_its_share_is_undocumented() -> None:
    # Given a live inference component on ml.inf2.xlarge whose share could not be computed (no billed instances)
    component = profile(
        "ep/ic",
        kind="sagemaker_inference_component",
        instance_type="ml.inf2.xlarge",
        component_name="ic",
        endpoint_name="ep",
        invocations=flat(10.0),
    )
    assert component.billed_count is None
    # When the rule runs
    draft = CANNOT.evaluate(component, ctx())
    # Then it cannot be judged, and the reason says what the API reference leaves undocumented; no cost is claimed
    assert draft is not None and draft.evidence.reason is not None
    assert "NumberOfAcceleratorDevicesRequired" in draft.evidence.reason
    assert "devices or NeuronCores" in draft.evidence.reason
    assert draft.monthly_cost_usd == draft.estimated_monthly_savings_usd == Decimal("0.00")
