"""Ways to run a workload (:class:`Option`) and the verdict: move only when the move pays back.

A move is judged on money alone: it must save something, a one-off job must save more than its port costs,
and a recurring saving must pay the port back within the planner's payback limit. Otherwise the workload stays
where it runs, and the plan says which condition failed, with the numbers.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from decimal import Decimal

from chipwise.analyse import sizing
from chipwise.analyse.sizing import Stack
from chipwise.catalog import BedrockPrice, InstanceType
from chipwise.economics import break_even_months
from chipwise.models.common import Effort
from chipwise.plan.context import ZERO, Context, short_name
from chipwise.plan.document import RecommendedPlatform
from chipwise.plan.inputs import Inputs
from chipwise.render import money

PLATFORM_OF: dict[str, RecommendedPlatform] = {
    "nvidia": "gpu",
    "cpu": "gpu",
    "inferentia": "inferentia",
    "trainium": "trainium",
}


@dataclass
class Option:
    """One way to run a workload: where, how many, what it costs a month, and the one-time effort to get there."""

    platform: RecommendedPlatform
    instance: InstanceType | None
    count: int | None
    monthly_cost: Decimal
    effort: Effort
    reason: str
    notes: list[str] = field(default_factory=list)
    throughput: Decimal | None = None  # requests a second per instance (serving options)
    bedrock: BedrockPrice | None = None
    # A Neuron option: the stack it runs (from neuron_software.json), named in the plan with its status.
    software: Stack | None = None


def keep(inp: Inputs, reason: str) -> Option:
    """Stay where the workload runs today."""
    return Option(
        platform=PLATFORM_OF[inp.current.platform],
        instance=inp.current,
        count=inp.count,
        monthly_cost=inp.current_cost,
        effort="none",
        reason=reason,
        throughput=inp.throughput,
    )


@dataclass(frozen=True)
class SharedPort:
    """A Neuron port another workload of the same model already pays for, and the stack it ports to."""

    workload: str
    stack: Stack


def port_effort(inp: Inputs, shared: SharedPort | None, target: InstanceType) -> tuple[Effort, str]:
    """The Neuron porting effort to ``target`` and why. None when the workload already runs on Neuron, or when
    another workload's port is to the same stack (one stack does both); a port to a different stack (native
    PyTorch training on trn1, NxD Inference serving on inf2) is a port of its own."""
    if inp.current.neuron:
        return "none", "It already runs on Neuron, so no port is needed."
    stack = sizing.software(target.family, inp.workload.stage)
    if shared is not None and stack is not None and shared.stack.name == stack.name:
        return "none", (
            f"The Neuron port of “{shared.workload}” covers it: {stack.name} does both (AWS Neuron documentation)."
        )
    separate = ""
    if shared is not None and stack is not None:
        separate = (
            f" A port of its own: “{shared.workload}” ports to {shared.stack.short} on {shared.stack.family}, this "
            f"one to {stack.short} on {stack.family}, a different Neuron stack (AWS Neuron documentation)."
        )
    if inp.workload.custom_cuda_kernels:
        note = "Its custom CUDA kernels must be rewritten for Neuron (NKI) or replaced: months of work."
        return "months", note + separate
    family = inp.family
    support = family.support(inp.workload.stage).replace("_", "-")
    note = f"{short_name(family)} has {support} Neuron support: porting takes {family.porting_effort}."
    return family.porting_effort, note + separate


@dataclass
class Findings:
    """What an analysis found: options best first, reasons against moving at all, assumptions it made."""

    candidates: list[Option] = field(default_factory=list)
    blockers: list[str] = field(default_factory=list)
    assumptions: list[str] = field(default_factory=list)


@dataclass
class Verdict:
    """The chosen option and the money: ``moved`` is False when the workload stays where it runs."""

    chosen: Option
    moved: bool
    rationale: list[str]
    port_cost: Decimal
    break_even: float | None


def judge(inp: Inputs, option: Option, ctx: Context) -> tuple[Verdict | None, str]:
    """The verdict if the move pays back; otherwise None and why not."""
    port_cost = ctx.porting_cost(option.effort)
    saving = inp.current_cost - option.monthly_cost
    if saving <= 0:
        costs = f"{money(option.monthly_cost)} against {money(inp.current_cost)} today"
        return None, f"{_where(option)} would cost {costs}: no saving."
    if inp.workload.one_off:
        if saving < port_cost:
            return None, (
                f"A one-off job: {_where(option)} would save {money(saving)} on the run, less than the "
                f"{money(port_cost)} port ({option.effort})."
            )
        return Verdict(option, True, [], port_cost, None), ""
    months = break_even_months(port_cost, saving)
    limit = ctx.planning("max_payback_months")
    if months is not None and Decimal(str(months)) > limit:
        return None, (
            f"{_where(option)} would save {money(saving)} a month, but the {money(port_cost)} port ({option.effort}) "
            f"takes {months} months to pay back (more than {limit})."
        )
    return Verdict(option, True, [], port_cost, months), ""


def _where(option: Option) -> str:
    if option.platform == "bedrock" and option.bedrock is not None:
        return f"Amazon Bedrock ({option.bedrock.name})"
    assert option.instance is not None
    return f"{option.count} × {option.instance.name}"


def decide(inp: Inputs, candidates: list[Option], ctx: Context, blockers: list[str]) -> Verdict:
    """The first candidate that pays back; otherwise stay where it runs, saying why."""
    refusals: list[str] = []
    for option in candidates:
        verdict, why = judge(inp, option, ctx)
        if verdict is not None:
            verdict.rationale = [option.reason, *refusals, *option.notes]
            return verdict
        refusals.append(why)
    stay = keep(inp, "Stay on the current instances for now.")
    reasons = [*blockers, *refusals] or ["No Neuron or Bedrock option could be priced for it."]
    return Verdict(stay, False, [stay.reason, *reasons], ZERO, None)
