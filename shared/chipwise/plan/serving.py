"""Serving options: an Inferentia (or Trainium) fleet sized from throughput, or Amazon Bedrock per token.

The fleet is sized by the scan's sizing engine (:mod:`chipwise.analyse.sizing`): today's load in A10G-equivalents
(requests a second over today's throughput per instance, times today's chips and their relative throughput), the
cheapest size that holds one model replica (weights x headroom) and carries it; spiky traffic is sized for its
peak. Bedrock is priced from the
catalog's per-token prices for the family's closest model (or the default foundation model).
"""

from __future__ import annotations

import re
from decimal import Decimal

from chipwise.analyse import sizing
from chipwise.analyse.sizing import Need
from chipwise.catalog import BedrockPrice, InstanceType
from chipwise.economics import MILLION
from chipwise.plan.context import ZERO, Context, plain, short_name
from chipwise.plan.inputs import Inputs
from chipwise.plan.options import PLATFORM_OF, Findings, Option, SharedPort, port_effort
from chipwise.render import money

_BEDROCK_SIZE = re.compile(r"(\d+(?:\.\d+)?)\s*B\b")


# --- Neuron fleets (sized by the one sizing engine, chipwise.analyse.sizing, as the scan's rules are) ----------------


def _chip_units(instance: InstanceType, ctx: Context) -> Decimal:
    """Throughput of one accelerator chip in A10G-equivalents (the sizing engine's), with the figures it rests on
    recorded; a GPU the throughput table does not list counts as one."""
    if instance.neuron:
        ctx.figure("inferentia2_inference_throughput_ratio", ctx.assumptions.inferentia2_inference_throughput_ratio)
        if instance.family == "inf1":
            ctx.figure("inf2_vs_inf1_throughput_ratio", ctx.assumptions.inf2_vs_inf1_throughput_ratio)
    return sizing.chip_units(instance, ctx.assumptions) or Decimal(1)


def _replica_memory_gib(inp: Inputs, ctx: Context) -> Decimal:
    """Accelerator memory one model replica needs (weights x headroom); today's instance's when size unknown."""
    if inp.params_billion is None:
        return inp.current.accelerator_memory_gib
    return sizing.replica_memory_gib(
        inp.params_billion,
        ctx.planning("inference_bytes_per_parameter"),
        ctx.figure("memory_headroom_factor", ctx.assumptions.memory_headroom_factor),
    )


def serving_need(inp: Inputs, ctx: Context) -> Need:
    """What the target fleet must hold and carry: one replica per instance, and today's load in
    A10G-equivalents: the (peak) request rate over today's throughput per instance, or today's whole fleet when no
    rates are given (it is taken to carry its load exactly)."""
    peak = ctx.planning("spiky_peak_to_average") if inp.workload.traffic == "spiky" else Decimal(1)
    per_instance = _chip_units(inp.current, ctx) * inp.current.accelerator_units
    if inp.throughput is not None and inp.demand_rps is not None:
        load = inp.demand_rps * peak / inp.throughput * per_instance
    else:
        load = Decimal(inp.count) * per_instance
    return Need(memory_gib=_replica_memory_gib(inp, ctx), a10g_units=load)


def cheapest_fleet(inp: Inputs, ctx: Context, families: tuple[str, ...]) -> Option | None:
    """The cheapest fleet among ``families`` that holds a replica and carries the (peak) load."""
    need = serving_need(inp, ctx)
    targets = sizing.candidates(ctx.catalog, families)
    fit = sizing.cheapest_fit(targets, ctx.catalog, ctx.region, need, ctx.assumptions)
    if fit is None:
        return None
    ctx.price(fit.instance)
    scale = _chip_units(fit.instance, ctx) * fit.instance.accelerator_units
    scale /= _chip_units(inp.current, ctx) * inp.current.accelerator_units
    return Option(
        platform=PLATFORM_OF[fit.instance.platform],
        instance=fit.instance,
        count=fit.count,
        monthly_cost=fit.cost(inp.hours),
        effort="none",
        reason="",
        throughput=inp.throughput * scale if inp.throughput is not None else None,
    )


def _serving_families(inp: Inputs, ctx: Context) -> tuple[str, ...]:
    targets = ctx.data.targets
    if inp.workload.serve_on_trainium:
        return targets.inference_on_trainium
    if inp.params_billion is not None and inp.params_billion <= ctx.planning("small_model_max_params_billion"):
        return targets.inference_small
    return targets.inference_large


def _neuron_reason(option: Option, inp: Inputs, ctx: Context) -> str:
    assert option.instance is not None
    if inp.workload.serve_on_trainium:
        inf2 = cheapest_fleet(inp, ctx, ctx.data.targets.inference_large)
        versus = f" ({money(inf2.monthly_cost)} a month on Inferentia2)" if inf2 else ""
        return (
            "One chip family for training and serving, as asked: Trainium serves it. It works, at a higher cost "
            f"per token than Inferentia2{versus}."
        )
    if option.instance.family == "inf1":
        return "A small model at volume: Inferentia (inf1) is the most cost-effective chip for small models."
    return "Steady serving: Inferentia2 has the lowest cost per token at utilisation."


def neuron_serving(inp: Inputs, ctx: Context, shared_port: SharedPort | None, found: Findings) -> Option | None:
    """The Neuron fleet for this workload; None (with the reason in ``found``) when Neuron cannot serve it."""
    support = inp.family.inference_support
    best = None if support == "unsupported" else cheapest_fleet(inp, ctx, _serving_families(inp, ctx))
    if best is None:
        found.blockers.append(
            f"No Neuron instance serves it as sized ({short_name(inp.family)}: inference support "
            f"{support.replace('_', '-')})."
        )
        return None
    if inp.throughput is None or inp.demand_rps is None:
        found.assumptions.append(
            "Request rate or throughput per instance not given: today's fleet is taken to carry its load, and the "
            "target fleet is sized from it by the throughput ratio."
        )
    best.reason = _neuron_reason(best, inp, ctx)
    assert best.instance is not None
    best.effort, effort_note = port_effort(inp, shared_port, best.instance)
    best.notes.append(effort_note)
    return best


# --- Amazon Bedrock ------------------------------------------------------------------------------------------------


def _bedrock_size(price: BedrockPrice) -> Decimal:
    found = _BEDROCK_SIZE.search(price.name)
    return Decimal(found.group(1)) if found else ZERO


def bedrock_model(inp: Inputs, ctx: Context) -> BedrockPrice | None:
    """The family's smallest Bedrock model at least as large as this one (else its largest); the default
    foundation model when any model would do; None when Bedrock does not serve the family."""
    prices = ctx.assumptions.bedrock_prices_for_family(inp.family.id) if inp.family.bedrock_available else []
    if prices:
        by_size = sorted(prices, key=_bedrock_size)
        wanted = inp.params_billion or ZERO
        return next((p for p in by_size if _bedrock_size(p) >= wanted), by_size[-1])
    if inp.workload.foundation_model_only:
        return ctx.assumptions.bedrock_price(ctx.data.targets.bedrock_default_model)
    return None


def _differs(model: BedrockPrice, inp: Inputs) -> str | None:
    """Says so when the Bedrock model priced is not the founder's model (another family, or another size)."""
    params = inp.params_billion
    ours = short_name(inp.family) + (f" {plain(params)}B" if params is not None else "")
    if model.model_family != inp.family.id:
        return (
            f"Amazon Bedrock is priced with {model.name}, not your model ({ours}): Bedrock offers no "
            f"{short_name(inp.family)} model, so a standard foundation model stands in; check that it does the job."
        )
    size = _bedrock_size(model)
    if params is not None and size and size != params:
        bigger = "larger" if size > params else "smaller"
        return (
            f"Amazon Bedrock is priced with {model.name}, a {bigger} model than yours ({ours}): the closest "
            "size Bedrock offers in the family; its answers and its price per token differ from your model's."
        )
    return None


def _per_million_tokens(model: BedrockPrice, ctx: Context) -> Decimal:
    """The blended price of a million tokens (embeddings bill input tokens only)."""
    if model.output_per_million is None:
        return model.input_per_million
    share = ctx.planning("output_token_share")
    return model.input_per_million * (1 - share) + model.output_per_million * share


def bedrock_serving(inp: Inputs, ctx: Context, found: Findings) -> Option | None:
    """Amazon Bedrock at on-demand token prices; None when it serves nothing like this or cannot be priced."""
    model = bedrock_model(inp, ctx)
    if model is None:
        return None
    if inp.monthly_requests is None:
        found.assumptions.append("Amazon Bedrock not priced: requests a day not given.")
        return None
    differs = _differs(model, inp)
    if differs:
        found.assumptions.append(differs)
    if inp.workload.tokens_per_request is not None:
        tokens = Decimal(inp.workload.tokens_per_request)
    else:
        tokens = ctx.planning("default_tokens_per_request")
        found.assumptions.append(f"Tokens a request not given: {plain(tokens)} assumed to price Amazon Bedrock.")
    output = model.output_per_million if model.output_per_million is not None else model.input_per_million
    ctx.ledger.add(
        f"Amazon Bedrock {model.name} on-demand price",
        f"${plain(model.input_per_million)} in / ${plain(output)} out per 1M tokens",
        ctx.assumptions.sources[model.source],
    )
    volume = inp.monthly_requests * tokens
    effort = ctx.data.targets.bedrock_effort
    option = Option(
        platform="bedrock",
        instance=None,
        count=None,
        monthly_cost=volume * _per_million_tokens(model, ctx) / MILLION,
        effort=effort,
        reason="Amazon Bedrock serves it per token, with no chip to manage.",
        bedrock=model,
        notes=[f"Moving to the Bedrock API is integration work ({effort}), not a Neuron port."],
    )
    if ctx.region != ctx.assumptions.bedrock_on_demand.region:
        found.assumptions.append(f"Amazon Bedrock prices are {ctx.assumptions.bedrock_on_demand.region} figures.")
    return option


# --- the decision table for serving ------------------------------------------------------------------------------


def _bedrock_first(inp: Inputs, bedrock: Option, neuron: Option | None) -> bool:
    """Foundation-model-only, spiky or low-volume traffic goes to Bedrock first (its reason set here)."""
    if inp.workload.foundation_model_only:
        bedrock.reason = "It only needs a standard foundation model: Amazon Bedrock serves one with no chip to manage."
    elif inp.workload.traffic == "spiky":
        bedrock.reason = (
            "Spiky traffic: a self-managed fleet must be sized for the peaks and idles between them; "
            "Amazon Bedrock bills only the tokens used."
        )
    elif neuron is None:
        bedrock.reason = "No Neuron instance can serve it; Amazon Bedrock serves this model family per token."
    elif bedrock.monthly_cost < neuron.monthly_cost:
        bedrock.reason = "Low volume: pay-per-token on Amazon Bedrock costs less than an always-on accelerator fleet."
    else:
        return False
    return True


def serving_candidates(inp: Inputs, ctx: Context, shared_port: SharedPort | None) -> Findings:
    """The options worth recommending, best first, by the decision table."""
    found = Findings()
    neuron = neuron_serving(inp, ctx, shared_port, found)
    bedrock = bedrock_serving(inp, ctx, found)
    first = bedrock is not None and _bedrock_first(inp, bedrock, neuron)
    ordered = [bedrock, neuron] if first else [neuron, bedrock]
    found.candidates = [o for o in ordered if o is not None]
    return found
