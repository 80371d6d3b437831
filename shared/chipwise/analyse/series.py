"""Summaries of one hourly series: the figures rules ask for, without keeping the hours in memory.

A profile of 10,000 resources over 30 days would hold tens of millions of hourly values; the rules need only a
handful of figures per series (percentiles, mean, maximum, hours with data) and one question that depends on a
threshold chosen later by a policy: "when was the value last at or above *t*?" (the idle streak). That question is
answered exactly by the series' *peaks*: scanning from the newest hour backwards, every hour whose value exceeds
all newer ones. The newest hour at or above *t* is always one of them, and there are few of them (a handful for a
noisy or steady series, one for a flat one).

Percentiles interpolate linearly between the closest ranks (the usual "linear" definition, numpy's default).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any, cast

from chipwise.economics import percentile

HOUR = timedelta(hours=1)


@dataclass(frozen=True, slots=True)
class SeriesStats:
    """One metric of one resource over the window, summarised (hours without a datapoint are not counted)."""

    hours: int
    total: float
    mean: float
    minimum: float
    p10: float
    p50: float
    p95: float
    maximum: float
    nonzero_hours: int
    first_hour: datetime
    last_hour: datetime
    peaks: tuple[tuple[datetime, float], ...]  # newest first; each value above every newer hour's value

    def last_at_or_above(self, threshold: float) -> datetime | None:
        """The newest hour whose value was at least ``threshold`` (None when no hour was)."""
        for hour, value in self.peaks:
            if value >= threshold:
                return hour
        return None

    def hours_below_since(self, threshold: float, end: datetime, since: datetime) -> float:
        """Hours before ``end`` (back to ``since`` at most) during which the value stayed below ``threshold``."""
        last = self.last_at_or_above(threshold)
        start = since if last is None else max(since, last + HOUR)
        return max(0.0, (end - start) / HOUR)

    def peak_to_mean(self, over_hours: float | None = None) -> float | None:
        """Maximum ÷ mean, the mean taken over ``over_hours`` (absent hours as zero) or over the hours with data."""
        hours = over_hours if over_hours is not None else self.hours
        mean = self.total / hours if hours else 0.0
        return self.maximum / mean if mean > 0 else None


def _same(hour: Any) -> datetime:
    return cast(datetime, hour)


def summarise(
    hours: Sequence[Any], values: Sequence[float], to_time: Callable[[Any], datetime] = _same
) -> SeriesStats | None:
    """The summary of one series given oldest-first (None when it has no value). ``hours`` may be kept in the
    store's raw form; ``to_time`` turns the few that the summary keeps (first, last, peaks) into datetimes."""
    if not values:
        return None
    if len(hours) != len(values):
        raise ValueError("hours and values differ in length")
    ordered = sorted(values)
    peaks: list[tuple[datetime, float]] = []
    running = -math.inf
    for index in range(len(values) - 1, -1, -1):
        if values[index] > running:
            running = values[index]
            peaks.append((to_time(hours[index]), running))
    total = math.fsum(values)
    return SeriesStats(
        hours=len(values),
        total=total,
        mean=total / len(values),
        minimum=ordered[0],
        p10=percentile(ordered, 10),
        p50=percentile(ordered, 50),
        p95=percentile(ordered, 95),
        maximum=ordered[-1],
        nonzero_hours=sum(1 for v in values if v > 0),
        first_hour=to_time(hours[0]),
        last_hour=to_time(hours[-1]),
        peaks=tuple(peaks),
    )
