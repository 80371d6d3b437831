"""The economics of a measurement: what a benchmark result says the move would cost and save. Pure: no I/O.

Inference is an always-on tap, so it is priced per million tokens (or requests) and by the instance count the
observed traffic needs at the latency target: cost per 1M = (1e6 ÷ units per second) × (hourly price ÷ 3600).
Training is a burst, so it is priced per trained model: the same work (tokens) at the measured throughput.
Every figure is a Decimal. The arithmetic (cost per million, instances for a demand, a month of instance-hours)
is :mod:`chipwise.economics`, the same the rules estimate with; this module decides what to compare.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass
from decimal import Decimal
from typing import Literal

from pydantic import BaseModel, ConfigDict

from chipwise.economics import (
    HOURS_PER_MONTH,
    MILLION,
    SECONDS_PER_HOUR,
    cents,
    cost_per_million,
    instances_needed,
    monthly_cost,
    round_money,
)
from chipwise.models.benchmark import BenchmarkResult, Measurement

__all__ = [
    "MILLION",
    "SECONDS_PER_HOUR",
    "Current",
    "Demand",
    "MeasuredEconomics",
    "PlausibleRange",
    "RepricingPolicy",
    "Target",
    "best_within",
    "gate",
    "price_inference",
    "price_training",
    "unpriced",
]

Unit = Literal["tokens", "requests"]
UNITS: tuple[Unit, ...] = ("tokens", "requests")
Verdict = Literal["confirmed", "withdrawn", "inconclusive", "needs_review"]
CurrentBasis = Literal["observed", "gpu_baseline"]
# Where today's hourly rate comes from: the account's bill (cost ÷ hours), a cited on-demand price (the catalog),
# or nowhere (a measurement compared with it cannot be believed).
RateBasis = Literal["account", "catalog", "none"]


def throughput(measurement: Measurement, unit: Unit) -> Decimal | None:
    return measurement.tokens_per_second if unit == "tokens" else measurement.requests_per_second


def best_within(
    measurements: Iterable[Measurement], unit: Unit, latency_limit_ms: Decimal | None
) -> Measurement | None:
    """The shape with the highest throughput whose p95 latency meets the limit (any shape without a limit)."""
    candidates = [
        m
        for m in measurements
        if throughput(m, unit) is not None and (latency_limit_ms is None or m.latency_p95_ms <= latency_limit_ms)
    ]
    return max(candidates, key=lambda m: (throughput(m, unit), -m.latency_p95_ms), default=None)


# --- inputs and the outcome ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Demand:
    """Observed traffic the target must carry, per second, and the p95 latency it is served at today."""

    unit: Unit
    peak_per_second: Decimal
    mean_per_second: Decimal
    latency_p95_ms: Decimal | None
    source: str


@dataclass(frozen=True)
class Current:
    """What the resource costs today."""

    instance_type: str
    count: int
    price_usd_per_hour: Decimal
    monthly_cost_usd: Decimal
    run_hours: Decimal | None = None  # training: hours of one run, when known
    rate_basis: RateBasis = "account"


@dataclass(frozen=True)
class PlausibleRange:
    """The saving per unit of work a move can plausibly show: the data file's published low/high for the workload
    and chip pair (``published_low``/``published_high``), widened by the stated margin (``low``/``high``)."""

    move: str  # "GPU → Trainium training"
    figure: str  # the assumptions.json figure the range comes from
    published_low: Decimal
    published_high: Decimal
    margin: Decimal

    @property
    def low(self) -> Decimal:
        return self.published_low - self.margin

    @property
    def high(self) -> Decimal:
        return self.published_high + self.margin

    def contains(self, fraction: Decimal) -> bool:
        return self.low <= fraction <= self.high


@dataclass(frozen=True)
class Target:
    """What the recommendation moves to (``priced_as`` keeps the ``ml.`` prefix of SageMaker types)."""

    priced_as: str
    price_usd_per_hour: Decimal


@dataclass(frozen=True)
class RepricingPolicy:
    """Figures from ``assumptions.json``: capacity headroom, and the p95 increase a Neuron target may show."""

    headroom: Decimal
    latency_tolerance: Decimal  # 1.20 accepts a p95 up to 20 % above today's


class ChosenShape(BaseModel):
    model_config = ConfigDict(defer_build=True, extra="forbid", frozen=True)

    batch_size: int
    sequence_length: int
    output_tokens: int
    requests_per_second: Decimal
    tokens_per_second: Decimal | None
    latency_p95_ms: Decimal
    concurrency: int | None = None
    latency_p99_ms: Decimal | None = None
    ttft_p99_ms: Decimal | None = None
    tpot_p99_ms: Decimal | None = None
    error_rate: Decimal | None = None

    @classmethod
    def of(cls, m: Measurement) -> ChosenShape:
        return cls(
            batch_size=m.batch_size,
            sequence_length=m.sequence_length,
            output_tokens=m.output_tokens,
            requests_per_second=m.requests_per_second,
            tokens_per_second=m.tokens_per_second,
            latency_p95_ms=m.latency_p95_ms,
            concurrency=m.concurrency,
            latency_p99_ms=m.latency_p99_ms,
            ttft_p99_ms=m.ttft_p99_ms,
            tpot_p99_ms=m.tpot_p99_ms,
            error_rate=m.error_rate,
        )


class MeasuredEconomics(BaseModel):
    """The priced measurement, stored on the run (``benchmark_runs.measured``) and shown by the CLI and demo."""

    model_config = ConfigDict(defer_build=True, extra="forbid", frozen=True)

    kind: Literal["inference", "training"]
    verdict: Verdict
    reason: str
    unit: Unit
    priced_as: str
    price_usd_per_hour: Decimal | None
    chosen: ChosenShape | None = None
    latency_limit_ms: Decimal | None = None
    target_count: int | None = None
    target_monthly_cost_usd: Decimal | None = None
    current_monthly_cost_usd: Decimal
    current_basis: CurrentBasis = "observed"
    monthly_savings_usd: Decimal | None = None
    cost_per_million_usd: Decimal | None = None  # the target at its measured throughput
    cost_per_million_at_traffic_usd: Decimal | None = None  # the sized target at today's mean traffic
    current_cost_per_million_usd: Decimal | None = None  # today, at today's traffic (or the GPU baseline)
    dollars_per_run_usd: Decimal | None = None
    current_dollars_per_run_usd: Decimal | None = None
    sizing: Literal["headroom", "slo"] = "headroom"  # slo: the run's concurrency sweep sized the target count
    # The plausibility gate: the measured saving per unit of work (1 − target $/unit ÷ today's $/unit, like for
    # like) and the range it was held against; a result outside it is ``needs_review``, never ``confirmed``.
    measured_saving_fraction: Decimal | None = None
    plausible_low: Decimal | None = None
    plausible_high: Decimal | None = None
    rate_basis: RateBasis | None = None
    review_reason: str | None = None
    # What the rule estimated for the same move, beside the measurement: its saving and instance count, and the
    # prediction error (estimate − measured) ÷ measured of the saving (None without a positive measured saving).
    estimated_monthly_savings_usd: Decimal | None = None
    estimated_target_count: int | None = None
    prediction_error: Decimal | None = None

    def beside(self, estimated_saving: Decimal, estimated_count: int | None) -> MeasuredEconomics:
        """The measurement with the rule's estimate of the same move beside it, and how far the estimate was off."""
        measured = self.monthly_savings_usd
        error = (estimated_saving - measured) / measured if measured is not None and measured > 0 else None
        return self.model_copy(
            update={
                "estimated_monthly_savings_usd": cents(estimated_saving),
                "estimated_target_count": estimated_count,
                "prediction_error": _four_places(error),
            }
        )

    time_to_train_ratio: Decimal | None = None  # training: the target's measured time to train ÷ today's


def _four_places(value: Decimal | None) -> Decimal | None:
    """Per-million costs (and the latency limit) are kept to four decimal places."""
    return None if value is None else round_money(value, 4)


# --- inference ---------------------------------------------------------------------------------------------------


def price_inference(
    result: BenchmarkResult,
    *,
    demand: Demand | None,
    current: Current,
    target: Target,
    policy: RepricingPolicy,
    baseline: BenchmarkResult | None = None,
    plausible: PlausibleRange | None = None,
) -> MeasuredEconomics:
    """Size the target for the observed peak at the latency limit, and compare its month with today's.

    Today's month is the observed spend or, with a paired GPU baseline run, the GPU sized the same way
    (whichever is lower: a measured saving is never larger than the bill it comes out of). With a GPU baseline the
    like-for-like saving per request (target $/unit at its measured capacity ÷ the GPU's) goes through the
    plausibility :func:`gate`.
    """
    unit: Unit = demand.unit if demand else "requests"
    base = _base("inference", unit, current, target)
    if demand is None:
        best = best_within(result.measurements, unit, None)
        return MeasuredEconomics.model_validate(
            base
            | {
                "verdict": "inconclusive",
                "reason": "no observed traffic to size the target against: the estimate stands",
                "chosen": ChosenShape.of(best) if best else None,
                "cost_per_million_usd": _four_places(_at_capacity(best, unit, target.price_usd_per_hour)),
            }
        )
    slo = result.slo
    if slo is not None and not slo.met:
        reason = f"SLO sizing: {slo.reason}"
        return MeasuredEconomics.model_validate(
            base | {"verdict": "withdrawn", "reason": reason, "latency_limit_ms": _four_places(slo.latency_target_ms)}
        )
    if slo is not None and slo.instances is not None:
        # The run swept concurrency and sized the target at the latency target for the observed peak: that count
        # is measured under load, so it replaces the single-shape throughput and the headroom factor.
        limit: Decimal | None = slo.latency_target_ms
        swept = [m for m in result.measurements if m.concurrency == slo.concurrency]
        chosen = max(swept, key=lambda m: m.requests_per_second, default=None)
        capacity = throughput(chosen, unit) if chosen else None
        count = slo.instances
    else:
        limit = demand.latency_p95_ms * policy.latency_tolerance if demand.latency_p95_ms else None
        chosen = best_within(result.measurements, unit, limit)
        capacity = throughput(chosen, unit) if chosen else None
        count = instances_needed(demand.peak_per_second, capacity, policy.headroom) if capacity else 0
    if chosen is None or capacity is None:
        return _latency_miss(result, base, unit, limit)
    target_month = monthly_cost(target.price_usd_per_hour, count)
    current_month, basis = _current_month(current, demand, policy, limit, unit, baseline)
    saving = current_month - target_month
    units_per_month = demand.mean_per_second * SECONDS_PER_HOUR * HOURS_PER_MONTH / MILLION
    confirmed = saving > 0
    sized = "the fewest that meet the latency target under load (SLO sweep)" if slo is not None else "headroom"
    reason = (
        f"{count} × {target.priced_as} carry the observed peak at p95 {chosen.latency_p95_ms} ms ({sized})"
        if confirmed
        else f"no saving: {count} × {target.priced_as} cost ${cents(target_month):,} a month, "
        f"today ${cents(current_month):,}"
    )
    priced = MeasuredEconomics.model_validate(
        base
        | {
            "verdict": "confirmed" if confirmed else "withdrawn",
            "reason": reason,
            "chosen": ChosenShape.of(chosen),
            "latency_limit_ms": _four_places(limit),
            "target_count": count,
            "sizing": "slo" if slo is not None else "headroom",
            "target_monthly_cost_usd": cents(target_month),
            "current_monthly_cost_usd": cents(current_month),
            "current_basis": basis,
            "monthly_savings_usd": cents(saving),
            "cost_per_million_usd": _four_places(cost_per_million(target.price_usd_per_hour, capacity)),
            "cost_per_million_at_traffic_usd": _four_places(target_month / units_per_month),
            "current_cost_per_million_usd": _four_places(current_month / units_per_month),
        }
    )
    fraction = _inference_fraction(capacity, target, current, baseline, unit, limit)
    return gate(priced, fraction=fraction, plausible=plausible if fraction is not None else None, current=current)


def _inference_fraction(
    capacity: Decimal,
    target: Target,
    current: Current,
    baseline: BenchmarkResult | None,
    unit: Unit,
    limit: Decimal | None,
) -> Decimal | None:
    """1 − (target $ per unit at its measured capacity ÷ the GPU baseline's at its own): the chip pair's measured
    saving per request, like for like. None without a baseline (a saving against today's bill is mostly sizing)."""
    if baseline is None or current.price_usd_per_hour <= 0:
        return None
    gpu = best_within(baseline.measurements, unit, limit) or best_within(baseline.measurements, unit, None)
    rate = throughput(gpu, unit) if gpu else None
    if not rate:
        return None
    gpu_per_million = cost_per_million(current.price_usd_per_hour, rate)
    return 1 - cost_per_million(target.price_usd_per_hour, capacity) / gpu_per_million


def _percent(fraction: Decimal) -> str:
    return f"{cents(fraction * 100)} %"


def review_reason(
    priced: MeasuredEconomics, *, fraction: Decimal | None, plausible: PlausibleRange | None, current: Current
) -> str | None:
    """Why a measurement cannot be believed as it stands, or None. Only a result that would change the totals
    (confirmed or withdrawn) is checked: today's rate must be the account's or a cited price, and a confirmed
    saving per unit of work must lie inside the move's plausible range."""
    if priced.verdict not in ("confirmed", "withdrawn"):
        return None
    if current.rate_basis == "none" or current.price_usd_per_hour <= 0:
        return (
            f"today's rate for {current.instance_type} is neither the account's (no cost for its hours) nor a cited "
            "on-demand price: a comparison with it proves nothing"
        )
    if priced.verdict != "confirmed" or plausible is None or fraction is None or plausible.contains(fraction):
        return None
    return (
        f"{_percent(fraction)} cheaper per unit of work is outside the plausible {_percent(plausible.low)} to "
        f"{_percent(plausible.high)} for {plausible.move} (published {_percent(plausible.published_low)} to "
        f"{_percent(plausible.published_high)}, widened by {_percent(plausible.margin)}: assumptions.json "
        f"{plausible.figure}, measurement_plausibility_margin); check the run and the prices before counting it"
    )


def gate(
    priced: MeasuredEconomics, *, fraction: Decimal | None, plausible: PlausibleRange | None, current: Current
) -> MeasuredEconomics:
    """The plausibility gate: records the measured saving per unit of work and the range it was held against,
    and turns a result that cannot be believed into ``needs_review`` (out of the measured totals, saying why)."""
    update: dict[str, object] = {"measured_saving_fraction": _four_places(fraction), "rate_basis": current.rate_basis}
    if plausible is not None:
        update |= {"plausible_low": plausible.low, "plausible_high": plausible.high}
    why = review_reason(priced, fraction=fraction, plausible=plausible, current=current)
    if why is not None:
        update |= {"verdict": "needs_review", "review_reason": why, "reason": f"needs review: {why}"}
    return MeasuredEconomics.model_validate(priced.model_dump() | update)


def unpriced(kind: Literal["inference", "training"], priced_as: str, current: Current) -> MeasuredEconomics:
    """A measurement of a type the catalog has no price for: recorded, but it cannot replace the estimate."""
    return MeasuredEconomics(
        kind=kind,
        verdict="inconclusive",
        reason=f"no on-demand price for {priced_as} in the catalog: the estimate stands",
        unit="requests" if kind == "inference" else "tokens",
        priced_as=priced_as,
        price_usd_per_hour=None,
        current_monthly_cost_usd=cents(current.monthly_cost_usd),
    )


def _base(kind: str, unit: Unit, current: Current, target: Target) -> dict[str, object]:
    return {
        "kind": kind,
        "unit": unit,
        "priced_as": target.priced_as,
        "price_usd_per_hour": target.price_usd_per_hour,
        "current_monthly_cost_usd": cents(current.monthly_cost_usd),
    }


def _at_capacity(m: Measurement | None, unit: Unit, price: Decimal) -> Decimal | None:
    rate = throughput(m, unit) if m else None
    return cost_per_million(price, rate) if rate else None


def _latency_miss(
    result: BenchmarkResult, base: dict[str, object], unit: Unit, limit: Decimal | None
) -> MeasuredEconomics:
    fastest = min(result.measurements, key=lambda m: m.latency_p95_ms)
    reason = (
        f"misses the latency target: the fastest shape (batch {fastest.batch_size}) has p95 "
        f"{fastest.latency_p95_ms} ms, the limit is {_four_places(limit)} ms"
        if limit is not None
        else f"no shape was measured in {unit} per second"
    )
    return MeasuredEconomics.model_validate(
        base | {"verdict": "withdrawn", "reason": reason, "latency_limit_ms": _four_places(limit), "target_count": None}
    )


def _current_month(
    current: Current,
    demand: Demand,
    policy: RepricingPolicy,
    limit: Decimal | None,
    unit: Unit,
    baseline: BenchmarkResult | None,
) -> tuple[Decimal, CurrentBasis]:
    """Today's monthly cost for the observed traffic: the bill, or the GPU baseline sized like the target."""
    if baseline is None:
        return current.monthly_cost_usd, "observed"
    gpu = best_within(baseline.measurements, unit, limit) or best_within(baseline.measurements, unit, None)
    rate = throughput(gpu, unit) if gpu else None
    if rate is None:
        return current.monthly_cost_usd, "observed"
    sized = monthly_cost(current.price_usd_per_hour, instances_needed(demand.peak_per_second, rate, policy.headroom))
    return (sized, "gpu_baseline") if sized < current.monthly_cost_usd else (current.monthly_cost_usd, "observed")


# --- training ----------------------------------------------------------------------------------------------------


def price_training(
    result: BenchmarkResult,
    *,
    current: Current,
    target: Target,
    baseline: BenchmarkResult | None = None,
    observed_tokens_per_second: Decimal | None = None,
    plausible: PlausibleRange | None = None,
    recommended_count: int | None = None,
) -> MeasuredEconomics:
    """Dollars per trained model: the same tokens at the measured throughput and the target's price.

    Today's throughput comes from the paired GPU baseline run, else from the observed job (evidence). The
    month's training work is what today's spend buys; on the target it costs spend × (target $/token ÷ today's).
    The count is the recommendation's (the run measured one instance of it); the measured time to train on that
    many instances, as a multiple of today's, says what the move costs in wall clock.
    """
    gpu_rate, unit = _training_rate(baseline, observed_tokens_per_second)
    fastest = max(result.measurements, key=lambda m: throughput(m, unit) or Decimal(0))
    trn_rate = throughput(fastest, unit)
    base = _base("training", unit, current, target) | {"chosen": ChosenShape.of(fastest)}
    if trn_rate is None:
        reason = f"the run measured no {unit} per second"
        return MeasuredEconomics.model_validate(base | {"verdict": "inconclusive", "reason": reason})
    per_million = cost_per_million(target.price_usd_per_hour, trn_rate)
    if gpu_rate is None:
        reason = "no GPU throughput to compare with (configure batch_queues.gpu_baseline): the estimate stands"
        return MeasuredEconomics.model_validate(
            base | {"verdict": "inconclusive", "reason": reason, "cost_per_million_usd": _four_places(per_million)}
        )
    if current.price_usd_per_hour <= 0:
        unsourced = MeasuredEconomics.model_validate(base | {"verdict": "confirmed", "reason": "unpriced baseline"})
        return gate(unsourced, fraction=None, plausible=None, current=current)
    gpu_per_million = cost_per_million(current.price_usd_per_hour, gpu_rate)
    ratio = per_million / gpu_per_million
    target_month = current.monthly_cost_usd * ratio
    saving = current.monthly_cost_usd - target_month
    run_cost = current.run_hours * current.count * current.price_usd_per_hour if current.run_hours else None
    confirmed = saving > 0
    count = recommended_count or max(1, math.ceil(current.count * gpu_rate / trn_rate))
    time_ratio = round_money(current.count * gpu_rate / (count * trn_rate), 2)
    on = f"{count} × {target.priced_as}"
    reason = (
        f"{cents((1 - ratio) * 100)} % less per trained model on {on}, {time_ratio} × today's time to train"
        if confirmed
        else f"no saving: {on} costs {cents((ratio - 1) * 100)} % more per trained model"
    )
    priced = MeasuredEconomics.model_validate(
        base
        | {
            "verdict": "confirmed" if confirmed else "withdrawn",
            "reason": reason,
            "current_basis": "gpu_baseline" if baseline is not None else "observed",
            "target_count": count,
            "time_to_train_ratio": time_ratio,
            "target_monthly_cost_usd": cents(target_month),
            "monthly_savings_usd": cents(saving),
            "cost_per_million_usd": _four_places(per_million),
            "current_cost_per_million_usd": _four_places(gpu_per_million),
            "dollars_per_run_usd": (cents(run_cost * ratio) if run_cost is not None else None),
            "current_dollars_per_run_usd": (cents(run_cost) if run_cost is not None else None),
        }
    )
    return gate(priced, fraction=1 - ratio, plausible=plausible, current=current)


def _training_rate(
    baseline: BenchmarkResult | None, observed_tokens_per_second: Decimal | None
) -> tuple[Decimal | None, Unit]:
    """Today's training throughput per instance: in tokens when measured, else in samples ("requests")."""
    if baseline is not None:
        for unit in UNITS:
            rates = [rate for m in baseline.measurements if (rate := throughput(m, unit)) is not None]
            if rates:
                return max(rates), unit
    return observed_tokens_per_second, "tokens"
