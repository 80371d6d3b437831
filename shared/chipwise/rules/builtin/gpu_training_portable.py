"""gpu_training_portable: GPU training of a model family Neuron supports, without custom CUDA.

Training is a SageMaker training job, or an EC2 instance or AWS Batch compute environment whose workload hint says
training (a ``chipwise:workload`` tag); a Batch environment counts when its queues ran jobs in the window.

Trainium trains mainstream architectures at a representative 30-50 % better price-performance (the economics data
file: value, range and source). The saving is the GPU training spend times that gain: for SageMaker training jobs
the window's spend (instance-hours x the effective rate) scaled to a 730-hour month, for an EC2 training instance its
always-on monthly cost. Target: trn2 for H100-class (and newer) GPUs, trn1 for A100/A10G-class work and small models
(trn1.2xlarge for single-GPU work). Porting effort comes from the model-family table; break-even from it.

Custom CUDA (tag or image) is never recommended for porting: the port may cost more than it saves.

The saving rests on a ratio, so the summary gives its range (low-high from the data file). A target without an
on-demand price (trn2.48xlarge: Capacity Blocks or a quote) is never the basis of a counted saving: the finding says
to ask for a quote and stays out of the totals. Porting effort follows the workload: a fine-tune of a drop-in
family takes days, other fine-tunes weeks, pretraining weeks, and distributed pretraining on many instances months.
"""

from __future__ import annotations

import re
from decimal import Decimal

from pydantic import Field

from chipwise.analyse.profiles import ResourceProfile
from chipwise.catalog import ModelFamily, SupportLevel, get_neuron_software
from chipwise.economics import per_month
from chipwise.models.common import Confidence, Effort
from chipwise.rules.base import FindingDraft, Outcome, RuleContext, RuleMeta, SavingParams, cost_evidence, money
from chipwise.rules.base import rounded as r
from chipwise.rules.migration import MigrationRule
from chipwise.rules.registry import register
from chipwise.rules.sizing import family_guessed, model_family, model_params, rate_confidence

TRAINING_KINDS = ("sagemaker_training_job", "ec2_instance", "batch_compute_environment")
_FINE_TUNE = re.compile(r"fine-?tun|finetun|\blora\b|peft|\bsft\b|instruct-tun")
_PRETRAIN = re.compile(r"pre-?train")
_EFFORT_ORDER: tuple[Effort, ...] = ("none", "days", "weeks", "months")


class GpuTrainingPortableParams(SavingParams):
    support_levels: tuple[SupportLevel, ...] = Field(
        ("drop_in", "supported"), min_length=1, description="Neuron training support levels worth a port."
    )
    trn2_gpu_families: tuple[str, ...] = Field(
        ("p5", "p5e", "p5en", "p6-b200"), description="GPU families whose work goes to trn2 (others to trn1)."
    )
    small_model_max_params_billion: Decimal = Field(
        Decimal(13), gt=0, description="Models up to this size go to trn1 (cheaper fine-tunes) whatever the GPU."
    )
    min_run_hours: float = Field(1, ge=0, description="Training shorter than this in the window is ignored.")


@register
class GpuTrainingPortable(MigrationRule[GpuTrainingPortableParams]):
    """Trainium trains mainstream transformer families at a representative 30-50 % better price-performance than
    comparable GPUs; a supported model without custom CUDA ports in days to weeks."""

    meta = RuleMeta(
        title="GPU training portable to Trainium",
        severity="medium",
        applies_to="SageMaker training jobs and EC2 instances tagged or recognised as training, on NVIDIA GPUs",
    )

    def evaluate(self, profile: ResourceProfile, ctx: RuleContext) -> FindingDraft | None:
        if profile.platform != "nvidia" or profile.kind not in TRAINING_KINDS or profile.hints.custom_cuda:
            return None
        if profile.kind != "sagemaker_training_job" and not self._training_capacity(profile):
            return None
        family = model_family(profile, ctx.families)
        if family is None or family.training_support not in self.params.support_levels:
            return None
        monthly = self._monthly_spend(profile)
        if monthly is None:
            return None
        gain = ctx.assumptions.trainium_training_price_performance_gain
        saving = monthly * gain.value
        if not self.worth_reporting(saving):
            return None
        target = self._target(profile, ctx)
        workload, effort = self._effort(profile, family, ctx)
        one_time = ctx.assumptions.porting_cost_usd(effort)
        priced = ctx.catalog.price(target, profile.region) is not None
        low = monthly * gain.low if gain.low is not None else None
        high = monthly * gain.high if gain.high is not None else None
        span = f"{money(low)}-{money(high)}" if low is not None and high is not None else money(saving)
        target_family = target.removeprefix("ml.").split(".", 1)[0]
        path = get_neuron_software().training_path(target_family)
        stack = f" Software: {path}." if path else ""
        if priced:
            outcome = (
                f"on {target} the representative {gain.value:.0%} better price-performance saves about "
                f"{money(saving)}/month (range {span})"
            )
        else:
            outcome = (
                f"{target} has no on-demand price (Capacity Blocks or a quote): ask AWS for a quote before relying "
                f"on it. At the representative {gain.value:.0%} better price-performance it would save about "
                f"{span}/month; not counted in the totals"
            )
        return self.draft(
            profile,
            Outcome(
                monthly_cost=monthly,
                saving=saving,
                action="migrate",
                target_platform="trainium",
                target_instance_type=target,
                target_count=profile.instance_count,
                confidence=self._confidence(profile, family),
                summary=f"{profile.name} trains {family.name} ({workload.replace('_', ' ')}) on "
                f"{profile.instance_count} × {profile.instance_type} ({money(monthly)}/month): {outcome}; porting "
                f"takes {effort} ({money(one_time)} one-time).{stack}",
                excluded_from_totals=None if priced else "quote_needed",
                software_path=path,
                evidence={
                    "model_family": family.id,
                    "training_support": family.training_support,
                    "model_params_billion": r(model_params(profile, ctx.families)[0]),
                    "price_performance_gain": r(gain.value, 3),
                    "price_performance_gain_low": r(gain.low, 3),
                    "price_performance_gain_high": r(gain.high, 3),
                    "savings_low_usd": r(monthly * gain.low) if gain.low is not None else None,
                    "savings_high_usd": r(monthly * gain.high) if gain.high is not None else None,
                    "window_spend_usd": r(self._window_spend(profile)),
                    "batch_jobs_in_window": profile.batch_jobs_in_window,
                    "gpu_p95_pct": r(profile.signals.gpu_util.p95) if profile.signals.gpu_util else None,
                    "porting_cost_usd": r(one_time),
                    **cost_evidence(profile),
                },
                signals_used=tuple(
                    s
                    for s, present in (
                        ("model_family", True),
                        ("gpu_utilization", profile.signals.gpu_util),
                        ("cost_explorer", profile.cost.rate_source == "cost_explorer"),
                    )
                    if present
                ),
                effort=effort,
                one_time_cost=one_time,
            ),
        )

    @staticmethod
    def _training_capacity(profile: ResourceProfile) -> bool:
        """An EC2 instance or Batch compute environment tagged (or recognised) as training, running now; a Batch
        environment must also have run jobs in the window."""
        if profile.hints.workload != "training" or not profile.live or profile.instance_count < 1:
            return False
        return profile.kind != "batch_compute_environment" or bool(profile.batch_jobs_in_window)

    def _monthly_spend(self, profile: ResourceProfile) -> Decimal | None:
        """Training jobs: the window's spend at its run rate; instances and Batch capacity (the instances its
        desired vCPUs stand for now): the always-on monthly cost."""
        if profile.kind != "sagemaker_training_job":
            return profile.monthly_cost
        spend = self._window_spend(profile)
        if spend is None or profile.run_hours < self.params.min_run_hours:
            return None
        return per_month(spend, profile.window_hours)

    @staticmethod
    def _window_spend(profile: ResourceProfile) -> Decimal | None:
        if profile.kind != "sagemaker_training_job" or profile.cost.hourly_rate is None:
            return None
        hours = Decimal(str(round(profile.run_hours, 6)))
        return profile.cost.hourly_rate * profile.instance_count * hours

    def _target(self, profile: ResourceProfile, ctx: RuleContext) -> str:
        """trn2.48xlarge for H100-class work unless the model id says it is small; else trn1 (the 2xlarge for
        single-GPU work). SageMaker jobs get the ``ml.`` type."""
        params, source = model_params(profile, ctx.families)
        small = (
            source in ("model_id", "resource_name")
            and params is not None
            and params <= self.params.small_model_max_params_billion
        )
        facts = ctx.catalog.get(profile.instance_type or "")
        if profile.family in self.params.trn2_gpu_families and not small:
            name = "trn2.48xlarge"
        elif facts is not None and facts.accelerator_count <= 1:
            name = "trn1.2xlarge"
        else:
            name = "trn1.32xlarge"
        return f"ml.{name}" if profile.kind == "sagemaker_training_job" else name

    @staticmethod
    def _effort(profile: ResourceProfile, family: ModelFamily, ctx: RuleContext) -> tuple[str, Effort]:
        """(what the training is, the porting effort it takes) from the job's name, hyperparameters and tags."""
        table = ctx.assumptions.porting_effort_by_workload
        words = " ".join([profile.name, *profile.tags.values(), *profile.tags.keys()]).lower()
        if _FINE_TUNE.search(words):
            drop_in = family.training_support == "drop_in"
            return "fine_tuning", table.drop_in_fine_tuning if drop_in else table.fine_tuning
        if profile.instance_count >= table.multi_node_min_instances:
            return "distributed_pretraining", table.pretraining_multi_node
        if _PRETRAIN.search(words) or profile.instance_count > 1:
            return "pretraining", table.pretraining
        return "training", max(family.porting_effort, table.fine_tuning, key=_EFFORT_ORDER.index)

    @staticmethod
    def _confidence(profile: ResourceProfile, family: ModelFamily) -> Confidence:
        """Medium at best: the gain is a representative ratio until a benchmark measures it. Low for a guessed
        family, and for Batch (its spend is the capacity provisioned at scan time, not a bill)."""
        guessed = family_guessed(profile) or profile.kind == "batch_compute_environment"
        confidence: Confidence = "medium" if family.training_support == "drop_in" and not guessed else "low"
        return rate_confidence(profile, confidence)
