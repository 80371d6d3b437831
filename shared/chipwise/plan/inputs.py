"""One workload's inputs, with every gap filled from the data files and each fill said out loud."""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal

from chipwise.catalog import InstanceType, ModelFamily
from chipwise.plan.context import HOURS_PER_DAY, SECONDS_PER_DAY, Context, ceil_div, plain, short_name
from chipwise.plan.intake import WorkloadIn


@dataclass(frozen=True)
class Inputs:
    """One workload's inputs with every gap filled (and each fill listed in ``assumptions``)."""

    workload: WorkloadIn
    family: ModelFamily
    current: InstanceType
    current_price: Decimal
    count: int
    hours: Decimal
    params_billion: Decimal | None
    demand_rps: Decimal | None
    throughput: Decimal | None
    assumptions: tuple[str, ...]

    @property
    def current_cost(self) -> Decimal:
        return self.count * self.current_price * self.hours

    @property
    def monthly_requests(self) -> Decimal | None:
        if self.workload.requests_per_day is None:
            return None
        return self.workload.requests_per_day * self.hours / HOURS_PER_DAY


def find_family(ctx: Context, text: str) -> ModelFamily | None:
    """The family named in free text ("Llama 3.1 8B", "meta-llama/Llama-3.1-8B") or by its id."""
    return ctx.families.match(text) or ctx.families.get(text)


def _family(w: WorkloadIn, ctx: Context, notes: list[str]) -> ModelFamily:
    family = find_family(ctx, w.model_family)
    if family is None:
        notes.append(
            f"“{w.model_family}” is not a model family Chipwise knows: treated as a custom architecture "
            "(Neuron support unknown until it is tried, porting effort months)."
        )
        return ctx.families.custom
    return family


def _current(w: WorkloadIn, ctx: Context, notes: list[str]) -> tuple[InstanceType, Decimal]:
    defaults = ctx.data.defaults
    name = w.current_instance_type
    if name is None:
        name = defaults.training_instance_type if w.stage == "training" else defaults.inference_instance_type
        notes.append(f"Current instance type not given: {name} assumed ({defaults.note})")
    instance = ctx.catalog.require(name)
    price = ctx.price(instance)
    if price is None:  # the intake refuses unpriced types; a default without a price is a data-file error
        raise ValueError(f"{name} has no price in {ctx.region}")
    if w.runs_outside_aws:
        notes.append(f"Runs outside AWS today: priced as {name} on AWS on-demand, the closest AWS equivalent.")
    return instance, price


def resolve(w: WorkloadIn, ctx: Context) -> Inputs:
    """The workload's inputs; every default taken is listed in ``assumptions``."""
    notes: list[str] = []
    family = _family(w, ctx, notes)
    current, price = _current(w, ctx, notes)
    hours = w.hours_per_month or ctx.hours_per_month
    if w.hours_per_month is None:
        notes.append(f"Hours a month not given: {plain(hours)} (always on).")
    params = w.parameters_billion
    if params is None and family.typical_params_billion is not None:
        params = family.typical_params_billion
        notes.append(f"Model size not given: {plain(params)}B parameters, typical for {short_name(family)}.")
    demand = w.requests_per_day / SECONDS_PER_DAY if w.requests_per_day is not None else None
    count = w.instance_count
    if count is None:
        if demand is not None and w.current_throughput_per_instance is not None:
            count = ceil_div(demand, w.current_throughput_per_instance)
            notes.append(f"Instance count not given: {count}, from the request rate and the throughput per instance.")
        else:
            count = 1
            notes.append("Instance count not given: 1 assumed.")
    return Inputs(
        workload=w,
        family=family,
        current=current,
        current_price=price,
        count=count,
        hours=hours,
        params_billion=params,
        demand_rps=demand,
        throughput=w.current_throughput_per_instance,
        assumptions=tuple(notes),
    )
