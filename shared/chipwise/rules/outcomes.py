"""Each rule's outcome on each resource, and the one verdict per resource they add up to. Pure.

A rule's ``evaluate`` says only whether it fired. For a rule that did not fire this module says why, from the
rule's scope (the platforms and kinds it looks at, live capacity only or not) and the inputs it needs (accelerator
telemetry, a price, the model's size, traffic history): outside its scope it does not apply; with an input missing
it could not judge (the input named); otherwise it checked the resource and its conditions did not hold (passed,
with the evidence it read).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from decimal import Decimal
from functools import lru_cache

from chipwise.analyse.profiles import ResourceProfile
from chipwise.models.common import SERVING_KINDS
from chipwise.models.verdicts import MissingInput, ResourceVerdict, RuleOutcome, RuleOutcomeKind, VerdictKind
from chipwise.presentation import plural
from chipwise.rules.base import ENDPOINT_OR_INSTANCE, RuleContext, copied
from chipwise.rules.sizing import model_size

NVIDIA = ("nvidia",)
NEURON = ("inferentia", "trainium")
ACCELERATED = ("nvidia", "inferentia", "trainium")
BYTES_PER_PARAMETER = Decimal(2)  # bf16/fp16 weights: the size check only asks whether a size is stated at all


@dataclass(frozen=True)
class RuleScope:
    """What a rule looks at and what it needs to judge."""

    platforms: tuple[str, ...]
    kinds: tuple[str, ...]
    families: tuple[str, ...] = ()  # empty: every family of the platforms
    live_only: bool = True
    needs: tuple[MissingInput, ...] = ()


SCOPES: dict[str, RuleScope] = {
    "gpu_idle": RuleScope(NVIDIA, (*SERVING_KINDS, "ec2_instance"), needs=("price", "telemetry")),
    "gpu_inference_portable": RuleScope(
        NVIDIA, ENDPOINT_OR_INSTANCE, needs=("price", "telemetry", "model size", "traffic history")
    ),
    "gpu_training_portable": RuleScope(
        NVIDIA,
        ("sagemaker_training_job", "ec2_instance", "batch_compute_environment"),
        live_only=False,
        needs=("price",),
    ),
    "inferentia_idle": RuleScope(("inferentia",), ENDPOINT_OR_INSTANCE, needs=("price", "telemetry")),
    "inferentia_underutilized": RuleScope(("inferentia",), ENDPOINT_OR_INSTANCE, needs=("price", "telemetry")),
    "neuron_telemetry_missing": RuleScope(NEURON, ENDPOINT_OR_INSTANCE),
    "spiky_inference_bedrock": RuleScope(ACCELERATED, ("sagemaker_endpoint",), needs=("price", "traffic history")),
    "trainium_serving_inference": RuleScope(
        ("trainium",), ENDPOINT_OR_INSTANCE, needs=("price", "telemetry", "model size")
    ),
    "accelerator_off_hours": RuleScope(ACCELERATED, ENDPOINT_OR_INSTANCE, needs=("price", "telemetry")),
}
DEFAULT_SCOPE = RuleScope(ACCELERATED, ())
# A verdict's fields copied from the profile (field: the profile's attribute).
VERDICT_FROM_PROFILE = {"resource_id": "key", **{name: name for name in ("name", "kind", "platform", "instance_type")}}
PORTING_RULES = frozenset({"gpu_inference_portable", "gpu_training_portable"})
# Rules that move one whole workload: a variant shared by inference components is not one.
WHOLE_WORKLOAD_RULES = frozenset({"gpu_inference_portable", "spiky_inference_bedrock", "trainium_serving_inference"})


def launched_by_batch(environment: str) -> str:
    """Why an instance an AWS Batch compute environment launched is not judged on its own."""
    return (
        f"part of AWS Batch compute environment {environment}, which launched it: judged there (the environment "
        "carries its cost, and Batch would replace an instance stopped on its own)"
    )


def out_of_scope_reason(profile: ResourceProfile) -> str | None:
    """Why no rule looks at a resource at all (an instance a Batch compute environment launched, CPU, serverless,
    stopped), or None."""
    if profile.batch_environment:
        return launched_by_batch(profile.batch_environment)
    if profile.platform not in ACCELERATED:
        return f"{profile.platform} capacity: Chipwise judges AI accelerators only"
    if profile.serverless:
        return "serverless inference: billed per request, no instance to resize or stop"
    if not profile.live and profile.kind != "sagemaker_training_job":
        return f"not running (state {profile.state or 'unknown'}): nothing bills"
    return None


def _missing(profile: ResourceProfile, need: MissingInput, ctx: RuleContext) -> bool:
    signals = profile.signals
    if need == "price":
        return profile.monthly_cost is None and profile.cost.hourly_rate is None
    if need == "telemetry":
        if profile.neuron:
            return profile.neuron_telemetry == "missing" or signals.neuron_util is None
        return signals.gpu_util is None and signals.invocations is None
    if need == "traffic history":
        return signals.invocations is None and signals.neuron_executions is None and signals.generated_tokens is None
    return model_size(profile, ctx.families, ctx.catalog, BYTES_PER_PARAMETER) is None


_NEED_WORDS: dict[str, str] = {
    "price": "no price: neither a cost in the bill nor a public on-demand price for its type",
    "telemetry": "no accelerator telemetry (utilisation metrics) in the window",
    "traffic history": "no traffic history (requests or executions) in the window",
    "model size": "the model's size is not stated (model id, tag, JumpStart id, artifact path or device memory)",
}


# SageMaker publishes GPUUtilization summed over the instance's GPUs (0 to 100 × GPUs): shown per GPU.
SUMMED_GPU_SOURCES = frozenset({"/aws/sagemaker/Endpoints", "/aws/sagemaker/TrainingJobs"})


def _per_device(value: float, devices: int) -> float:
    """A utilisation as one device's share, bounded to 0-100 %."""
    return max(0.0, min(100.0, value / max(devices, 1)))


def _gpu_words(profile: ResourceProfile, ctx: RuleContext) -> str | None:
    gpu = profile.signals.gpu_util
    if gpu is None:
        return None
    facts = ctx.catalog.get(profile.instance_type) if profile.instance_type else None
    devices = facts.accelerator_count if facts is not None and profile.signals.gpu_source in SUMMED_GPU_SOURCES else 1
    p95, peak = _per_device(gpu.p95, devices), _per_device(gpu.maximum, devices)
    return f"GPU p95 {p95:.0f} %, max {peak:.0f} % per GPU"


def _neuron_words(profile: ResourceProfile) -> str | None:
    util = profile.signals.neuron_util
    if util is None:
        return None
    return f"busiest NeuronCore p95 {_per_device(util.p95, 1):.0f} %, max {_per_device(util.maximum, 1):.0f} %"


def _traffic_words(profile: ResourceProfile) -> str | None:
    s = profile.signals
    if s.invocations is None:
        return None
    return f"requests in {s.invocations.hours} of {profile.window_hours:.0f} hours"


def _evidence(profile: ResourceProfile, ctx: RuleContext) -> str:
    """What the rules read when their conditions did not hold: the utilisation (per device, 0-100 %) and traffic."""
    parts = [w for w in (_gpu_words(profile, ctx), _neuron_words(profile), _traffic_words(profile)) if w]
    if profile.monthly_cost is not None:
        parts.append(f"${profile.monthly_cost:,.2f} a month")
    return "; ".join(parts) or "its inputs"


def _deciding(rule_id: str, profile: ResourceProfile, ctx: RuleContext) -> str:
    """The figure a rule's own conditions rest on, as it read it on this resource (each rule its own)."""
    words: str | None
    if rule_id in ("gpu_idle", "gpu_inference_portable", "gpu_training_portable"):
        words = _gpu_words(profile, ctx)
    elif rule_id in ("inferentia_idle", "inferentia_underutilized", "trainium_serving_inference"):
        words = _neuron_words(profile)
    elif rule_id == "neuron_telemetry_missing":
        source = profile.signals.neuron_source
        words = f"Neuron telemetry {profile.neuron_telemetry}" + (f" (from {source})" if source else "")
        if profile.neuron_telemetry == "missing":  # it passed anyway: the resource has not run long enough yet
            words += f" after {profile.run_hours:.0f} hours running: too recent for the rule to report"
    elif rule_id == "spiky_inference_bedrock":
        words = _traffic_words(profile)
    elif rule_id == "accelerator_off_hours":
        util = _neuron_words(profile) if profile.neuron else _gpu_words(profile, ctx)
        words = "; ".join(w for w in (util, _traffic_words(profile)) if w) or None
    elif rule_id == "capacity_held_idle":
        if profile.unused_instances is not None:
            words = f"{profile.unused_instances} reserved instances nothing runs in"
        else:
            words = None if profile.min_vcpus is None else f"minimum {profile.min_vcpus} vCPUs held"
    elif rule_id == "cannot_judge":
        words = "its signals agree" + (f" ({_gpu_words(profile, ctx)})" if profile.signals.gpu_util else "")
    else:
        words = None
    return words or _evidence(profile, ctx)


@lru_cache(maxsize=4096)
def _outcome(rule_id: str, outcome: RuleOutcomeKind, reason: str, missing: MissingInput | None = None) -> RuleOutcome:
    """One outcome, made once: a fleet of alike resources gets the same few outcomes (frozen, so shared) thousands
    of times, and building each again was a tenth of the rules stage."""
    return RuleOutcome(rule_id=rule_id, outcome=outcome, reason=reason, missing=missing)


def rule_outcome(
    rule_id: str, profile: ResourceProfile, ctx: RuleContext, *, fired: bool, superseded: bool = False
) -> RuleOutcome:
    """One rule's outcome on one profile, with the reason (and the missing input when it could not judge)."""
    if fired:
        kind: RuleOutcomeKind = "superseded" if superseded else "fired"
        return _outcome(
            rule_id=rule_id,
            outcome=kind,
            reason="made a finding"
            + (" that a more specific finding on the same resource replaces" if superseded else ""),
        )
    if profile.batch_environment:
        return _outcome(
            rule_id=rule_id,
            outcome="not_applicable",
            reason=f"judged on AWS Batch compute environment {profile.batch_environment}, which launched it",
        )
    scope = SCOPES.get(rule_id, DEFAULT_SCOPE)
    if profile.platform not in scope.platforms or (scope.kinds and profile.kind not in scope.kinds):
        looks_at = ", ".join(scope.platforms)
        return _outcome(
            rule_id=rule_id,
            outcome="not_applicable",
            reason=f"looks at {looks_at} {' / '.join(k.replace('_', ' ') for k in scope.kinds) or 'resources'}; "
            f"this one: {profile.platform}, {profile.kind.replace('_', ' ')}",
        )
    if scope.live_only and not profile.live:
        return _outcome(rule_id=rule_id, outcome="not_applicable", reason="looks at running capacity only")
    if rule_id in PORTING_RULES and profile.hints.custom_cuda:
        return _outcome(
            rule_id=rule_id, outcome="not_applicable", reason="custom CUDA kernels: a Neuron port is not proposed"
        )
    if rule_id in WHOLE_WORKLOAD_RULES and profile.shares_instances:
        return _outcome(
            rule_id=rule_id,
            outcome="not_applicable",
            reason="a variant its inference components share: each component is judged on its own",
        )
    for need in scope.needs:
        if _missing(profile, need, ctx):
            return _outcome(rule_id=rule_id, outcome="lacked_data", reason=_NEED_WORDS[need], missing=need)
    return _outcome(
        rule_id=rule_id,
        outcome="passed",
        reason=f"checked: its conditions did not hold ({_deciding(rule_id, profile, ctx)})",
    )


def resource_verdict(
    profile: ResourceProfile, outcomes: Sequence[RuleOutcome], ctx: RuleContext, titles: Mapping[str, str]
) -> ResourceVerdict:
    """The one verdict the rules' outcomes add up to, its reason quoting the outcome that decided it (rules named
    by their titles). The findings' ledger settles it after the benchmarks
    (:func:`chipwise.analyse.verdicts.settle_verdicts`)."""

    identity = copied(profile, VERDICT_FROM_PROFILE)

    def verdict(
        kind: VerdictKind, reason: str, missing: Sequence[MissingInput] = (), rules: Sequence[str] = ()
    ) -> ResourceVerdict:
        return ResourceVerdict(
            **identity,
            verdict=kind,
            reason=reason,
            missing=list(missing),
            finding_rules=list(rules),
            outcomes=list(outcomes),
        )

    def title(rule_id: str) -> str:
        return titles.get(rule_id, rule_id)

    fired = [o.rule_id for o in outcomes if o.outcome == "fired"]
    if fired:
        return verdict("waste", f"{plural(len(fired), 'finding')}: {', '.join(map(title, fired))}", rules=fired)
    scoped = out_of_scope_reason(profile)
    applied = [o for o in outcomes if o.outcome != "not_applicable"]
    if scoped is not None or not applied:
        kind = profile.kind.replace("_", " ")
        # A rule that would judge this kind but stood aside says why (custom CUDA kernels, a shared variant).
        aside = [o for o in outcomes if not o.reason.startswith(("looks at ", "looks at running"))]
        why = "; ".join(f"{title(o.rule_id)} does not apply: {o.reason}" for o in aside)
        return verdict("out_of_scope", scoped or why or f"no rule judges a {profile.platform} {kind}")
    lacking = [o for o in applied if o.outcome == "lacked_data"]
    if lacking:
        missing = sorted({o.missing for o in lacking if o.missing is not None})
        names = ", ".join(title(o.rule_id) for o in lacking)
        passed = [o for o in applied if o.outcome == "passed"]
        cleared = f"; {plural(len(passed), 'other rule')} checked and did not fire" if passed else ""
        reason = f"missing {', '.join(missing)}: {names} could not judge{cleared}"
        return verdict("cannot_judge", reason, missing=missing)
    return verdict("efficient", f"checked by {plural(len(applied), 'rule')}, none fired: {_evidence(profile, ctx)}")
