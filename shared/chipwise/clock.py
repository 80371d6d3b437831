"""The one clock: timezone-aware UTC, for stored timestamps and every decision that depends on the time; and the
calendar months (billing periods) a window of days touches."""

from __future__ import annotations

from datetime import UTC, date, datetime


def utcnow() -> datetime:
    """Now, timezone-aware UTC."""
    return datetime.now(UTC)


def billing_periods(start: date, end: date) -> list[str]:
    """The billing periods (``YYYY-MM``) a half-open day window ``[start, end)`` touches."""
    periods: list[str] = []
    year, month = start.year, start.month
    last = end if end > start else start
    while (year, month) <= (last.year, last.month):
        period = f"{year:04d}-{month:02d}"
        if not (end > start and date(year, month, 1) >= end):
            periods.append(period)
        year, month = (year + 1, 1) if month == 12 else (year, month + 1)
    return periods
