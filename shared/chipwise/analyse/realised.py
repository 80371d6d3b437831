"""Realised savings: what a resolved finding's fix really saved, from the stored Cost Explorer data.

When a finding resolves (its resource gone, resized or moved, or the condition simply cleared), the daily cost of
the resource's usage type (instance type in its region; Cost Explorer's amortized cost, so commitments count at
their effective rate) before the change is compared with the daily cost after it. The change happened somewhere
between the last scan that still saw the finding and the scan that resolved it: those days are left out of both
sides, as is any day Cost Explorer data was not stored for. A day that was stored without a record for the usage
type cost nothing for it.

The realised monthly saving is (mean daily cost before - mean daily cost after) × 730 / 24; the estimate's
accuracy is realised ÷ estimated. The basis is the usage type, not the resource alone: another resource of the same
type started or stopped in the same days moves the figure too, which is why the days compared are stated with it.
Until ``min_days_after`` days after the change are stored the saving is pending (no figure).
"""

from __future__ import annotations

from collections.abc import Mapping, Set
from dataclasses import dataclass
from datetime import date, timedelta
from decimal import Decimal
from typing import Literal

from chipwise.economics import cents, daily_to_monthly

Status = Literal["pending", "measured"]
ACCURACY_PLACES = Decimal("0.001")


@dataclass(frozen=True)
class SavingComparison:
    status: Status
    before_days: int
    after_days: int
    before_daily_usd: Decimal | None
    after_daily_usd: Decimal | None
    realised_monthly_usd: Decimal | None
    accuracy: Decimal | None  # realised ÷ estimated (None without a figure or an estimate)


def realised_saving(
    daily_cost: Mapping[date, Decimal],
    known_days: Set[date],
    *,
    last_seen: date,
    resolved_on: date,
    estimated_monthly_usd: Decimal,
    days: int = 14,
    min_days_after: int = 3,
) -> SavingComparison | None:
    """The realised saving of a fix made between ``last_seen`` and ``resolved_on`` (dates of the scans that saw the
    finding last and resolved it): up to ``days`` stored days before ``last_seen`` against up to ``days`` stored days
    after ``resolved_on``. None when no day before is stored (nothing to compare with)."""
    before = [last_seen - timedelta(days=n) for n in range(1, days + 1)]
    after = [resolved_on + timedelta(days=n) for n in range(1, days + 1)]
    before = [d for d in before if d in known_days]
    after = [d for d in after if d in known_days]
    if not before:
        return None
    before_daily = _mean(daily_cost, before)
    if len(after) < min_days_after:
        return SavingComparison("pending", len(before), len(after), cents(before_daily), None, None, None)
    after_daily = _mean(daily_cost, after)
    realised = daily_to_monthly(before_daily - after_daily)
    accuracy = None
    if estimated_monthly_usd > 0:
        accuracy = (realised / estimated_monthly_usd).quantize(ACCURACY_PLACES)
    return SavingComparison(
        "measured", len(before), len(after), cents(before_daily), cents(after_daily), realised, accuracy
    )


def _mean(daily_cost: Mapping[date, Decimal], days: list[date]) -> Decimal:
    total = sum((daily_cost.get(d, Decimal(0)) for d in days), Decimal(0))
    return total / len(days) if days else Decimal(0)
