"""Trustworthy telemetry: an idle verdict rests on two agreeing signals where two exist.

NVIDIA's DCGM can report 0 % GPU utilisation under load (dcgm-exporter issue 662), so a GPU that reads idle is
called idle only when the other signals the resource publishes agree over the same span: requests (SageMaker
serving kinds), and on an EKS node the frame buffer its processes hold (``node_gpu_memory_utilization``) and the
GPUs its running pods hold (``node_gpu_usage_total``). A disagreement is not idle: it is a "cannot judge" outcome
with the reason (rule ``cannot_judge``). A resource with a single signal is judged on it, as before.

What is not a second signal here: the frame buffer of a SageMaker endpoint or inference component (a loaded model
holds it whether or not anyone calls it; their requests are the second signal), and the CloudWatch agent's
``nvidia_smi_utilization_memory`` (not read into profiles). Power draw is evidence only: its idle level differs by
GPU model and no public baseline is in the catalog.
"""

from __future__ import annotations

from dataclasses import dataclass

from pydantic import Field

from chipwise.analyse.metric_keys import CONTAINER_INSIGHTS_SOURCES
from chipwise.analyse.profiles import ResourceProfile
from chipwise.models.common import SERVING_KINDS
from chipwise.rules.base import IdleParams, Percent
from chipwise.rules.traffic import hours_without_traffic, idle_hours

GPU_KINDS = (*SERVING_KINDS, "ec2_instance")
ANY_GPU_HELD = 0.5  # node_gpu_usage_total is a count of GPUs: an hour with half a GPU held on average is held


@dataclass(frozen=True)
class GpuIdleReading:
    """What a GPU resource's signals say over the judged span: the hours its busiest GPU stayed under the
    threshold, and why another signal contradicts that (None: nothing contradicts it)."""

    idle_hours: float
    disagreement: str | None
    second_signals: tuple[str, ...]


class GpuIdleThresholds(IdleParams):
    """When a GPU reads idle: rule gpu_idle's thresholds, which rule cannot_judge reads the same GPU with."""

    max_gpu_utilization_pct: Percent = Field(
        5.0, description="Busiest-GPU utilisation below which an hour counts as idle."
    )
    max_gpu_memory_used_pct: Percent = Field(
        10.0,
        description="GPU memory used (EKS nodes, Container Insights) at or above which the GPU counts as held.",
    )


def read_gpu_idle(profile: ResourceProfile, params: GpuIdleThresholds) -> GpuIdleReading | None:
    """The reading of a live NVIDIA resource whose GPU utilisation stayed under ``max_gpu_utilization_pct`` for at
    least ``min_idle_days`` with enough datapoints (None otherwise: not idle, or no GPU telemetry to judge)."""
    if profile.platform != "nvidia" or profile.kind not in GPU_KINDS or not profile.live:
        return None
    max_gpu_pct, max_memory_used_pct = params.max_gpu_utilization_pct, params.max_gpu_memory_used_pct
    min_hours, min_telemetry_share = params.min_idle_hours, params.min_telemetry_share
    gpu = profile.signals.gpu_util
    if gpu is None or gpu.hours < min_telemetry_share * min_hours:
        return None
    idle = idle_hours(profile, gpu, max_gpu_pct)
    if idle is None or idle < min_hours:
        return None
    reasons: list[str] = []
    used: list[str] = []
    if profile.kind in SERVING_KINDS:
        quiet = hours_without_traffic(profile)
        if quiet is not None:
            used.append("invocations")
            if quiet < min_hours:
                reasons.append(
                    f"requests kept arriving ({quiet / 24:.1f} days without any, under the {min_hours / 24:g} judged)"
                )
    signals = profile.signals
    memory = signals.gpu_memory_util if signals.gpu_memory_source in CONTAINER_INSIGHTS_SOURCES else None
    if memory is not None:
        used.append("gpu_memory_used")
        held = memory.hours_below_since(max_memory_used_pct, profile.window_end, profile.active_since)
        if held < min_hours:
            reasons.append(
                f"GPU memory in use (up to {memory.maximum:.0f} % of the frame buffer, over "
                f"{max_memory_used_pct:g} % within the judged span)"
            )
    pods = signals.gpus_requested
    if pods is not None:
        used.append("gpus_requested")
        free = pods.hours_below_since(ANY_GPU_HELD, profile.window_end, profile.active_since)
        if free < min_hours:
            reasons.append(f"running pods hold GPUs (up to {pods.maximum:g} requested)")
    disagreement = None
    if reasons:
        disagreement = (
            f"GPU utilisation read under {max_gpu_pct:g} % for {idle / 24:.1f} days but "
            + " and ".join(reasons)
            + ": the utilisation metric may be misreported (DCGM can read 0 % under load), so idleness is not "
            "claimed"
        )
    return GpuIdleReading(idle, disagreement, tuple(used))
