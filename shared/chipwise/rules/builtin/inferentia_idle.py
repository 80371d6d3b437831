"""inferentia_idle: an Inferentia endpoint or instance that has done nothing for a week.

An endpoint is idle when SageMaker counted no invocation for ``min_idle_days`` (and, where Neuron telemetry
exists, its NeuronCores agree); an EC2 instance when its busiest NeuronCore stayed under
``max_neuroncore_utilization_pct`` for as long. Without Neuron telemetry an instance is never called idle (that is
``neuron_telemetry_missing``). Saving: the whole cost.
"""

from __future__ import annotations

from pydantic import Field

from chipwise.analyse.profiles import ResourceProfile
from chipwise.models.common import Confidence
from chipwise.rules.base import (
    EvidenceValue,
    FindingDraft,
    IdleParams,
    Percent,
    Rule,
    RuleContext,
    Share,
    cost_evidence,
    idle_meta,
)
from chipwise.rules.base import rounded as r
from chipwise.rules.registry import register
from chipwise.rules.traffic import hours_without_traffic, idle_hours, requests

FAMILIES = ("inf1", "inf2")


class InferentiaIdleParams(IdleParams):
    max_neuroncore_utilization_pct: Percent = Field(
        1.0, description="Busiest-NeuronCore utilisation below which an hour counts as idle."
    )
    high_confidence_telemetry_share: Share = Field(
        0.9, description="Telemetry share of the idle period that makes an instance's idleness certain."
    )


@register
class InferentiaIdle(Rule[InferentiaIdleParams]):
    """An inf1/inf2 endpoint or instance bills every hour whether or not it serves a request; a week without invocations
    or NeuronCore activity is capacity nobody uses."""

    meta = idle_meta(
        title="Idle Inferentia endpoint or instance",
        applies_to="Live inf1/inf2 SageMaker endpoints and EC2 instances",
        supersedes=("inferentia_underutilized", "neuron_telemetry_missing"),
    )

    def evaluate(self, profile: ResourceProfile, ctx: RuleContext) -> FindingDraft | None:
        if profile.family not in FAMILIES or not self.running(profile):
            return None
        monthly = profile.monthly_cost
        if monthly is None:
            return None
        p = self.params
        min_hours = p.min_idle_hours
        neuron = profile.signals.neuron_util
        usable = neuron is not None and neuron.hours >= p.min_telemetry_share * min_hours
        neuron_idle = idle_hours(profile, neuron, p.max_neuroncore_utilization_pct) if usable else None
        quiet = hours_without_traffic(profile) if profile.kind == "sagemaker_endpoint" else None
        idle = _idle_period(quiet, neuron_idle, neuron is not None, min_hours)
        if idle is None:
            return None
        confidence: Confidence = "high"
        if quiet is None and neuron is not None and neuron.hours < p.high_confidence_telemetry_share * idle:
            confidence = "medium"
        used = tuple(
            s for s, present in (("invocations", quiet is not None), ("neuroncore_utilization", neuron)) if present
        )
        traffic = requests(profile)
        evidence: dict[str, EvidenceValue] = {
            "idle_days": r(idle / 24, 1),
            "invocations_in_window": int(traffic.total) if traffic else None,
            "neuroncore_max_pct": r(neuron.maximum) if neuron else None,
            "neuroncore_p95_pct": r(neuron.p95) if neuron else None,
            "neuron_hours_with_data": neuron.hours if neuron else None,
            "neuron_source": profile.signals.neuron_source,
            **cost_evidence(profile),
        }
        what = "served no request" if quiet is not None and quiet >= min_hours else "kept its NeuronCores idle"
        said = f"{profile.name} ({profile.instance_count} × {profile.instance_type}) {what} for {idle / 24:.0f} days"
        missing = () if neuron is not None else ("neuroncore_utilization",)
        return self.idle(profile, monthly, confidence, said, evidence, used, missing)


def _idle_period(quiet: float | None, neuron_idle: float | None, has_neuron: bool, min_hours: float) -> float | None:
    """The idle period in hours when long enough: traffic decides for endpoints (the NeuronCores must agree
    when they report), NeuronCores for instances."""
    if quiet is not None:
        if quiet < min_hours:
            return None
        if has_neuron and (neuron_idle is None or neuron_idle < min_hours):
            return None
        return quiet if neuron_idle is None else min(quiet, neuron_idle)
    if neuron_idle is not None and neuron_idle >= min_hours:
        return neuron_idle
    return None
