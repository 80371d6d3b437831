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
from array import array
from bisect import bisect_left, bisect_right
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any, cast

from chipwise.economics import percentile

HOUR = timedelta(hours=1)
HOURS_PER_WEEK = 168


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
    # The values by hour of the week (Monday 00:00 UTC = slot 0, 168 slots), kept only for the series a weekly
    # pattern is read from (summarise(..., weekly=True)); None otherwise.
    weekly: WeeklySlots | None = None

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


@dataclass(frozen=True, slots=True)
class WeeklySlots:
    """A series' values by hour of the week, each slot's sorted, packed as machine floats (8 bytes a value, about
    a fifth of the same values as Python floats in tuples): how many hours each slot was seen, and how many of them
    reached a threshold a policy chooses later, exactly."""

    values: array[float]  # slot 0's values ascending, then slot 1's, ...
    bounds: array[int]  # 169 offsets: slot s is values[bounds[s]:bounds[s + 1]]

    def seen(self, slot: int) -> int:
        """Hours with a value in ``slot``."""
        return self.bounds[slot + 1] - self.bounds[slot]

    def at_or_above(self, slot: int, threshold: float) -> int:
        """Hours of ``slot`` whose value was at least ``threshold``."""
        low, high = self.bounds[slot], self.bounds[slot + 1]
        return high - bisect_left(self.values, threshold, low, high)


def _same(hour: Any) -> datetime:
    return cast(datetime, hour)


def hour_of_week(hour: datetime) -> int:
    """The slot of an hour in the week: Monday 00:00 UTC is 0, Sunday 23:00 UTC is 167."""
    return hour.weekday() * 24 + hour.hour


def summarise(
    hours: Sequence[Any],
    values: Sequence[float],
    to_time: Callable[[Any], datetime] = _same,
    *,
    weekly: bool = False,
) -> SeriesStats | None:
    """The summary of one series given oldest-first (None when it has no value). ``hours`` may be kept in the
    store's raw form; ``to_time`` turns the few that the summary keeps (first, last, peaks) into datetimes (every
    hour when ``weekly`` asks for the values by hour of the week)."""
    if not values:
        return None
    if len(hours) != len(values):
        raise ValueError("hours and values differ in length")
    ordered = sorted(values)
    peaks: list[tuple[datetime, float]] = []
    running = -math.inf
    last = len(values) - 1
    for offset, value in enumerate(reversed(values)):
        if value > running:
            running = value
            peaks.append((to_time(hours[last - offset]), value))
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
        nonzero_hours=len(ordered) - bisect_right(ordered, 0.0),  # the values above zero, counted in the sort
        first_hour=to_time(hours[0]),
        last_hour=to_time(hours[-1]),
        peaks=tuple(peaks),
        weekly=_by_hour_of_week(hours, values, to_time) if weekly else None,
    )


def _by_hour_of_week(hours: Sequence[Any], values: Sequence[float], to_time: Callable[[Any], datetime]) -> WeeklySlots:
    slots: list[list[float]] = [[] for _ in range(HOURS_PER_WEEK)]
    for hour, value in zip(hours, values, strict=True):
        slots[hour_of_week(to_time(hour))].append(value)
    packed: array[float] = array("d")
    bounds: array[int] = array("l", [0])
    for slot in slots:
        packed.extend(sorted(slot))
        bounds.append(len(packed))
    return WeeklySlots(packed, bounds)
