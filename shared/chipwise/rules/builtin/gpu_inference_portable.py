"""gpu_inference_portable: a GPU endpoint or instance steadily serving a model Inferentia runs.

Steady means traffic in most hours without big spikes (endpoints: requests in ``min_active_hour_share`` of the
hours, peak-to-mean at most ``max_peak_to_mean``; instances: the busiest GPU above ``min_gpu_p10_pct`` nine hours in
ten). Spiky or idle serving belongs to ``spiky_inference_bedrock`` / ``gpu_idle``.

Sizing: the GPUs kept busy at p95 are converted to A10G-equivalents (``gpu_throughput.json``, by memory bandwidth),
then to Inferentia2 chips with the economics' inf2-vs-g5 throughput ratio (and to Inferentia1 chips with the
inf2-vs-inf1 ratio for small models), times the core headroom. The target is the cheapest inf2 (inf1 for models up
to ``small_model_max_params_billion``) whose accelerator memory holds the model with headroom. The saving is the
difference in monthly cost, which is the difference in cost per million requests times the monthly requests.
"""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal

from pydantic import Field

from chipwise.analyse.accelerators import get_gpu_throughput
from chipwise.analyse.profiles import ResourceProfile
from chipwise.analyse.sizing import Fit
from chipwise.catalog import ModelFamily, SupportLevel, get_neuron_software
from chipwise.economics import HOURS_PER_MONTH, cost_per_million_observed
from chipwise.models.common import Confidence, Effort
from chipwise.rules.base import (
    EvidenceValue,
    FindingDraft,
    RuleContext,
    SavingParams,
    Share,
    cost_evidence,
    money,
)
from chipwise.rules.base import rounded as r
from chipwise.rules.migration import MigrationRule, SizedTarget, resizing_meta
from chipwise.rules.registry import register
from chipwise.rules.sizing import HUNDRED, ModelSize, family_guessed, model_family, model_size, rate_confidence
from chipwise.rules.tokens import token_evidence
from chipwise.rules.traffic import requests

SUMMED_GPU_SOURCES = ("/aws/sagemaker/Endpoints",)  # published as the sum across the instance's GPUs


class GpuInferencePortableParams(SavingParams):
    gpu_families: tuple[str, ...] = Field(
        ("g5", "g6", "g6e", "p4d", "p4de", "p5", "p5e", "p5en"), description="GPU families considered."
    )
    support_levels: tuple[SupportLevel, ...] = Field(
        ("drop_in", "supported"), min_length=1, description="Neuron inference support levels worth a port."
    )
    min_active_hour_share: Share = Field(
        0.8, description="Endpoints: share of hours with requests that makes serving steady."
    )
    max_peak_to_mean: float = Field(5, gt=1, description="Endpoints: peak hour ÷ mean hour above which it is spiky.")
    min_gpu_p10_pct: float = Field(
        5, ge=0, le=100, description="Instances: busiest-GPU utilisation held nine hours in ten to count as steady."
    )
    small_model_max_params_billion: Decimal = Field(
        Decimal(1), gt=0, description="Models up to this size go to Inferentia1 (small models at high volume)."
    )
    bytes_per_parameter: Decimal = Field(Decimal(2), gt=0, description="Model bytes per parameter (2 = BF16).")


@dataclass(frozen=True)
class _Sizing:
    size: ModelSize
    busy_gpus: Decimal
    a10g_equivalents: Decimal
    chips: Decimal  # target chips before headroom
    target_families: tuple[str, ...]


@register
class GpuInferencePortable(MigrationRule[GpuInferencePortableParams]):
    """At steady utilisation Inferentia serves supported models at a lower cost per request than GPUs (batched
    throughput 2-3x a g5 per instance); small models belong on Inferentia1."""

    meta = resizing_meta(
        title="GPU inference portable to Inferentia",
        severity="medium",
        applies_to="Live g5/g6/g6e/p4d/p5 SageMaker endpoints and EC2 instances serving inference",
    )

    def evaluate(self, profile: ResourceProfile, ctx: RuleContext) -> FindingDraft | None:
        family = self._eligible(profile, ctx)
        monthly = profile.monthly_cost
        if family is None or monthly is None or not self._steady(profile):
            return None
        sizing = self._sizing(profile, ctx)
        if sizing is None:
            return None
        economics = ctx.assumptions
        chips = sizing.chips * economics.core_headroom_factor.value
        memory = sizing.size.memory_gib
        target = self.size(profile, ctx, sizing.target_families, memory_gib=memory, a10g_units=sizing.a10g_equivalents)
        unpriced_note = ""
        if target is None and sizing.target_families == ("inf1",):
            # No priced inf1 size (SageMaker publishes none): the cheapest priced target that fits is inf2, sized
            # with inf2's throughput; inf1 stays an option to ask AWS about.
            target = self.size(profile, ctx, ("inf2",), memory_gib=memory, a10g_units=sizing.a10g_equivalents)
            unpriced_note = " Inferentia1 would suit a model this small, but has no public price here: ask for a quote."
        if target is None or not self.worth_reporting(target.saving):
            return None
        fit, saving = target.fit, target.saving
        best = self._best_case(sizing, target, profile, ctx)
        span = f"{money(saving)}-{money(monthly - best.monthly_usd)}" if best.monthly_usd < fit.monthly_usd else ""
        effort = _inference_effort(family, ctx)
        one_time = economics.porting_cost_usd(effort)
        software = get_neuron_software()
        path = software.serving_path(fit.instance.family)
        llm = (
            sizing.size.params_billion is not None
            and sizing.size.params_billion > self.params.small_model_max_params_billion
        )
        stack = f" Software: {path}." if path else ""
        if llm and software.serving_status(fit.instance.family) == "maintenance":
            stack += (
                " The go-forward LLM serving stack (vLLM Neuron) runs on trn2/trn3 only, which has no on-demand "
                "price to compare: inf2 is chosen for cost per token on a supported model; ask for a trn2 quote "
                "if the model needs newer serving features."
            )
        outcome = target.outcome(
            monthly,
            "migrate",
            confidence=self._confidence(profile, family),
            summary=f"{profile.name} steadily serves {family.name} on {profile.instance_count} × "
            f"{profile.instance_type} ({money(monthly)}/month): {fit.count} × {fit.instance.name} carries the "
            f"same load for {money(fit.monthly_usd)}/month, saving {money(saving)}/month"
            f"{f' (range {span} if Inferentia2 reaches the high end of its throughput range)' if span else ''}; "
            f"porting takes {effort}.{unpriced_note}{stack}",
            software_path=path,
            evidence={
                **self._evidence(profile, family, sizing, target.need.memory_gib, chips, fit, monthly),
                "savings_low_usd": r(saving),
                "savings_high_usd": r(monthly - best.monthly_usd),
                "best_case_target_count": best.count,
                "throughput_ratio_low": r(economics.inferentia2_inference_throughput_ratio.low, 3),
                "throughput_ratio_high": r(economics.inferentia2_inference_throughput_ratio.high, 3),
                "porting_cost_usd": r(one_time),
                **cost_evidence(profile),
            },
            signals_used=_signals_used(profile),
            effort=effort,
            one_time_cost=one_time,
        )
        return self.draft(profile, outcome)

    def _best_case(self, sizing: _Sizing, target: SizedTarget, profile: ResourceProfile, ctx: RuleContext) -> Fit:
        """The same target family sized at the high end of the throughput ratio (the saving's upper bound). The
        estimate itself uses the data file's representative value, which is also the range's low end."""
        fit = target.fit
        ratio = ctx.assumptions.inferentia2_inference_throughput_ratio
        if ratio.high is None or ratio.high <= ratio.value or fit.instance.family != "inf2":
            return fit
        chips = sizing.a10g_equivalents / ratio.high
        best = self.size(profile, ctx, (fit.instance.family,), memory_gib=sizing.size.memory_gib, chips=chips)
        return best.fit if best is not None and best.fit.monthly_usd <= fit.monthly_usd else fit

    def _eligible(self, profile: ResourceProfile, ctx: RuleContext) -> ModelFamily | None:
        if profile.platform != "nvidia" or not self.dedicated(profile):
            return None
        if profile.family not in self.params.gpu_families or profile.hints.custom_cuda:
            return None
        if profile.kind == "ec2_instance" and profile.hints.workload != "inference":
            return None
        family = model_family(profile, ctx.families)
        if family is None or family.inference_support not in self.params.support_levels:
            return None
        return family

    def _steady(self, profile: ResourceProfile) -> bool:
        traffic = requests(profile)
        if traffic is not None:
            ratio = traffic.peak_to_mean
            return (
                traffic.active_share >= self.params.min_active_hour_share
                and ratio is not None
                and ratio <= self.params.max_peak_to_mean
            )
        gpu = profile.signals.gpu_util
        return profile.kind == "ec2_instance" and gpu is not None and gpu.p10 >= self.params.min_gpu_p10_pct

    def _sizing(self, profile: ResourceProfile, ctx: RuleContext) -> _Sizing | None:
        gpu = profile.signals.gpu_util
        facts = ctx.catalog.get(profile.instance_type or "")
        speed = get_gpu_throughput().relative(profile.family or "")
        size = model_size(profile, ctx.families, ctx.catalog, self.params.bytes_per_parameter)
        if gpu is None or facts is None or not facts.accelerator_count or speed is None or size is None:
            return None
        gpus = Decimal(facts.accelerator_count)
        share = Decimal(str(gpu.p95)) / HUNDRED
        # Summed across GPUs (SageMaker) it is already in GPUs; the busiest GPU (agent) stands for all of them.
        per_instance = min(gpus, share) if profile.signals.gpu_source in SUMMED_GPU_SOURCES else gpus * share
        busy = per_instance * profile.instance_count
        a10g = busy * speed
        chips = a10g / ctx.assumptions.inferentia2_inference_throughput_ratio.value
        small = size.params_billion is not None and size.params_billion <= self.params.small_model_max_params_billion
        if small:
            return _Sizing(size, busy, a10g, chips * ctx.assumptions.inf2_vs_inf1_throughput_ratio.value, ("inf1",))
        return _Sizing(size, busy, a10g, chips, ("inf2",))

    @staticmethod
    def _evidence(
        profile: ResourceProfile,
        family: ModelFamily,
        sizing: _Sizing,
        memory: Decimal,
        chips: Decimal,
        fit: Fit,
        monthly: Decimal,
    ) -> dict[str, EvidenceValue]:
        traffic = requests(profile)
        gpu = profile.signals.gpu_util
        monthly_requests = Decimal(str(traffic.mean_per_hour)) * HOURS_PER_MONTH if traffic else Decimal(0)
        current_cpm = cost_per_million_observed(monthly, monthly_requests)
        target_cpm = cost_per_million_observed(fit.monthly_usd, monthly_requests)
        return {
            "model_family": family.id,
            "inference_support": family.inference_support,
            "model_params_billion": r(sizing.size.params_billion),
            "model_memory_gib": r(sizing.size.memory_gib),
            "model_memory_basis": sizing.size.basis,
            "required_memory_gib": r(memory),
            "gpu_p50_pct": r(gpu.p50) if gpu else None,
            "gpu_p95_pct": r(gpu.p95) if gpu else None,
            "busy_gpus_p95": r(sizing.busy_gpus),
            "a10g_equivalents": r(sizing.a10g_equivalents),
            "required_chips": r(chips),
            "mean_requests_per_hour": r(traffic.mean_per_hour) if traffic else None,
            "peak_requests_per_hour": r(traffic.peak_per_hour) if traffic else None,
            "active_hour_share": r(traffic.active_share, 3) if traffic else None,
            "latency_ms": r(profile.signals.latency_us.mean / 1000) if profile.signals.latency_us else None,
            "current_cost_per_million_requests_usd": r(current_cpm, 4),
            "target_cost_per_million_requests_usd": r(target_cpm, 4),
            "target_hourly_usd": r(fit.hourly_usd, 6),
            "target_monthly_usd": r(fit.monthly_usd),
            **token_evidence(profile, fit.monthly_usd),
        }

    @staticmethod
    def _confidence(profile: ResourceProfile, family: ModelFamily) -> Confidence:
        """Medium at best: the throughput ratio is representative until a benchmark measures it."""
        guessed = family_guessed(profile)
        confidence: Confidence = "medium" if family.inference_support == "drop_in" and not guessed else "low"
        return rate_confidence(profile, confidence)


def _inference_effort(family: ModelFamily, ctx: RuleContext) -> Effort:
    """Drop-in serving of a supported model ports in days; a model that needs work, in weeks."""
    effort = ctx.assumptions.porting_effort_by_workload
    return effort.drop_in_inference if family.inference_support == "drop_in" else effort.supported_inference


def _signals_used(profile: ResourceProfile) -> tuple[str, ...]:
    present = (
        ("gpu_utilization", profile.signals.gpu_util),
        ("invocations", profile.signals.invocations),
        ("model_latency", profile.signals.latency_us),
        ("model_family", True),
        ("cost_explorer", profile.cost.rate_source == "cost_explorer"),
    )
    return tuple(name for name, value in present if value)
