"""The planner: an intake becomes a credits-and-migration plan (pure: no I/O beyond the cached data files).

For each workload it walks the decision table (domain.md):

* training on a mainstream model -> Trainium (trn2 for large models when priced, trn1 otherwise);
* steady LLM serving -> Inferentia2; small models at volume -> inf1 when cheaper; one chip family for both
  stages on request -> trn1 serving (priced against inf2, which it costs more than);
* a training and a serving workload of the same model family share one Neuron port;
* spiky, low-volume or foundation-model-only serving -> Amazon Bedrock, when it is priced and cheaper;
* custom CUDA training, unsupported models, and ports that would not pay back (one-off jobs, slow payback)
  -> stay on the GPU, with the numbers that say why.

Instance counts come from throughput (requests a second per accelerator, scaled by the catalog's throughput
ratio), costs from catalog prices, porting cost from the effort and the loaded engineer-week; every figure
used is recorded with its source, every default taken for a missing field is listed as an assumption.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from datetime import datetime
from decimal import ROUND_CEILING, ROUND_HALF_UP, Decimal

from chipwise.catalog import (
    BedrockPrice,
    Catalog,
    Economics,
    Figure,
    InstanceType,
    ModelFamilies,
    ModelFamily,
    Source,
    get_catalog,
    get_economics,
    get_model_families,
)
from chipwise.models.common import Confidence, Effort
from chipwise.plan.ace import opportunity_document
from chipwise.plan.credits import CompanyProfile, CreditMatch, match_programs
from chipwise.plan.document import (
    CreditLine,
    FigureSource,
    PlanDocument,
    PlanTotals,
    RecommendedPlatform,
    WorkloadPlan,
)
from chipwise.plan.figures import PlannerData, get_planner_data
from chipwise.plan.intake import IntakeRequest, WorkloadIn
from chipwise.render import money

SECONDS_PER_HOUR = Decimal(3600)
HOURS_PER_DAY = Decimal(24)
SECONDS_PER_DAY = SECONDS_PER_HOUR * HOURS_PER_DAY
MILLION = Decimal(1_000_000)
BYTES_PER_GIB = Decimal(2**30)
BILLION = Decimal(1_000_000_000)
ZERO = Decimal(0)
_PLATFORM_OF: dict[str, RecommendedPlatform] = {
    "nvidia": "gpu",
    "cpu": "gpu",
    "inferentia": "inferentia",
    "trainium": "trainium",
}
_BEDROCK_SIZE = re.compile(r"(\d+(?:\.\d+)?)\s*B\b")


# --- the record of what a plan relied on ---------------------------------------------------------------------


@dataclass
class Ledger:
    """The figures a plan used, with their sources, in first-use order (each listed once)."""

    sources: dict[str, FigureSource] = field(default_factory=dict)

    def add(self, figure: str, value: str, source: Source) -> None:
        citation = f"{source.title}: {source.citation}" + (f" ({source.url})" if source.url else "")
        if source.estimate:
            citation += " [estimate]"
        self.sources.setdefault(
            figure, FigureSource(figure=figure, value=value, source=citation, as_of=source.as_of.isoformat())
        )


@dataclass(frozen=True)
class Context:
    """The data the planner reads, loaded once per plan."""

    catalog: Catalog
    economics: Economics
    families: ModelFamilies
    data: PlannerData
    region: str
    ledger: Ledger

    @classmethod
    def load(cls, region: str) -> Context:
        return cls(get_catalog(), get_economics(), get_model_families(), get_planner_data(), region, Ledger())

    def figure(self, name: str, figure: Figure) -> Decimal:
        """An economics figure's value, recorded with its source."""
        self.ledger.add(name.replace("_", " "), f"{figure.value} ({figure.unit})", self.economics.sources[figure.source])
        return figure.value

    def planning(self, name: str) -> Decimal:
        """A planner assumption's value, recorded with its source."""
        figure: Figure = getattr(self.data.figures, name)
        self.ledger.add(name.replace("_", " "), f"{figure.value} ({figure.unit})", self.data.sources[figure.source])
        return figure.value

    def price(self, instance: InstanceType) -> Decimal | None:
        """USD/hour in the plan's region, recorded with its source; None when the catalog has no price."""
        price = self.catalog.price(instance.name, self.region)
        source = self.catalog.source_of(instance)
        if price is not None and source is not None:
            self.ledger.add(f"{instance.name} on-demand price, {self.region}", f"${plain(price)}/h", source)
        return price

    @property
    def hours_per_month(self) -> Decimal:
        return self.figure("hours_per_month", self.economics.hours_per_month)

    def engineer_weeks(self, effort: Effort) -> Decimal:
        weeks = self.economics.effort_engineer_weeks
        self.ledger.add(
            "porting effort in engineer-weeks",
            f"days {weeks.days}, weeks {weeks.weeks}, months {weeks.months}",
            self.economics.sources[weeks.source],
        )
        return self.economics.engineer_weeks(effort)

    def porting_cost(self, effort: Effort) -> Decimal:
        if effort == "none":
            return ZERO
        return self.engineer_weeks(effort) * self.figure("engineer_week_cost_usd", self.economics.engineer_week_cost_usd)


# --- inputs, with defaults for what was left out ----------------------------------------------------------------


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


def short_name(family: ModelFamily) -> str:
    """ "Llama" from "Llama (Meta Llama 2/3/3.1, Llama-based fine-tunes)"."""
    return family.name.split(" (")[0]


def plain(value: Decimal) -> str:
    """A decimal without trailing zeros or exponent: 1.006, 21.5, 730."""
    return format(value.normalize(), "f")


def ceil_div(numerator: Decimal, denominator: Decimal) -> int:
    return max(1, int((numerator / denominator).to_integral_value(rounding=ROUND_CEILING)))


def _family(w: WorkloadIn, ctx: Context, notes: list[str]) -> ModelFamily:
    family = ctx.families.match(w.model_family) or ctx.families.get(w.model_family)
    if family is None:
        notes.append(
            f"“{w.model_family}” is not a model family Chipwise knows: treated as a custom architecture "
            "(Neuron support unverified, porting effort months)."
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
    notes: list[str] = []
    family = _family(w, ctx, notes)
    current, price = _current(w, ctx, notes)
    hours = w.hours_per_month or ctx.hours_per_month
    if w.hours_per_month is None:
        notes.append(f"Hours a month not given: {hours} (always on).")
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


# --- options ---------------------------------------------------------------------------------------------------


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


def keep(inp: Inputs, reason: str) -> Option:
    """Stay where the workload runs today."""
    return Option(
        platform=_PLATFORM_OF[inp.current.platform],
        instance=inp.current,
        count=inp.count,
        monthly_cost=inp.current_cost,
        effort="none",
        reason=reason,
        throughput=inp.throughput,
    )


def port_effort(inp: Inputs, shared_port: str | None) -> tuple[Effort, str]:
    """The Neuron porting effort and why: none when already on Neuron or another workload's port covers it."""
    if inp.current.neuron:
        return "none", "It already runs on Neuron, so no port is needed."
    if shared_port:
        return "none", f"The Neuron port of “{shared_port}” covers it: one port serves both stages."
    if inp.workload.custom_cuda_kernels:
        return "months", "Its custom CUDA kernels must be rewritten for Neuron (NKI) or replaced: months of work."
    family = inp.family
    support = family.support(inp.workload.stage).replace("_", "-")
    return family.porting_effort, f"{short_name(family)} has {support} Neuron support: porting takes {family.porting_effort}."


# --- serving -----------------------------------------------------------------------------------------------------


def _ratio_for(target_family: str, ctx: Context) -> Decimal:
    """Requests a second per target accelerator / per current accelerator (catalog ratios; inf1 gains less)."""
    ratio = ctx.figure("inferentia2_inference_throughput_ratio", ctx.economics.inferentia2_inference_throughput_ratio)
    if target_family == "inf1":
        inf1 = ctx.economics.inf2_vs_inf1_throughput_ratio
        low = inf1.low if inf1.low is not None else inf1.value
        ctx.figure("inf2_vs_inf1_throughput_ratio", inf1)
        return ratio / low  # small CNN / encoder models gain least from inf2 (the figure's note): its low end
    return ratio


def _replica_memory_gib(inp: Inputs, ctx: Context) -> Decimal:
    """Accelerator memory one model replica needs (weights x headroom); the current instance's when size unknown."""
    if inp.params_billion is None:
        return inp.current.accelerator_memory_gib
    weights = inp.params_billion * BILLION * ctx.planning("inference_bytes_per_parameter") / BYTES_PER_GIB
    return weights * ctx.figure("memory_headroom_factor", ctx.economics.memory_headroom_factor)


def _serving_families(inp: Inputs, ctx: Context) -> tuple[str, ...]:
    targets = ctx.data.targets
    if inp.workload.serve_on_trainium:
        return targets.inference_on_trainium
    small = ctx.planning("small_model_max_params_billion")
    if inp.params_billion is not None and inp.params_billion <= small:
        return targets.inference_small
    return targets.inference_large


def _serving_size(inp: Inputs, ctx: Context, target: InstanceType, price: Decimal, peak: Decimal) -> Option:
    ratio = _ratio_for(target.family, ctx)
    scale = ratio * target.accelerator_count / inp.current.accelerator_count
    if inp.throughput is not None and inp.demand_rps is not None:
        per_instance = inp.throughput * scale
        count = ceil_div(inp.demand_rps * peak, per_instance)
    else:  # no rates: today's fleet is taken to be sized for its load
        per_instance = inp.throughput * scale if inp.throughput is not None else None
        count = ceil_div(Decimal(inp.count), scale)
    return Option(
        platform=_PLATFORM_OF[target.platform],
        instance=target,
        count=count,
        monthly_cost=count * price * inp.hours,
        effort="none",
        reason="",
        throughput=per_instance,
    )


def neuron_serving(inp: Inputs, ctx: Context, shared_port: str | None) -> Option | None:
    """The cheapest Neuron fleet that fits the model and carries the load; None when Neuron cannot serve it."""
    if inp.family.inference_support == "unsupported":
        return None
    need = _replica_memory_gib(inp, ctx)
    peak = ctx.planning("spiky_peak_to_average") if inp.workload.traffic == "spiky" else Decimal(1)
    options: list[Option] = []
    for family in _serving_families(inp, ctx):
        for target in ctx.catalog.family(family):
            price = ctx.catalog.price(target.name, ctx.region)
            if price is None or target.accelerator_memory_gib < need:
                continue
            options.append(_serving_size(inp, ctx, target, price, peak))
    if not options:
        return None
    best = min(options, key=lambda o: (o.monthly_cost, o.count or 0))
    assert best.instance is not None
    ctx.price(best.instance)
    best.effort, effort_note = port_effort(inp, shared_port)
    best.notes.append(effort_note)
    return best


def _bedrock_size(price: BedrockPrice) -> Decimal | None:
    found = _BEDROCK_SIZE.search(price.name)
    return Decimal(found.group(1)) if found else None


def bedrock_model(inp: Inputs, ctx: Context) -> BedrockPrice | None:
    """The Bedrock model that would serve it: the family's smallest model at least as large as this one; the
    default foundation model when any model would do; None when Bedrock does not serve the family."""
    prices = ctx.economics.bedrock_prices_for_family(inp.family.id) if inp.family.bedrock_available else []
    if prices:
        sized = sorted(((_bedrock_size(p) or ZERO, p) for p in prices), key=lambda item: item[0])
        wanted = inp.params_billion or ZERO
        return next((p for size, p in sized if size >= wanted), sized[-1][1])
    if inp.workload.foundation_model_only:
        return ctx.economics.bedrock_price(ctx.data.targets.bedrock_default_model)
    return None


def bedrock_serving(inp: Inputs, ctx: Context) -> tuple[Option | None, str | None]:
    """Amazon Bedrock at on-demand token prices; (None, why) when it cannot be priced."""
    model = bedrock_model(inp, ctx)
    if model is None:
        return None, None
    if inp.monthly_requests is None:
        return None, "Bedrock not priced: requests a day not given."
    notes: list[str] = []
    if inp.workload.tokens_per_request is not None:
        tokens = Decimal(inp.workload.tokens_per_request)
    else:
        tokens = ctx.planning("default_tokens_per_request")
        notes.append(f"Tokens a request not given: {plain(tokens)} assumed to price Amazon Bedrock.")
    share = ctx.planning("output_token_share")
    if model.output_per_million is None:  # embeddings: input tokens only
        per_million = model.input_per_million
    else:
        per_million = model.input_per_million * (1 - share) + model.output_per_million * share
    ctx.ledger.add(
        f"Amazon Bedrock {model.name} on-demand price",
        f"${model.input_per_million} in / ${model.output_per_million or model.input_per_million} out per 1M tokens",
        ctx.economics.sources[model.source],
    )
    cost = inp.monthly_requests * tokens * per_million / MILLION
    effort = ctx.data.targets.bedrock_effort
    option = Option(platform="bedrock", instance=None, count=None, monthly_cost=cost, effort=effort, reason="")
    option.bedrock = model
    option.notes.append(f"Moving to the Bedrock API is integration work ({effort}), not a Neuron port.")
    if ctx.region != ctx.economics.bedrock_on_demand.region:
        option.notes.append(f"Bedrock prices are {ctx.economics.bedrock_on_demand.region} figures.")
    return option, None


def _serving_reason(option: Option, inp: Inputs, ctx: Context) -> str:
    assert option.instance is not None
    if inp.workload.serve_on_trainium:
        return "You asked for one chip family for training and serving: Trainium serves it (it works, at a higher cost per token than Inferentia2)."
    if option.instance.family == "inf1":
        return "A small model at volume: Inferentia (inf1) is the most cost-effective chip for small models."
    return "Steady serving: Inferentia2 has the lowest cost per token at utilisation."


def serving_candidates(inp: Inputs, ctx: Context, shared_port: str | None) -> tuple[list[Option], list[str]]:
    """The options worth recommending, best first, by the decision table; plus notes on what was ruled out."""
    notes: list[str] = []
    neuron = neuron_serving(inp, ctx, shared_port)
    bedrock, bedrock_note = bedrock_serving(inp, ctx)
    if bedrock_note:
        notes.append(bedrock_note)
    if neuron is None:
        support = inp.family.inference_support.replace("_", "-")
        notes.append(f"Neuron cannot serve it as sized ({short_name(inp.family)}: inference support {support}).")
    else:
        neuron.reason = _serving_reason(neuron, inp, ctx)
    w = inp.workload
    if bedrock is not None and w.foundation_model_only:
        bedrock.reason = "It only needs a standard foundation model: Amazon Bedrock serves one with no chip to manage."
        return [o for o in (bedrock, neuron) if o is not None], notes
    if bedrock is not None and w.traffic == "spiky":
        bedrock.reason = (
            "Spiky traffic: a self-managed fleet must be sized for the peaks and idles between them; "
            "Amazon Bedrock bills only the tokens used."
        )
        return [o for o in (bedrock, neuron) if o is not None], notes
    if bedrock is not None and (neuron is None or bedrock.monthly_cost < neuron.monthly_cost):
        bedrock.reason = (
            "Low volume: pay-per-token on Amazon Bedrock costs less than the smallest always-on accelerator fleet."
        )
        return [o for o in (bedrock, neuron) if o is not None], notes
    return [o for o in (neuron, bedrock) if o is not None], notes


# --- training ----------------------------------------------------------------------------------------------------


def _training_memory_gib(inp: Inputs, ctx: Context) -> Decimal:
    """At least the accelerator memory in use today, and what the model's training state needs."""
    today = inp.current.accelerator_memory_gib * inp.count
    if inp.params_billion is None:
        return today
    state = inp.params_billion * BILLION * ctx.planning("training_bytes_per_parameter") / BYTES_PER_GIB
    return max(today, state * ctx.figure("memory_headroom_factor", ctx.economics.memory_headroom_factor))


def _training_cluster(inp: Inputs, ctx: Context, family: str, need: Decimal) -> tuple[InstanceType, int] | None:
    """One instance when one fits; otherwise the family's largest size, as many as the memory needs."""
    sizes = [t for t in ctx.catalog.family(family) if ctx.catalog.price(t.name, ctx.region) is not None]
    if not sizes:
        return None
    single = next((t for t in sizes if t.accelerator_memory_gib >= need), None)
    if single is not None:
        return single, 1
    largest = max(sizes, key=lambda t: t.accelerator_memory_gib)
    return largest, ceil_div(need, largest.accelerator_memory_gib)


def trainium_training(inp: Inputs, ctx: Context, shared_port: str | None) -> tuple[Option | None, list[str]]:
    notes: list[str] = []
    if inp.family.training_support == "unsupported":
        return None, [f"{short_name(inp.family)} cannot be trained on Neuron today."]
    targets = ctx.data.targets
    large = ctx.planning("large_training_min_params_billion")
    families = targets.training_large if inp.params_billion is not None and inp.params_billion >= large else targets.training
    need = _training_memory_gib(inp, ctx)
    for index, family in enumerate(families):
        cluster = _training_cluster(inp, ctx, family, need)
        if cluster is None:
            notes.append(f"{family} has no on-demand price in {ctx.region} (capacity blocks or reserved only).")
            continue
        instance, count = cluster
        ctx.price(instance)
        gain = ctx.figure("trainium_training_price_performance_gain", ctx.economics.trainium_training_price_performance_gain)
        option = Option(
            platform="trainium",
            instance=instance,
            count=count,
            monthly_cost=inp.current_cost * (1 - gain),
            effort="none",
            reason=(
                "Training a mainstream model: Trainium is purpose-built for it, at "
                f"{gain * 100:.0f} % lower cost per trained model (representative; benchmark yours)."
            ),
        )
        if index > 0:
            option.notes.append(f"Priced on {family}: {notes[-1]}")
        option.effort, effort_note = port_effort(inp, shared_port)
        option.notes.append(effort_note)
        return option, notes
    return None, notes


# --- choosing --------------------------------------------------------------------------------------------------


@dataclass
class Verdict:
    chosen: Option
    moved: bool
    rationale: list[str]
    port_cost: Decimal
    monthly_savings: Decimal
    one_time_savings: Decimal | None
    break_even: float | None


def _break_even(port_cost: Decimal, monthly_savings: Decimal) -> float | None:
    if monthly_savings <= 0:
        return None
    return float((port_cost / monthly_savings).quantize(Decimal("0.1"), rounding=ROUND_HALF_UP))


def judge(inp: Inputs, option: Option, ctx: Context) -> tuple[Verdict | None, str]:
    """The verdict if the move pays back; otherwise None and why not."""
    port_cost = ctx.porting_cost(option.effort)
    saving = inp.current_cost - option.monthly_cost
    if saving <= 0:
        return None, f"{_where(option)} would cost {money(option.monthly_cost)} against {money(inp.current_cost)} today: no saving."
    if inp.workload.one_off:
        if saving < port_cost:
            return None, (
                f"A one-off job: {_where(option)} would save {money(saving)} on the run, less than the "
                f"{money(port_cost)} port ({option.effort})."
            )
        return Verdict(option, True, [], port_cost, ZERO, saving, None), ""
    months = _break_even(port_cost, saving)
    limit = ctx.planning("max_payback_months")
    if months is not None and Decimal(str(months)) > limit:
        return None, (
            f"{_where(option)} would save {money(saving)} a month, but the {money(port_cost)} port ({option.effort}) "
            f"takes {months} months to pay back (more than {limit})."
        )
    return Verdict(option, True, [], port_cost, saving, None, months), ""


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
    return Verdict(stay, False, [stay.reason, *reasons], ZERO, ZERO, ZERO if inp.workload.one_off else None, None)


# --- one workload ------------------------------------------------------------------------------------------------


def _confidence(inp: Inputs, verdict: Verdict) -> Confidence:
    """High only with measured rates on a well-supported model; each gap or risk lowers it."""
    concerns = [
        inp.throughput is None and inp.workload.stage == "inference",
        inp.demand_rps is None and inp.workload.stage == "inference",
        inp.family.support(inp.workload.stage) != "drop_in",
        inp.workload.custom_cuda_kernels,
        bool(inp.assumptions),
        verdict.chosen.instance is not None and verdict.chosen.instance.price_is_estimate,
    ]
    count = sum(concerns)
    return "high" if count == 0 else "medium" if count <= 2 else "low"


def _per_million(cost: Decimal, units: Decimal | None) -> Decimal | None:
    if units is None or units <= 0:
        return None
    return cost / units * MILLION


def _serving_figures(inp: Inputs, verdict: Verdict) -> dict[str, Decimal | None]:
    requests = inp.monthly_requests
    tokens = requests * inp.workload.tokens_per_request if requests is not None and inp.workload.tokens_per_request else None
    return {
        "current_cost_per_million_requests_usd": _per_million(inp.current_cost, requests),
        "projected_cost_per_million_requests_usd": _per_million(verdict.chosen.monthly_cost, requests),
        "current_cost_per_million_tokens_usd": _per_million(inp.current_cost, tokens),
        "projected_cost_per_million_tokens_usd": _per_million(verdict.chosen.monthly_cost, tokens),
    }


def _training_figures(inp: Inputs, verdict: Verdict, ctx: Context, notes: list[str]) -> dict[str, Decimal | None]:
    if inp.workload.one_off:
        runs = Decimal(1)
    elif inp.workload.runs_per_month is not None:
        runs = inp.workload.runs_per_month
    else:
        runs = ctx.planning("default_runs_per_month")
        notes.append(f"Training runs a month not given: {runs} assumed (dollars per trained model).")
    return {
        "current_cost_per_trained_model_usd": inp.current_cost / runs,
        "projected_cost_per_trained_model_usd": verdict.chosen.monthly_cost / runs,
    }


def _describe_current(inp: Inputs) -> str:
    w = inp.workload
    size = f" ({plain(inp.params_billion)}B)" if inp.params_billion is not None else ""
    what = f"{'Training' if w.stage == 'training' else 'Serving'} {short_name(inp.family)}{size}"
    today = (
        f"{inp.count} × {inp.current.name} at ${plain(inp.current_price)}/h for {plain(inp.hours)} h "
        f"costs {money(inp.current_cost)}"
    )
    if w.one_off:
        return f"{what}: one run on {today}."
    if inp.demand_rps is not None and inp.throughput is not None:
        rate = inp.demand_rps.quantize(Decimal("0.1"))
        return f"{what} at {rate} requests/s: {today} a month ({plain(inp.throughput)} requests/s each)."
    return f"{what}: {today} a month."


def _describe_target(inp: Inputs, verdict: Verdict) -> str | None:
    option = verdict.chosen
    if not verdict.moved:
        return None
    if option.bedrock is not None:
        tokens = inp.workload.tokens_per_request
        per = f" ({tokens} tokens a request)" if tokens else ""
        return f"Target: Amazon Bedrock, {option.bedrock.name}{per}, about {money(option.monthly_cost)} a month."
    assert option.instance is not None
    rate = f" at about {option.throughput.quantize(Decimal('0.1'))} requests/s each" if option.throughput else ""
    period = "for the run" if inp.workload.one_off else "a month"
    return f"Target: {option.count} × {option.instance.name}{rate}, {money(option.monthly_cost)} {period}."
    
    
def plan_workload(w: WorkloadIn, ctx: Context, shared_port: str | None) -> WorkloadPlan:
    inp = resolve(w, ctx)
    notes = list(inp.assumptions)
    if w.stage == "training":
        blockers: list[str] = []
        if w.custom_cuda_kernels and not inp.current.neuron:
            option, _ = trainium_training(inp, ctx, shared_port)
            would = f" Trainium would cost about {money(option.monthly_cost)} a month." if option else ""
            blockers.append(
                "Custom CUDA kernels in training: the Neuron port may cost more than it saves (decision table: stay "
                f"on GPU, P family).{would}"
            )
            candidates: list[Option] = []
        else:
            option, blockers = trainium_training(inp, ctx, shared_port)
            candidates = [option] if option else []
    else:
        candidates, blockers = serving_candidates(inp, ctx, shared_port)
    verdict = decide(inp, candidates, ctx, blockers)
    figures = (
        _training_figures(inp, verdict, ctx, notes) if w.stage == "training" else _serving_figures(inp, verdict)
    )
    if w.latency_ms_target is not None and verdict.chosen.platform == "inferentia":
        penalty = ctx.figure(
            "inferentia2_single_request_latency_penalty", ctx.economics.inferentia2_single_request_latency_penalty
        )
        verdict.rationale.append(
            f"Check the {w.latency_ms_target} ms target in the benchmark: single-request latency on Inferentia2 is "
            f"typically {penalty * 100:.0f} % higher than on a GPU (batched throughput is what saves)."
        )
    rationale = [_describe_current(inp), *[r for r in verdict.rationale if r]]
    target = _describe_target(inp, verdict)
    if target:
        rationale.insert(1, target)
    chosen = verdict.chosen
    return WorkloadPlan(
        name=w.name,
        stage=w.stage,
        recommended_platform=chosen.platform,
        recommended_instance_type=chosen.instance.name if chosen.instance else (chosen.bedrock.model_id if chosen.bedrock else None),
        recommended_count=chosen.count,
        current_instance_type=inp.current.name,
        current_count=inp.count,
        current_monthly_cost_usd=inp.current_cost,
        projected_monthly_cost_usd=chosen.monthly_cost,
        monthly_savings_usd=verdict.monthly_savings,
        one_time_savings_usd=verdict.one_time_savings,
        porting_effort=chosen.effort,
        porting_cost_usd=verdict.port_cost,
        break_even_months=verdict.break_even,
        confidence=_confidence(inp, verdict),
        rationale=" ".join(rationale),
        assumptions=notes,
        **figures,
    )
# --- the whole plan ----------------------------------------------------------------------------------------------


def company_profile(intake: IntakeRequest) -> CompanyProfile:
    """The facts credit eligibility depends on, from the intake."""
    return CompanyProfile(
        stage=intake.company.stage,
        institutional_funding=intake.company.institutional_funding,
        activate_provider_org_id=intake.company.activate_provider_org_id,
        ai_first=intake.company.ai_first,
        country=intake.company.country,
        monthly_spend_usd=intake.aws.monthly_spend_usd,
        has_existing_workloads_to_migrate=any(w.runs_outside_aws for w in intake.workloads),
    )


def credit_line(match: CreditMatch, ctx: Context) -> CreditLine:
    if match.max_amount_usd is not None:
        ctx.ledger.add(
            f"{match.name} amount",
            f"up to ${match.max_amount_usd}",
            Source(title=match.name, citation=match.source, url=match.url, as_of=match.as_of, estimate=match.estimate),
        )
    return CreditLine(
        program=match.program,
        name=match.name,
        eligible=match.eligible,
        max_amount_usd=match.max_amount_usd,
        reason=match.reason,
        how_to_apply=match.how_to_apply,
        source=match.source,
        as_of=match.as_of.isoformat(),
    )


def _plan_order(workloads: list[WorkloadIn]) -> list[int]:
    """Training first, so that its Neuron port is known when the serving workload of the same model is planned."""
    return sorted(range(len(workloads)), key=lambda i: (workloads[i].stage != "training", i))


def plan_workloads(intake: IntakeRequest, ctx: Context) -> list[WorkloadPlan]:
    ported: dict[str, str] = {}  # model family id -> the workload whose port it is
    plans: dict[int, WorkloadPlan] = {}
    for index in _plan_order(intake.workloads):
        w = intake.workloads[index]
        family = ctx.families.match(w.model_family) or ctx.families.get(w.model_family)
        key = family.id if family is not None and family.id != "custom" else None
        plan = plan_workload(w, ctx, ported.get(key) if key else None)
        if key and plan.recommended_platform in ("inferentia", "trainium") and plan.porting_effort != "none":
            ported.setdefault(key, w.name)
        plans[index] = plan
    return [plans[i] for i in range(len(intake.workloads))]


def totals(plans: list[WorkloadPlan], credits: list[CreditLine]) -> PlanTotals:
    recurring = [p for p in plans if p.one_time_savings_usd is None]
    current = sum((p.current_monthly_cost_usd for p in recurring), ZERO)
    projected = sum((p.projected_monthly_cost_usd for p in recurring), ZERO)
    savings = sum((p.monthly_savings_usd for p in plans), ZERO)
    porting = sum((p.porting_cost_usd for p in plans), ZERO)
    eligible = [c.max_amount_usd for c in credits if c.eligible and c.max_amount_usd is not None]
    return PlanTotals(
        current_monthly_cost_usd=current,
        projected_monthly_cost_usd=projected,
        monthly_savings_usd=savings,
        one_time_savings_usd=sum((p.one_time_savings_usd or ZERO for p in plans), ZERO),
        porting_cost_usd=porting,
        payback_months=_break_even(porting, savings) if porting else (0.0 if savings > 0 else None),
        largest_eligible_credit_usd=max(eligible) if eligible else None,
    )


def _moves(plans: list[WorkloadPlan], platforms: tuple[str, ...]) -> list[WorkloadPlan]:
    return [
        p
        for p in plans
        if p.recommended_platform in platforms and p.recommended_instance_type != p.current_instance_type
    ]


def _neuron_steps(plans: list[WorkloadPlan], intake: IntakeRequest) -> list[str]:
    moves = _moves(plans, ("inferentia", "trainium"))
    if not moves:
        return []
    first = max(moves, key=lambda p: p.monthly_savings_usd + (p.one_time_savings_usd or ZERO))
    source = next(w for w in intake.workloads if w.name == first.name)
    check = (
        f"the loss curve against the {first.current_instance_type} baseline"
        if first.stage == "training"
        else f"accuracy against the {first.current_instance_type} baseline"
    )
    metric = (
        "dollars per trained model"
        if first.stage == "training"
        else "cost per 1M requests"
        + (f" at your {source.latency_ms_target} ms latency target" if source.latency_ms_target else "")
    )
    names = ", ".join(f"“{p.name}” → {p.recommended_count} × {p.recommended_instance_type}" for p in moves)
    return [
        f"Prove the path on one {first.recommended_instance_type} with your {source.model_family} model "
        f"(“{first.name}”), using the Neuron Deep Learning AMI or container (Optimum Neuron, vLLM on Neuron).",
        f"Port and compile a short run; validate {check}; note the compile time and throughput.",
        f"Benchmark the deciding metric, {metric}, at today's prices before committing: the plan's figures are "
        "representative ratios, not your measurements.",
        f"Scale out if it pencils ({names}): shift traffic gradually with a GPU fallback; for training, "
        "UltraClusters or SageMaker HyperPod.",
    ]


def _other_steps(plans: list[WorkloadPlan]) -> list[str]:
    steps = []
    bedrock = _moves(plans, ("bedrock",))
    if bedrock:
        names = ", ".join(f"“{p.name}”" for p in bedrock)
        steps.append(
            f"Move {names} to Amazon Bedrock: call the managed model by API, pay per token, no chip to run; "
            "keep it there for spiky traffic."
        )
    stays = [p for p in plans if p.recommended_instance_type == p.current_instance_type]
    if stays:
        names = ", ".join(f"“{p.name}”" for p in stays)
        steps.append(f"Keep {names} where {'it runs' if len(stays) == 1 else 'they run'} for now; revisit when the model or the volume changes.")
    return steps


def _credit_steps(credits: list[CreditLine]) -> list[str]:
    eligible = [c for c in credits if c.eligible]
    if eligible:
        names = "; ".join(
            f"{c.name} ({'up to ' + money(c.max_amount_usd, 0) if c.max_amount_usd else 'scaled to spend'})"
            for c in eligible
        )
        first = f"Apply for credits before the bill grows: {names}. They cover trn, inf and GPU instance hours."
    else:
        closest = credits[0] if credits else None
        first = "No credit program matches today." + (f" {closest.name}: {closest.reason}" if closest else "")
    return [
        first,
        "Bring in an AWS partner: the partner-referral draft is ready for our advisory team; "
        "nothing is filed without your go-ahead, and the routing costs you nothing.",
    ]


def migration_steps(plans: list[WorkloadPlan], credits: list[CreditLine], intake: IntakeRequest) -> list[str]:
    """The migration path (domain.md), made specific to this plan."""
    return [*_neuron_steps(plans, intake), *_other_steps(plans), *_credit_steps(credits)]


def _business_problem(intake: IntakeRequest, plans: list[WorkloadPlan], sums: PlanTotals) -> str:
    moves = [f"{p.name} to {p.recommended_platform}" for p in plans if p.recommended_instance_type != p.current_instance_type]
    return (
        f"{intake.company.name} spends about {money(sums.current_monthly_cost_usd)} a month on AI accelerator "
        f"capacity across {len(plans)} workload(s). Chipwise's plan estimates {money(sums.monthly_savings_usd)} a "
        f"month saved by moving {', '.join(moves) or 'nothing yet'}, with a one-time porting effort of about "
        f"{money(sums.porting_cost_usd)}. The customer needs help with the Neuron port, a benchmark and credits."
    )


def referral_draft(intake: IntakeRequest, plans: list[WorkloadPlan], sums: PlanTotals, steps: list[str]) -> dict[str, object]:
    """The ACE-shaped partner-referral draft (reviewed by a person; never sent automatically)."""
    spend = intake.aws.monthly_spend_usd
    expected = spend - sums.monthly_savings_usd if spend is not None else sums.projected_monthly_cost_usd
    platforms = sorted({p.recommended_platform for p in plans if p.recommended_instance_type != p.current_instance_type})
    return opportunity_document(
        company_name=intake.company.name,
        website=intake.company.website,
        country_code=intake.company.country,
        contact_name=intake.contact.name,
        contact_email=str(intake.contact.email),
        aws_account_id=intake.aws.account_ids[0] if intake.aws.account_ids else None,
        expected_monthly_spend_usd=max(expected, ZERO),
        project_title=f"{intake.company.name}: AI accelerator cost plan ({', '.join(platforms) or 'review'})",
        business_problem=_business_problem(intake, plans, sums),
        next_steps=steps[0] if steps else "Review the plan with the customer.",
    )


def build_plan(intake: IntakeRequest, *, plan_id: str, created_at: datetime) -> PlanDocument:
    """The plan for one intake (pure: the caller supplies the id and the clock)."""
    ctx = Context.load(intake.aws.region)
    plans = plan_workloads(intake, ctx)
    credits = [credit_line(m, ctx) for m in match_programs(company_profile(intake))]
    sums = totals(plans, credits)
    steps = migration_steps(plans, credits, intake)
    return PlanDocument(
        plan_id=plan_id,
        created_at=created_at,
        company=intake.company.name,
        country=intake.company.country,
        region=intake.aws.region,
        workloads=plans,
        credits=credits,
        total_monthly_savings_usd=sums.monthly_savings_usd,
        totals=sums,
        steps=steps,
        sources=list(ctx.ledger.sources.values()),
        referral_draft=referral_draft(intake, plans, sums, steps),
    )
