"""The arithmetic of a recommendation: $/hour to $/month, cost per million requests or tokens, instances needed
for a demand, one-time porting cost and break-even.

Pure functions over Decimal (money never goes through float). "Monthly" is 730 hours everywhere. Amounts a finding
shows are rounded to the cent once, at the end (:func:`cents`), so a saving is exactly the difference of the two
monthly costs it is computed from.
"""

from __future__ import annotations

import math
from decimal import ROUND_CEILING, ROUND_HALF_UP, Decimal

from chipwise.catalog import Economics
from chipwise.models.common import HOURS_PER_MONTH, Effort

CENT = Decimal("0.01")
SECONDS_PER_HOUR = Decimal(3600)
MILLION = Decimal(1_000_000)


def cents(amount: Decimal) -> Decimal:
    """Rounded half-up to the cent."""
    return amount.quantize(CENT, rounding=ROUND_HALF_UP)


def monthly_cost(hourly_rate: Decimal, count: int | Decimal = 1) -> Decimal:
    """``count`` instances at ``hourly_rate`` for 730 hours, to the cent."""
    return cents(hourly_rate * Decimal(count) * HOURS_PER_MONTH)


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


def cost_per_million_observed(monthly: Decimal, monthly_units: Decimal) -> Decimal | None:
    """What a million requests (tokens) cost today: the monthly bill over the monthly volume. None without volume
    (an idle endpoint's cost per request is unbounded)."""
    if monthly_units <= 0:
        return None
    return monthly / monthly_units * MILLION


def instances_needed(demand_per_second: Decimal, capacity_per_instance: Decimal, headroom: Decimal = Decimal(1)) -> int:
    """The fewest instances whose capacity covers the demand times the headroom (at least one)."""
    if capacity_per_instance <= 0:
        raise ValueError("capacity per instance must be positive")
    needed = (demand_per_second * headroom / capacity_per_instance).to_integral_value(rounding=ROUND_CEILING)
    return max(1, int(needed))


def porting_cost(economics: Economics, effort: Effort) -> Decimal:
    """One-time cost of moving a workload: engineer-weeks for the effort × the loaded weekly cost."""
    return economics.porting_cost_usd(effort)


def break_even_months(one_time_cost: Decimal, monthly_saving: Decimal) -> float | None:
    """Months of savings that pay back the one-time cost (0 when there is none; None when nothing is saved)."""
    if monthly_saving <= 0:
        return None
    if one_time_cost <= 0:
        return 0.0
    months = float(one_time_cost / monthly_saving)
    return math.ceil(months * 100) / 100  # rounded up: never promise a payback sooner than it comes
