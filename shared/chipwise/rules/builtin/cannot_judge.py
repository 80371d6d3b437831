"""cannot_judge: a resource whose spend Chipwise cannot judge from what AWS exposes, with the reason and the fix.

Two cases, both claiming no saving:

- **Contradictory telemetry**: a GPU that reads idle while another signal says busy (requests still arriving, GPU
  memory held, pods holding GPUs; see :mod:`chipwise.rules.signals`). Fix: check the GPU metrics exporter (DCGM) and
  the workload before stopping anything.
- **Share undocumented**: an inference component on Inferentia or Trainium. The SageMaker API reference
  (InferenceComponentComputeResourceRequirements) says only "Accelerators include GPUs and AWS Inferentia" for
  ``NumberOfAcceleratorDevicesRequired``: whether a Neuron instance counts devices or NeuronCores is not documented,
  so its share of the variant (its cost) is not computed and the outcome says so.
- **No activity exposed**: a resource of a kind AWS publishes no activity metric for (a SageMaker notebook
  instance on an accelerator type). Fix: what the resource's details name (a lifecycle configuration that shuts
  the instance down when idle).

The outcome's evidence carries ``verdict: cannot_judge`` and ``reason``, so a verdict layer can read it as such.
"""

from __future__ import annotations

from decimal import Decimal

from pydantic import Field

from chipwise.analyse.profiles import ResourceProfile
from chipwise.models.common import Action
from chipwise.presentation import plural
from chipwise.rules.base import FindingDraft, Outcome, Rule, RuleContext, RuleMeta, capacity, cost_evidence
from chipwise.rules.base import rounded as r
from chipwise.rules.registry import register
from chipwise.rules.signals import GpuIdleThresholds, read_gpu_idle

NEURON_SHARE_UNDOCUMENTED = (
    "its share of the variant is unknown: the SageMaker API reference (InferenceComponentComputeResourceRequirements) "
    "documents NumberOfAcceleratorDevicesRequired only as 'accelerators include GPUs and AWS Inferentia', not "
    "whether an Inferentia or Trainium instance counts devices or NeuronCores"
)
NEURON_SHARE_FIX = (
    "judge the endpoint variant as a whole (its cost and Neuron metrics), or give each component a variant of its own"
)


class CannotJudgeParams(GpuIdleThresholds):
    """gpu_idle's thresholds: a GPU this rule finds contradicted is one gpu_idle would have called idle."""

    min_run_days: float = Field(
        0, ge=0, le=63, description="Days a resource without activity data must have run before it is reported."
    )


@register
class CannotJudge(Rule[CannotJudgeParams]):
    """An idle verdict resting on one metric can be wrong (DCGM can read 0 % under load), and some resources publish no
    activity at all; the spend is named with the reason and the fix, never guessed."""

    meta = RuleMeta(
        title="Spend that cannot be judged",
        severity="medium",
        applies_to="Live NVIDIA resources whose signals disagree; resources whose kind exposes no activity",
    )

    def evaluate(self, profile: ResourceProfile, ctx: RuleContext) -> FindingDraft | None:
        monthly = profile.monthly_cost or Decimal(0)
        if profile.activity_unknown is not None and profile.live:
            if profile.run_hours < self.params.min_run_days * 24:
                return None
            reason, fix, action = profile.activity_unknown
            return self._outcome(profile, monthly, reason, fix, action, ())
        if (
            profile.kind == "sagemaker_inference_component"
            and profile.neuron
            and profile.live
            and profile.billed_count is None
        ):
            return self._outcome(profile, monthly, NEURON_SHARE_UNDOCUMENTED, NEURON_SHARE_FIX, "enable_telemetry", ())
        reading = read_gpu_idle(profile, self.params)
        if reading is None or reading.disagreement is None:
            return None
        fix = "check the GPU metrics exporter (DCGM) and the workload before stopping anything"
        return self._outcome(
            profile,
            monthly,
            reading.disagreement,
            fix,
            "enable_telemetry",
            ("gpu_utilization", *reading.second_signals),
        )

    def _outcome(
        self,
        profile: ResourceProfile,
        monthly: Decimal,
        reason: str,
        fix: str,
        action: Action,
        used: tuple[str, ...],
    ) -> FindingDraft:
        signals = profile.signals
        what = capacity(profile) if profile.instance_type else plural(profile.instance_count, "unit")
        return self.draft(
            profile,
            Outcome(
                monthly_cost=monthly,
                saving=Decimal(0),
                action=action,
                confidence="high",
                summary=f"{profile.name} ({what}) cannot be judged: {reason}. Fix: {fix}.",
                evidence={
                    "verdict": "cannot_judge",
                    "reason": reason,
                    "fix": fix,
                    "gpu_max_pct": r(signals.gpu_util.maximum) if signals.gpu_util else None,
                    "gpu_memory_max_pct": r(signals.gpu_memory_util.maximum) if signals.gpu_memory_util else None,
                    "gpus_requested_max": r(signals.gpus_requested.maximum) if signals.gpus_requested else None,
                    **cost_evidence(profile),
                },
                signals_used=used,
                signals_missing=() if used else ("activity",),
                effort="days",
            ),
        )
