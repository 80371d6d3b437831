"""accelerator_off_hours: an accelerated endpoint or instance that works the same hours every week and sits idle the
rest (nights, weekends): switch it off on a schedule.

The weekly pattern is read off the resource's activity series by hour of the week (see
:mod:`chipwise.analyse.weekly`): requests per hour for a SageMaker endpoint, the busiest NeuronCore (or GPU) for an
instance; an instance without accelerator telemetry is never judged. Off stretches are hours of the week with no
activity in any week of the window, at least ``min_off_stretch_hours`` long; the rule fires when they add up to
``min_off_hours_per_week`` and the on-hours were busy in at least ``min_regularity`` of the weeks (load at random
hours leaves quiet hours by chance; a schedule built on them would cut off real traffic).

Saving: the off hours a week × 730/168 × the hourly rate × instances. The cold start is stated beside it: each
scale-up starts ``capacity_cold_start_minutes`` (assumptions.json) before the first busy hour and bills them.
Endpoints scale to zero through inference components (``MinInstanceCount`` 0) and scheduled scaling; instances
stop and start on an EventBridge Scheduler schedule.

Different from idle (no load at all: the idle rules supersede this one) and from spiky_inference_bedrock (load at
irregular hours: a regular pattern is better served by a schedule, so this rule supersedes that one). A resize or a
move of the same resource (inferentia_underutilized, trainium_serving_inference, gpu_inference_portable) supersedes
this one: the two savings do not add up, and the totals must never count both.
"""

from __future__ import annotations

from decimal import Decimal

from pydantic import Field

from chipwise.analyse.profiles import ResourceProfile
from chipwise.analyse.series import SeriesStats
from chipwise.analyse.weekly import WeeklyPattern, weekly_pattern
from chipwise.economics import net_scheduled_saving
from chipwise.models.common import Confidence
from chipwise.presentation import plural
from chipwise.rules.base import (
    EvidenceValue,
    FindingDraft,
    Outcome,
    Percent,
    Rule,
    RuleContext,
    RuleMeta,
    SavingParams,
    Share,
    cost_evidence,
    money,
)
from chipwise.rules.base import rounded as r
from chipwise.rules.registry import register
from chipwise.rules.sizing import rate_confidence
from chipwise.rules.traffic import ANY_ACTIVITY, traffic_known


class AcceleratorOffHoursParams(SavingParams):
    min_weeks: int = Field(2, ge=1, le=9, description="Weeks an hour of the week must be seen idle to count as off.")
    min_off_stretch_hours: int = Field(4, ge=1, le=168, description="Shortest off stretch worth a schedule.")
    min_off_hours_per_week: int = Field(24, ge=1, le=168, description="Off hours a week below which no finding.")
    min_regularity: float = Field(
        0.8, gt=0, le=1, description="Share of on-hour observations that must be busy (the pattern holds)."
    )
    high_confidence_regularity: float = Field(0.95, gt=0, le=1, description="Regularity that makes it high.")
    max_idle_utilization_pct: Percent = Field(
        5.0, description="Busiest NeuronCore/GPU utilisation below which an instance's hour is idle."
    )
    min_telemetry_share: Share = Field(
        0.9, description="Share of an instance's run hours that must have utilisation datapoints."
    )


@register
class AcceleratorOffHours(Rule[AcceleratorOffHoursParams]):
    """An endpoint or instance that serves office hours bills nights and weekends too; a schedule (or SageMaker
    scale-to-zero) stops paying for the hours it never works."""

    meta = RuleMeta(
        title="Accelerator capacity running through its off hours",
        severity="medium",
        applies_to="Live accelerated SageMaker endpoints (requests) and EC2 instances (NeuronCore or GPU "
        "utilisation) with a regular weekly pattern",
        supersedes=("spiky_inference_bedrock",),
    )

    def evaluate(self, profile: ResourceProfile, ctx: RuleContext) -> FindingDraft | None:
        if profile.platform == "cpu" or not self.dedicated(profile):
            return None
        monthly = profile.monthly_cost
        rate = profile.cost.hourly_rate
        if monthly is None or rate is None or profile.instance_count <= 0:
            return None
        found = self._activity(profile)
        if found is None:
            return None
        series, signal, threshold, counter = found
        p = self.params
        pattern = weekly_pattern(
            series,
            threshold=threshold,
            counter=counter,
            since=profile.active_since,
            end=profile.window_end,
            min_weeks=p.min_weeks,
            min_off_stretch_hours=p.min_off_stretch_hours,
        )
        if pattern is None or not pattern.off_stretches or pattern.on_hours_per_week == 0:
            return None  # no off hours, or no on hours at all (that is the idle rules' finding)
        if pattern.off_hours_per_week < p.min_off_hours_per_week or pattern.regularity < p.min_regularity:
            return None
        cold = ctx.assumptions.capacity_cold_start_minutes.value
        scale_ups = len(pattern.off_stretches)
        gross, cold_cost, saving = net_scheduled_saving(
            rate, profile.instance_count, pattern.off_hours_per_week, scale_ups, cold
        )  # the saving shown is net of the cold starts it states
        if saving < p.min_monthly_savings_usd:
            return None
        endpoint = profile.kind == "sagemaker_endpoint"
        how = (
            "scale it to zero on a schedule (inference components with MinInstanceCount 0 and scheduled scaling)"
            if endpoint
            else "stop and start it on a schedule (EventBridge Scheduler)"
        )
        return self.draft(
            profile,
            Outcome(
                monthly_cost=monthly,
                saving=saving,
                action="schedule",
                confidence=self._confidence(profile, pattern),
                summary=f"{profile.name} ({profile.instance_count} × {profile.instance_type}) works "
                f"{pattern.schedule()} and was idle the other {pattern.off_hours_per_week} hours of every week "
                f"({pattern.regularity:.0%} of its working hours were busy): {how} to save {money(saving)}/month, "
                f"net: the hours off save {money(gross)}, less {plural(scale_ups, 'scale-up')} a week, each "
                f"starting about {cold} minutes early (about {money(cold_cost)}/month).",
                evidence={
                    **self._evidence(profile, pattern, signal, threshold, cold, cold_cost, endpoint),
                    "gross_monthly_savings_usd": r(gross),
                },
                signals_used=(signal,),
                effort="days",
            ),
        )

    def _activity(self, profile: ResourceProfile) -> tuple[SeriesStats, str, float, bool] | None:
        """The series the pattern is read from, its name, the activity threshold and whether it is a counter."""
        if profile.kind == "sagemaker_endpoint":
            invocations = profile.signals.invocations
            if invocations is None or not traffic_known(profile):
                return None  # unknown traffic, or none at all (idle)
            return invocations, "invocations", ANY_ACTIVITY, True
        signals = profile.signals
        series, name = (signals.neuron_util, "neuroncore_utilization")
        if series is None:
            series, name = (signals.gpu_util, "gpu_utilization")
        if series is None or profile.run_hours <= 0:
            return None  # missing telemetry is never idleness
        if series.hours < self.params.min_telemetry_share * profile.run_hours:
            return None
        return series, name, self.params.max_idle_utilization_pct, False

    def _confidence(self, profile: ResourceProfile, pattern: WeeklyPattern) -> Confidence:
        confidence: Confidence = "high" if pattern.regularity >= self.params.high_confidence_regularity else "medium"
        if pattern.weeks_observed < self.params.min_weeks:
            confidence = "low"
        return rate_confidence(profile, confidence)

    def _evidence(
        self,
        profile: ResourceProfile,
        pattern: WeeklyPattern,
        signal: str,
        threshold: float,
        cold: Decimal,
        cold_cost: Decimal,
        endpoint: bool,
    ) -> dict[str, EvidenceValue]:
        return {
            "activity_signal": signal,
            "activity_threshold": r(threshold, 6),
            "schedule": pattern.schedule(),
            "off_stretches": "; ".join(s.describe() for s in pattern.off_stretches),
            "off_hours_per_week": pattern.off_hours_per_week,
            "on_hours_per_week": pattern.on_hours_per_week,
            "scale_ups_per_week": len(pattern.off_stretches),
            "pattern_regularity": r(pattern.regularity, 3),
            "weeks_observed": r(pattern.weeks_observed, 1),
            "cold_start_minutes": r(cold, 1),
            "cold_start_monthly_usd": r(cold_cost),
            "scale_to_zero": "inference_components_min_0" if endpoint else "instance_stop_start",
            **cost_evidence(profile),
        }
