"""inferentia_underutilized: an Inferentia endpoint or instance much bigger than its model and traffic.

Fires when the busiest NeuronCore's 95th-percentile utilisation over the window is under
``max_p95_utilization_pct``. Without Neuron telemetry an endpoint can still be judged, at low confidence, from its
traffic: requests per second x model latency is the share of time one model copy is busy (Little's law, taking the
whole instance as one copy, which overestimates the load).

The target is the cheapest size of the same family, or fewer instances, whose accelerator memory holds the model
(observed device memory x the memory headroom) and whose NeuronCores cover the p95 busy cores x the core headroom.
Saving: current monthly cost - target monthly cost.
"""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal

from pydantic import Field

from chipwise.analyse.profiles import ResourceProfile
from chipwise.models.common import Confidence
from chipwise.rules.base import (
    FindingDraft,
    Percent,
    RuleContext,
    SavingParams,
    Share,
    cost_evidence,
    money,
)
from chipwise.rules.base import rounded as r
from chipwise.rules.migration import MigrationRule, resizing_meta
from chipwise.rules.registry import register
from chipwise.rules.sizing import HUNDRED, ModelSize, busy_neuron_cores, model_size
from chipwise.rules.traffic import requests

FAMILIES = ("inf1", "inf2")
MICROSECONDS = Decimal(1_000_000)
SECONDS_PER_HOUR = Decimal(3600)


class InferentiaUnderutilizedParams(SavingParams):
    max_p95_utilization_pct: Percent = Field(
        30, description="p95 of the busiest NeuronCore's utilisation under which capacity is idle."
    )
    fallback_max_busy_pct: Percent = Field(
        10,
        description="Without Neuron telemetry: estimated busy share (requests/s x latency) under which it fires.",
    )
    min_telemetry_share: Share = Field(0.5, description="Share of the run that must have NeuronCore datapoints.")
    bytes_per_parameter: Decimal = Field(
        Decimal(2), gt=0, description="Model bytes per parameter when memory is not observed (2 = BF16)."
    )


@dataclass(frozen=True)
class _Demand:
    size: ModelSize
    busy_cores: Decimal
    busy_basis: str
    p95_pct: float
    confidence: Confidence
    signals: tuple[str, ...]


@register
class InferentiaUnderutilized(MigrationRule[InferentiaUnderutilizedParams]):
    """An inf2.48xlarge serving an 8B model at 10 % NeuronCore utilisation pays for 24 cores and 384 GiB to use a few; a
    smaller size (or fewer instances) holds the same model and traffic."""

    meta = resizing_meta(
        title="Underutilised Inferentia capacity",
        severity="medium",
        applies_to="Live inf1/inf2 SageMaker endpoints and EC2 instances",
    )

    def evaluate(self, profile: ResourceProfile, ctx: RuleContext) -> FindingDraft | None:
        if profile.family not in FAMILIES or not self.dedicated(profile):
            return None
        monthly = profile.monthly_cost
        demand = self._demand(profile, ctx)
        if monthly is None or demand is None:
            return None
        sized = self.size(
            profile, ctx, (profile.family or "",), memory_gib=demand.size.memory_gib, cores=demand.busy_cores
        )
        if sized is None or not self.worth_reporting(sized.saving):
            return None
        fit, saving = sized.fit, sized.saving
        if fit.instance.name == profile.instance_type and fit.count >= profile.instance_count:
            return None
        target = f"{fit.count} × {fit.instance.name}"
        outcome = sized.outcome(
            monthly,
            "rightsize",
            confidence=demand.confidence,
            summary=f"{profile.name} ({profile.instance_count} × {profile.instance_type}) peaks at "
            f"{demand.p95_pct:.0f} % NeuronCore utilisation (p95) with {demand.size.memory_gib:.0f} GiB of model: "
            f"{target} holds it with headroom for {money(fit.monthly_usd)}/month, saving {money(saving)}/month.",
            evidence={
                "neuroncore_p95_pct": r(demand.p95_pct),
                "busy_cores_p95": r(demand.busy_cores),
                "busy_cores_basis": demand.busy_basis,
                "required_cores": r(sized.need.cores),
                "model_memory_gib": r(demand.size.memory_gib),
                "model_memory_basis": demand.size.basis,
                "required_memory_gib": r(sized.need.memory_gib),
                "target_hourly_usd": r(fit.hourly_usd, 6),
                "target_monthly_usd": r(fit.monthly_usd),
                **_traffic_evidence(profile),
                **cost_evidence(profile),
            },
            signals_used=demand.signals,
            signals_missing=() if "neuroncore_utilization" in demand.signals else ("neuroncore_utilization",),
            effort="days",
            one_time_cost=ctx.assumptions.porting_cost_usd("days"),
        )
        return self.draft(profile, outcome)

    def _demand(self, profile: ResourceProfile, ctx: RuleContext) -> _Demand | None:
        neuron = profile.signals.neuron_util
        if neuron is not None:
            if neuron.hours < self.params.min_telemetry_share * profile.run_hours:
                return None
            return self._from_telemetry(profile, ctx)
        if profile.neuron_telemetry == "missing":
            return self._from_traffic(profile, ctx)
        return None

    def _from_telemetry(self, profile: ResourceProfile, ctx: RuleContext) -> _Demand | None:
        neuron = profile.signals.neuron_util
        busy = busy_neuron_cores(profile, ctx.catalog)
        size = model_size(profile, ctx.families, ctx.catalog, self.params.bytes_per_parameter)
        if neuron is None or busy is None or size is None or neuron.p95 >= self.params.max_p95_utilization_pct:
            return None
        observed = size.basis == "neuron_device_memory"
        signals = ("neuroncore_utilization", *(("neuron_device_memory",) if observed else ("model_family",)))
        return _Demand(size, busy[0], busy[1], neuron.p95, "high" if observed else "medium", signals)

    def _from_traffic(self, profile: ResourceProfile, ctx: RuleContext) -> _Demand | None:
        """Little's law: busy share = requests/s x seconds per request, per instance (one model copy each)."""
        traffic, latency = profile.signals.invocations, profile.signals.latency_us
        facts = ctx.catalog.get(profile.instance_type or "")
        size = model_size(profile, ctx.families, ctx.catalog, self.params.bytes_per_parameter)
        if traffic is None or latency is None or facts is None or size is None or profile.instance_count < 1:
            return None
        per_second = Decimal(str(traffic.p95)) / SECONDS_PER_HOUR
        busy_share = per_second * Decimal(str(latency.mean)) / MICROSECONDS / profile.instance_count
        busy_pct = float(busy_share * HUNDRED)
        if busy_pct >= self.params.fallback_max_busy_pct:
            return None
        cores = busy_share * facts.neuron_cores * profile.instance_count
        return _Demand(size, cores, "requests_x_latency", busy_pct, "low", ("invocations", "model_latency"))


def _traffic_evidence(profile: ResourceProfile) -> dict[str, float | None]:
    traffic = requests(profile)
    latency = profile.signals.latency_us
    return {
        "mean_requests_per_hour": r(traffic.mean_per_hour) if traffic else None,
        "peak_requests_per_hour": r(traffic.peak_per_hour) if traffic else None,
        "latency_ms": r(latency.mean / 1000) if latency else None,
    }
