"""Training options: Trainium for mainstream models, the GPU for custom CUDA (decision table, domain.md).

Training is compared in dollars per trained model, not dollars an hour: the catalog's representative
price-performance gain prices the Trainium run, and the cluster suggested is the one that holds the training
state (and at least today's accelerator memory). The benchmark the plan asks for is what confirms the gain.
"""

from __future__ import annotations

from decimal import Decimal

from chipwise.analyse import sizing
from chipwise.catalog import InstanceType
from chipwise.plan.context import Context, short_name
from chipwise.plan.inputs import Inputs
from chipwise.plan.options import Findings, Option, SharedPort, port_effort
from chipwise.render import money


def _memory_gib(inp: Inputs, ctx: Context) -> Decimal:
    """At least the accelerator memory in use today, and what the model's training state needs."""
    today = inp.current.accelerator_memory_gib * inp.count
    if inp.params_billion is None:
        return today
    state = sizing.replica_memory_gib(
        inp.params_billion,
        ctx.planning("training_bytes_per_parameter"),
        ctx.figure("memory_headroom_factor", ctx.assumptions.memory_headroom_factor),
    )
    return max(today, state)


def _cluster(ctx: Context, family: str, need: Decimal) -> tuple[InstanceType, int] | None:
    """One instance when one fits; otherwise the family's largest size, as many as the memory needs (the sizing
    engine's memory cluster)."""
    fit = sizing.memory_cluster(ctx.catalog.family(family), ctx.catalog, ctx.region, need)
    return None if fit is None else (fit.instance, fit.count)


def _families(inp: Inputs, ctx: Context) -> tuple[str, ...]:
    """trn2 first for large models (trn1 when trn2 cannot be priced); trn1 for smaller, cheaper fine-tunes."""
    large = ctx.planning("large_training_min_params_billion")
    if inp.params_billion is not None and inp.params_billion >= large:
        return ctx.data.targets.training_large
    return ctx.data.targets.training


def trainium(inp: Inputs, ctx: Context, shared_port: SharedPort | None) -> tuple[Option | None, list[str]]:
    """The Trainium option (None when Neuron cannot train the model), and notes on what was passed over."""
    if inp.family.training_support == "unsupported":
        return None, [f"{short_name(inp.family)} cannot be trained on Neuron today."]
    need = _memory_gib(inp, ctx)
    skipped: list[str] = []
    for family in _families(inp, ctx):
        cluster = _cluster(ctx, family, need)
        if cluster is None:
            skipped.append(f"{family} has no on-demand price in {ctx.region} (capacity blocks or reserved only).")
            continue
        instance, count = cluster
        ctx.price(instance)
        gain = ctx.figure(
            "trainium_training_price_performance_gain", ctx.assumptions.trainium_training_price_performance_gain
        )
        option = Option(
            platform="trainium",
            instance=instance,
            count=count,
            monthly_cost=inp.current_cost * (1 - gain),
            effort="none",
            reason=(
                "Training a mainstream model: Trainium is purpose-built for it, at a representative "
                f"{gain * 100:.0f} % lower cost per trained model (benchmark yours)."
            ),
            notes=[f"Priced on {family}: {note}" for note in skipped],
        )
        option.effort, effort_note = port_effort(inp, shared_port, instance)
        option.notes.append(effort_note)
        return option, skipped
    return None, skipped


def training_candidates(inp: Inputs, ctx: Context, shared_port: SharedPort | None) -> Findings:
    """The option worth recommending, or the reasons against moving at all."""
    option, notes = trainium(inp, ctx, shared_port)
    if inp.workload.custom_cuda_kernels and not inp.current.neuron:
        period = "for the run" if inp.workload.one_off else "a month"
        would = f" Trainium would cost about {money(option.monthly_cost)} {period}." if option else ""
        blocker = (
            "Custom CUDA kernels in training: the Neuron port may cost more than it saves, so the decision table "
            f"keeps it on the GPU (P family).{would}"
        )
        return Findings(blockers=[blocker])
    return Findings(candidates=[option] if option else [], blockers=notes)
