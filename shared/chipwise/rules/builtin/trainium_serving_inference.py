"""trainium_serving_inference: Trainium capacity used as a permanent inference server.

Trainium is built for training (backward pass, optimizer state, collectives); serving on it pays for all that and
uses none of it. Inferentia2 runs the same Neuron-compiled model (NeuronCore-v2 on both) for less. A resource is
serving inference when it is a SageMaker endpoint on ``ml.trn*``, when its workload hint says so (a tag), or, for an
untagged instance, when it executes steadily (most hours) with device memory well below what training's optimizer
state needs.

The target is the cheapest inf2 size (or count) whose accelerator memory holds the model (observed device memory,
else the size its model id states) and whose NeuronCores cover the busy cores, each with headroom. Without Neuron
telemetry the busy cores are unknown: no target is sized (``neuron_telemetry_missing`` asks for it instead).

Software path: trn1 and inf2 LLM serving are both on NxD Inference in maintenance mode since Neuron 2.31, so the
move keeps the stack; trn2/trn3 serving runs the go-forward vLLM Neuron stack and is not moved to inf2 by default.
When Cost Explorer shows the trn hours are covered by a Savings Plan or reservation (amortized below unblended), the
saving is not claimed as a monthly cut while the commitment runs: the move frees committed hours for other usage.
"""

from __future__ import annotations

from decimal import Decimal

from pydantic import Field

from chipwise.analyse.profiles import ResourceProfile
from chipwise.catalog import get_neuron_software
from chipwise.models.common import Confidence
from chipwise.rules.base import (
    EvidenceValue,
    FindingDraft,
    RuleContext,
    SavingParams,
    Share,
    cost_evidence,
    lower,
    money,
)
from chipwise.rules.base import rounded as r
from chipwise.rules.migration import MigrationRule, resizing_meta
from chipwise.rules.registry import register
from chipwise.rules.sizing import busy_neuron_cores, model_size, observed_neuron_memory_gib, rate_confidence
from chipwise.rules.tokens import token_evidence
from chipwise.rules.traffic import Activity, activity, requests

FAMILIES = ("trn1", "trn1n")
GO_FORWARD_FAMILIES = ("trn2", "trn3")


class TrainiumServingInferenceParams(SavingParams):
    min_active_hour_share: Share = Field(
        0.8, description="Untagged instances: share of hours with executions that says 'serving'."
    )
    max_inference_memory_share: float = Field(
        0.75,
        gt=0,
        le=1,
        description="Untagged instances: device memory share above which the work looks like training.",
    )
    bytes_per_parameter: Decimal = Field(
        Decimal(2), gt=0, description="Model bytes per parameter when memory is not observed (2 = BF16)."
    )
    target_families: tuple[str, ...] = Field(("inf2",), min_length=1, description="Inferentia families to size.")
    include_go_forward: bool = Field(
        False, description="Also move trn2/trn3 serving (vLLM Neuron, active) onto inf2 (NxD Inference, maintenance)."
    )


@register
class TrainiumServingInference(MigrationRule[TrainiumServingInferenceParams]):
    """A training chip used as a permanent inference server pays for a backward pass that never runs; Inferentia2 serves
    the same Neuron-compiled model for less per token."""

    meta = resizing_meta(
        title="Trainium serving inference",
        severity="high",
        applies_to="Live trn1/trn1n/trn2 SageMaker endpoints and EC2 instances",
    )

    def evaluate(self, profile: ResourceProfile, ctx: RuleContext) -> FindingDraft | None:
        families = FAMILIES + (GO_FORWARD_FAMILIES if self.params.include_go_forward else ())
        if profile.family not in families or not self.dedicated(profile):
            return None
        monthly = profile.monthly_cost
        basis = self._serving_basis(profile, ctx)
        size = model_size(profile, ctx.families, ctx.catalog, self.params.bytes_per_parameter)
        if monthly is None or basis is None or size is None:
            return None
        busy = busy_neuron_cores(profile, ctx.catalog)
        if busy is None:
            return None  # busy cores unknown without Neuron telemetry: nothing is sized on a guess
        target = self.size(profile, ctx, self.params.target_families, memory_gib=size.memory_gib, cores=busy[0])
        if target is None or not self.worth_reporting(target.saving):
            return None
        fit, saving = target.fit, target.saving
        confidence = self._confidence(profile, basis, telemetry=busy is not None)
        fleet = f"{fit.count} × {fit.instance.name}"
        software = get_neuron_software()
        path = software.serving_path(fit.instance.family)
        committed = profile.cost.commitment_covered
        if committed:
            outcome_words = (
                f"{fleet} would hold its {size.memory_gib:.0f} GiB model for {money(fit.monthly_usd)}/month. Its "
                "Trainium hours are covered by a Savings Plan or reservation, so the move does not cut the bill "
                f"while the commitment runs: it frees about {money(saving)}/month of committed capacity for other "
                "usage (reallocate it, or let the commitment lapse at its end)."
            )
        else:
            outcome_words = (
                f"{fleet} holds its {size.memory_gib:.0f} GiB model for {money(fit.monthly_usd)}/month, "
                f"saving {money(saving)}/month."
            )
        stack = f" Software: {path}, the same stack trn1 serving uses." if path else ""
        outcome = target.outcome(
            monthly,
            "migrate",
            confidence=confidence,
            summary=f"{profile.name} ({profile.instance_count} × {profile.instance_type}) serves inference on "
            f"Trainium: {outcome_words}{stack}",
            excluded_from_totals="committed" if committed else None,
            software_path=path,
            evidence={
                "workload_basis": basis,
                **self._activity_evidence(profile),
                "neuroncore_p95_pct": r(profile.signals.neuron_util.p95) if profile.signals.neuron_util else None,
                "busy_cores_p95": r(busy[0]) if busy else None,
                "required_cores": r(target.need.cores),
                "model_memory_gib": r(size.memory_gib),
                "model_memory_basis": size.basis,
                "required_memory_gib": r(target.need.memory_gib),
                "commitment_covered": profile.cost.commitment_covered,
                "target_hourly_usd": r(fit.hourly_usd, 6),
                "target_monthly_usd": r(fit.monthly_usd),
                **token_evidence(profile, fit.monthly_usd),
                **cost_evidence(profile),
            },
            signals_used=_signals_used(profile, basis),
            signals_missing=(),
            effort="days",
            one_time_cost=ctx.assumptions.porting_cost_usd("days"),
        )
        return self.draft(profile, outcome)

    def _serving_basis(self, profile: ResourceProfile, ctx: RuleContext) -> str | None:
        """Why the resource is taken for an inference server (None: it is not, or it cannot be told)."""
        if profile.kind == "sagemaker_endpoint":
            return "sagemaker_endpoint"
        if profile.hints.workload == "inference":
            return f"workload_{profile.hints.sources.get('workload', 'hint')}"
        if profile.hints.workload == "training":
            return None
        executions = activity(profile, profile.signals.neuron_executions)
        if executions is None or executions.active_share < self.params.min_active_hour_share:
            return None
        memory = observed_neuron_memory_gib(profile)
        facts = ctx.catalog.get(profile.instance_type or "")
        if memory is not None and facts is not None and facts.accelerator_memory_gib > 0:
            share = memory / facts.accelerator_memory_gib
            if share > Decimal(str(self.params.max_inference_memory_share)):
                return None
        return "steady_executions"

    @staticmethod
    def _confidence(profile: ResourceProfile, basis: str, telemetry: bool) -> Confidence:
        confidence: Confidence = "high" if basis != "steady_executions" and telemetry else "medium"
        if profile.cost.commitment_covered:
            confidence = lower(confidence)
        return rate_confidence(profile, confidence)

    @staticmethod
    def _activity_evidence(profile: ResourceProfile) -> dict[str, EvidenceValue]:
        executions: Activity | None = activity(profile, profile.signals.neuron_executions)
        traffic = requests(profile)
        memory = observed_neuron_memory_gib(profile)
        return {
            "mean_executions_per_hour": r(executions.mean_per_hour) if executions else None,
            "executions_active_share": r(executions.active_share, 3) if executions else None,
            "mean_requests_per_hour": r(traffic.mean_per_hour) if traffic else None,
            "peak_requests_per_hour": r(traffic.peak_per_hour) if traffic else None,
            "neuron_device_memory_gib": r(memory),
        }


def _signals_used(profile: ResourceProfile, basis: str) -> tuple[str, ...]:
    signals = profile.signals
    used = [
        name
        for name, present in (
            ("neuroncore_utilization", signals.neuron_util),
            ("neuron_device_memory", signals.neuron_memory_bytes),
            ("neuron_executions", signals.neuron_executions),
            ("invocations", signals.invocations),
        )
        if present is not None
    ]
    if basis.startswith("workload_"):
        used.append("workload_hint")
    if profile.cost.rate_source == "cost_explorer":
        used.append("cost_explorer")
    return tuple(used)
