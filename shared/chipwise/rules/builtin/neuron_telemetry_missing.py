"""neuron_telemetry_missing: an Inferentia or Trainium resource that publishes no Neuron metrics.

Without NeuronCore utilisation nobody can tell a busy inf2 from an idle one; CPU is a poor proxy for an
accelerator (confidence from CPU alone is capped at medium, and missing telemetry is never read as idle). The
recommendation is to install neuron-monitor (``chipwise neuron-agent`` or the CloudWatch agent's Neuron support) so
the other rules can judge the spend. No saving is claimed.
"""

from __future__ import annotations

from decimal import Decimal

from pydantic import Field

from chipwise.analyse.metric_keys import NEURON_COVERAGE
from chipwise.analyse.profiles import ResourceProfile
from chipwise.rules.base import FindingDraft, Outcome, Rule, RuleContext, RuleMeta, RuleParams, cost_evidence, money
from chipwise.rules.base import rounded as r
from chipwise.rules.registry import register
from chipwise.rules.traffic import requests


class NeuronTelemetryMissingParams(RuleParams):
    min_run_days: float = Field(
        1, ge=0, le=63, description="Days a resource must have run before its missing telemetry is reported."
    )


@register
class NeuronTelemetryMissing(Rule[NeuronTelemetryMissingParams]):
    """Inferentia and Trainium publish no accelerator utilisation to CloudWatch by themselves; without neuron-monitor
    their spend cannot be judged, and low CPU says nothing about NeuronCores."""

    meta = RuleMeta(
        title="Neuron telemetry missing",
        severity="medium",
        applies_to="Live inf1/inf2/trn1/trn2 SageMaker endpoints and EC2 instances",
        # A resource that cannot be judged gets only this finding: no size or saving is claimed without evidence.
        supersedes=("trainium_serving_inference", "inferentia_underutilized"),
    )

    def evaluate(self, profile: ResourceProfile, ctx: RuleContext) -> FindingDraft | None:
        if not profile.neuron or not self.running(profile):
            return None
        if profile.neuron_telemetry != "missing" or profile.run_hours < self.params.min_run_days * 24:
            return None
        monthly = profile.monthly_cost or Decimal(0)
        cpu = profile.signals.cpu_util
        traffic = requests(profile)
        checked = sorted(f"{ns}/{metric}" for ns, metric in profile.coverage if (ns, metric) in NEURON_COVERAGE)
        return self.draft(
            profile,
            Outcome(
                monthly_cost=monthly,
                saving=Decimal(0),
                action="enable_telemetry",
                confidence="high",
                summary=f"{profile.name} ({profile.instance_count} × {profile.instance_type}) publishes no Neuron "
                f"metrics, so its {money(monthly)}/month cannot be judged: install neuron-monitor "
                "(chipwise neuron-agent) to see its NeuronCore utilisation.",
                evidence={
                    "neuron_sources_checked": len(checked),
                    "neuron_sources": ", ".join(checked),
                    "cpu_p95_pct": r(cpu.p95) if cpu else None,
                    "mean_requests_per_hour": r(traffic.mean_per_hour) if traffic else None,
                    **cost_evidence(profile),
                },
                signals_used=tuple(s for s, v in (("cpu_utilization", cpu), ("invocations", traffic)) if v),
                signals_missing=("neuroncore_utilization", "neuron_device_memory"),
                effort="days",
            ),
        )
