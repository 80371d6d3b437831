"""gpu_idle: a GPU instance or endpoint whose busiest GPU stayed under 5 % for a week.

The GPU signal is the maximum across the instance's GPUs (CloudWatch agent), so one busy GPU of eight keeps the
instance busy; SageMaker endpoints publish the sum across GPUs, which is under the threshold only when every GPU is.
An endpoint that still answers requests is not idle whatever its GPU says; nor is an EKS node whose GPU memory or
pods' GPU requests say busy (two agreeing signals where two exist: :mod:`chipwise.rules.signals`; the disagreement
is rule ``cannot_judge``'s outcome).
An inference component is judged on its own series (GPUUtilizationNormalized, 0-100 % of the GPUs it reserved, and
its invocations) and its share of the variant's cost; a variant its components share is judged on the capacity
no component reserves. Without GPU telemetry nothing is called idle. Saving: the whole cost (or share).
"""

from __future__ import annotations

from pydantic import Field

from chipwise.analyse.profiles import ResourceProfile
from chipwise.models.common import Confidence
from chipwise.rules.base import (
    EvidenceValue,
    FindingDraft,
    Rule,
    RuleContext,
    Share,
    capacity,
    cost_evidence,
    idle_meta,
)
from chipwise.rules.base import rounded as r
from chipwise.rules.registry import register
from chipwise.rules.signals import GpuIdleThresholds, read_gpu_idle
from chipwise.rules.traffic import requests


class GpuIdleParams(GpuIdleThresholds):
    high_confidence_telemetry_share: Share = Field(
        0.9, description="Telemetry share of the idle period that makes the idleness certain."
    )


@register
class GpuIdle(Rule[GpuIdleParams]):
    """GPU capacity is the most expensive line of an AI bill; a week with every GPU under 5 % is an instance or endpoint
    left running after its work ended."""

    meta = idle_meta(
        title="Idle GPU instance or endpoint",
        applies_to="Live NVIDIA GPU EC2 instances and SageMaker endpoints",
        supersedes=("gpu_inference_portable", "gpu_training_portable"),
    )

    def evaluate(self, profile: ResourceProfile, ctx: RuleContext) -> FindingDraft | None:
        monthly = profile.monthly_cost
        if monthly is None or monthly <= 0:
            return None
        p = self.params
        reading = read_gpu_idle(profile, p)
        if reading is None or reading.disagreement is not None:
            return None
        gpu = profile.signals.gpu_util
        assert gpu is not None
        idle = reading.idle_hours
        confidence: Confidence = "high" if gpu.hours >= p.high_confidence_telemetry_share * idle else "medium"
        traffic = requests(profile)
        evidence: dict[str, EvidenceValue] = {
            "idle_days": r(idle / 24, 1),
            "gpu_max_pct": r(gpu.maximum),
            "gpu_p95_pct": r(gpu.p95),
            "gpu_hours_with_data": gpu.hours,
            "gpu_source": profile.signals.gpu_source,
            "invocations_in_window": int(traffic.total) if traffic else None,
            "cpu_p95_pct": r(profile.signals.cpu_util.p95) if profile.signals.cpu_util else None,
            "gpu_memory_max_pct": r(profile.signals.gpu_memory_util.maximum)
            if profile.signals.gpu_memory_util and "gpu_memory_used" in reading.second_signals
            else None,
            "gpus_requested_max": r(profile.signals.gpus_requested.maximum) if profile.signals.gpus_requested else None,
            "gpu_power_max_watts": r(profile.signals.gpu_power_watts.maximum)
            if profile.signals.gpu_power_watts
            else None,
            **cost_evidence(profile),
        }
        said = (
            f"{profile.name} ({capacity(profile)}) kept every GPU under {p.max_gpu_utilization_pct:g} % for "
            f"{idle / 24:.0f} days (peak {gpu.maximum:.1f} %)"
        )
        return self.idle(profile, monthly, confidence, said, evidence, ("gpu_utilization", *reading.second_signals))
