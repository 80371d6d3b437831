"""The one economics, money and time module: every figure Chipwise shows is computed with these functions.

- **Money** is Decimal end to end. :func:`round_money` is the one rounding (half-up, to the cent unless told
  otherwise); :func:`cents` is its common case and :func:`usd` formats "$1,234.56". A saving is exactly the
  difference of the two rounded monthly costs it is computed from.
- **Time**: "monthly" is 730 hours (:data:`HOURS_PER_MONTH`) everywhere; :func:`parse_utc` is the one parser of
  timestamps (ISO 8601 with ``Z`` or an offset; a naive timestamp is taken as UTC, as AWS APIs and our stored
  text use UTC) and :func:`utc` normalises a datetime.
- **Percentiles**: :func:`percentile` is the one definition: linear interpolation between the closest ranks
  (NumPy's default, "method 7" of Hyndman & Fan). It is continuous in the data, so a p95 over hourly
  utilisation moves smoothly as hours are added, where nearest-rank jumps from one observed hour to another.
- **Break-even**: :func:`break_even_months` rounds *up* to a tenth of a month: never promise a payback sooner
  than it comes; scan findings and intake plans both use it.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, date, datetime
from decimal import ROUND_CEILING, ROUND_HALF_UP, Decimal
from fractions import Fraction
from functools import lru_cache
from typing import TypeVar

HOURS_PER_MONTH = Decimal(730)
HOURS_PER_DAY = Decimal(24)
HOURS_PER_WEEK = Decimal(168)
SECONDS_PER_HOUR = Decimal(3600)
MILLION = Decimal(1_000_000)
CENT = Decimal("0.01")
BREAK_EVEN_STEP = Decimal("0.1")
LAPSE_WINDOW_DAYS = 90  # a commitment ending within this many days "ends soon" (the commitments analysis, the digest)

N = TypeVar("N", float, Decimal)


# --- money --------------------------------------------------------------------------------------------------------


def round_money(amount: Decimal, places: int = 2) -> Decimal:
    """``amount`` rounded half-up to ``places`` decimals (2: cents; 4: per-million rates; 6: hourly prices)."""
    return amount.quantize(Decimal(1).scaleb(-places), rounding=ROUND_HALF_UP)


def cents(amount: Decimal) -> Decimal:
    """Rounded half-up to the cent."""
    return round_money(amount, 2)


def usd(value: Decimal | int | float | str, places: int = 2) -> str:
    """$1,234.56 (a negative amount as -$1,234.56; no float arithmetic)."""
    amount = round_money(Decimal(str(value)), places)
    sign = "-" if amount < 0 else ""
    return f"{sign}${abs(amount):,.{places}f}"


def usd_per_hour(rate: Decimal) -> str:
    """An hourly rate as price lists print it: at most four decimal places, trailing zeros trimmed down to the
    cents ("$21.9576/h", "$1.006/h", "$0.40/h"), so the monthly figures next to it can be checked by hand."""
    text = usd(rate, 4)
    whole, _, decimals = text.partition(".")
    return f"{whole}.{decimals[:2]}{decimals[2:].rstrip('0')}/h"


def monthly_cost(hourly_rate: Decimal, count: int | Decimal = 1) -> Decimal:
    """``count`` instances at ``hourly_rate`` for 730 hours, to the cent."""
    return cents(hourly_rate * Decimal(count) * HOURS_PER_MONTH)


def weekly_to_monthly(hours_per_week: Decimal | int | float) -> Decimal:
    """Hours a week as hours in a 730-hour month (× 730 ÷ 168), unrounded."""
    return Decimal(str(hours_per_week)) * HOURS_PER_MONTH / HOURS_PER_WEEK


def scheduled_saving(hourly_rate: Decimal, count: int | Decimal, hours_off_per_week: Decimal | int | float) -> Decimal:
    """What ``count`` instances at ``hourly_rate`` stop costing a month when switched off ``hours_off_per_week``
    hours every week, to the cent."""
    return cents(hourly_rate * Decimal(count) * weekly_to_monthly(hours_off_per_week))


def cold_start_cost(
    hourly_rate: Decimal, count: int | Decimal, scale_ups_per_week: int, minutes_early: Decimal
) -> Decimal:
    """What a schedule's scale-ups cost a month: ``count`` instances started ``minutes_early`` before the work,
    ``scale_ups_per_week`` times a week, at ``hourly_rate``, to the cent."""
    return cents(hourly_rate * Decimal(count) * weekly_to_monthly(scale_ups_per_week) * minutes_early / 60)


def net_scheduled_saving(
    hourly_rate: Decimal,
    count: int | Decimal,
    hours_off_per_week: Decimal | int | float,
    scale_ups_per_week: int,
    minutes_early: Decimal,
) -> tuple[Decimal, Decimal, Decimal]:
    """(gross saving, cold-start cost, net saving) a month of switching capacity off on a schedule: the hours off
    less the minutes each scale-up starts early, all to the cent."""
    gross = scheduled_saving(hourly_rate, count, hours_off_per_week)
    cold = cold_start_cost(hourly_rate, count, scale_ups_per_week, minutes_early)
    return gross, cold, gross - cold


def daily_to_monthly(amount_per_day: Decimal) -> Decimal:
    """A daily amount as a 730-hour month (× 730 ÷ 24), to the cent."""
    return cents(amount_per_day * HOURS_PER_MONTH / HOURS_PER_DAY)


def per_month(amount: Decimal, over_hours: float | Decimal) -> Decimal:
    """An amount observed over ``over_hours`` scaled to a 730-hour month (the window's run rate), to the cent."""
    hours = Decimal(str(over_hours))
    if hours <= 0:
        raise ValueError("cannot scale an amount observed over no time")
    return cents(amount * HOURS_PER_MONTH / hours)


def cost_per_million(hourly_price: Decimal, per_second: Decimal) -> Decimal:
    """Cost of one million requests (or tokens) at ``per_second`` sustained throughput:
    (1e6 ÷ throughput) × (hourly price ÷ 3600)."""
    if per_second <= 0:
        raise ValueError("throughput must be positive")
    return MILLION / per_second * (hourly_price / SECONDS_PER_HOUR)


def cost_per_million_observed(cost: Decimal, units: Decimal | None) -> Decimal | None:
    """What a million requests (tokens) cost: a bill over the volume it served in the same period. None without
    volume (an idle endpoint's cost per request is unbounded)."""
    if units is None or units <= 0:
        return None
    return cost / units * MILLION


def instances_needed(demand_per_second: Decimal, capacity_per_instance: Decimal, headroom: Decimal = Decimal(1)) -> int:
    """The fewest instances whose capacity covers the demand times the headroom (at least one)."""
    if capacity_per_instance <= 0:
        raise ValueError("capacity per instance must be positive")
    needed = (demand_per_second * headroom / capacity_per_instance).to_integral_value(rounding=ROUND_CEILING)
    return max(1, int(needed))


def porting_cost(engineer_weeks: Decimal, week_cost_usd: Decimal) -> Decimal:
    """One-time cost of moving a workload: engineer-weeks × the loaded weekly cost of an engineer."""
    return engineer_weeks * week_cost_usd


def break_even_months(one_time_cost: Decimal, monthly_saving: Decimal) -> float | None:
    """Months of savings that pay back the one-time cost, rounded up to a tenth of a month (0 when there is no
    one-time cost; None when nothing is saved)."""
    if monthly_saving <= 0:
        return None
    if one_time_cost <= 0:
        return 0.0
    return float((one_time_cost / monthly_saving / BREAK_EVEN_STEP).to_integral_value(ROUND_CEILING) * BREAK_EVEN_STEP)


# --- statistics ---------------------------------------------------------------------------------------------------


@lru_cache(maxsize=64)
def _share(q: float) -> tuple[int, int]:
    """``q`` percent as an exact fraction (numerator, denominator), worked out once per ``q``."""
    share = Fraction(str(q)) / 100
    return share.numerator, share.denominator


def percentile(ordered: Sequence[N], q: float) -> N:
    """The ``q``-th percentile (0-100) of values sorted ascending, interpolating linearly between the closest
    ranks (see the module docstring). Works on floats and on Decimals (money and latencies stay exact)."""
    if not ordered:
        raise ValueError("percentile of an empty series")
    if not 0 <= q <= 100:
        raise ValueError(f"percentile {q} is outside 0-100")
    # the rank (n - 1) x q / 100 in integers, exactly: 0.95 x 2 is 1.9, not 1.8999999999999999
    numerator, denominator = _share(q)
    low, remainder = divmod((len(ordered) - 1) * numerator, denominator)
    high = min(low + 1, len(ordered) - 1)
    below, above = ordered[low], ordered[high]
    if isinstance(below, Decimal) and isinstance(above, Decimal):
        return below + (above - below) * Decimal(remainder) / Decimal(denominator)
    return below + (above - below) * (remainder / denominator)


# --- time ---------------------------------------------------------------------------------------------------------


def utc(value: datetime) -> datetime:
    """``value`` as an aware UTC datetime (a naive one is taken as UTC)."""
    return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)


def parse_utc(value: str | datetime) -> datetime:
    """A timestamp as an aware UTC datetime: ISO 8601 text (``Z``, ``+00:00`` or any offset; a naive one is UTC;
    a date alone is its midnight) or a datetime. Raises ValueError on anything else."""
    if isinstance(value, datetime):
        return utc(value)
    text = value.strip()
    if not text:
        raise ValueError("empty timestamp")
    if text[-1] in "zZ":
        text = text[:-1] + "+00:00"
    return utc(datetime.fromisoformat(text))


def parse_day(value: str | date) -> date:
    """A calendar day from ``YYYY-MM-DD`` (or a date; a datetime gives its UTC day)."""
    if isinstance(value, datetime):
        return utc(value).date()
    if isinstance(value, date):
        return value
    return date.fromisoformat(value.strip())


# --- commitments --------------------------------------------------------------------------------------------------


def hours_left(today: date, end: date) -> Decimal:
    """Billed hours of a commitment from the start of ``today`` (UTC) to ``end`` (the day the term ends, not billed):
    0 when it has ended."""
    return Decimal(max(0, (end - today).days)) * HOURS_PER_DAY


def months_left(today: date, end: date) -> Decimal:
    """``hours_left`` in 730-hour months (a fraction: 11 days are 0.3616... of a month)."""
    return hours_left(today, end) / HOURS_PER_MONTH


def savings_plan_hour(on_demand_spend: Decimal, commitment: Decimal, discount: Decimal) -> tuple[Decimal, Decimal]:
    """One hour under a Savings Plan: (what the hour costs, the commitment it used). The plan covers on-demand spend
    up to ``commitment / (1 - discount)`` at its rates; the rest is billed on demand; an unused commitment is still
    paid (the Savings Plans user guide: the commitment is charged every hour, used or not)."""
    covers = commitment / (1 - discount)
    covered = min(on_demand_spend, covers)
    used = covered * (1 - discount)
    return commitment + (on_demand_spend - covered), used


def payoff_month(
    one_time_cost: Decimal, saving_during: Decimal, saving_after: Decimal, months_during: Decimal, horizon: int = 36
) -> int | None:
    """The month (1-based) in which a move's cumulative saving first covers its one-time cost, when the monthly
    saving is ``saving_during`` for the first ``months_during`` months (a commitment still owed) and
    ``saving_after`` from then on; 0 when nothing is owed up front and the first month saves; None when it does
    not pay off within ``horizon`` months."""
    cumulative = -one_time_cost
    if cumulative >= 0 and saving_during >= 0:
        return 0
    for month in range(1, horizon + 1):
        cumulative += month_saving(month, saving_during, saving_after, months_during)
        if cumulative >= 0:
            return month
    return None


def month_saving(month: int, saving_during: Decimal, saving_after: Decimal, months_during: Decimal) -> Decimal:
    """Month ``month``'s (1-based) saving when ``months_during`` months (a fraction) save ``saving_during`` and the
    rest ``saving_after``: a month the commitment ends in is split by its share."""
    during = min(Decimal(1), max(Decimal(0), months_during - (month - 1)))
    return saving_during * during + saving_after * (1 - during)


def value_over(
    months: int, one_time_cost: Decimal, saving_during: Decimal, saving_after: Decimal, months_during: Decimal
) -> Decimal:
    """Net value of a move over its first ``months`` months: the monthly savings less the one-time cost."""
    total = sum((month_saving(m, saving_during, saving_after, months_during) for m in range(1, months + 1)), Decimal(0))
    return total - one_time_cost
