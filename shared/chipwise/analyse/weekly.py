"""A resource's weekly pattern: which hours of the week it works, which it never does, and how regularly.

Read off one activity series kept by hour of the week (:attr:`SeriesStats.weekly`). Each of the 168 slots of the
week (Monday 00:00 UTC = 0) was observed once per week the resource ran; an observation is *active* when the value
reached the activity threshold. A slot is *off* when it was observed at least ``min_weeks`` times and never active;
off slots in a row (wrapping round the week) longer than ``min_off_stretch_hours`` are the *off stretches* a schedule
can switch the capacity off for. Every other slot is *on*, and the *regularity* is the share of on-slot
observations that were active: 1.0 for the same office hours every week, about the duty cycle for load that comes
at random hours (whose quiet slots are quiet by chance, not by habit).

Counters (requests per hour) have no datapoint for an hour without activity, so an hour the resource ran without
a datapoint is an idle observation; gauges (utilisation) count only the hours with a datapoint, so missing
telemetry never reads as idle.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

from chipwise.analyse.series import HOUR, HOURS_PER_WEEK, SeriesStats, hour_of_week

DAY_NAMES = ("Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun")


@dataclass(frozen=True)
class OffStretch:
    """Off slots in a row: down at ``start`` (slot of the week), back up ``hours`` later."""

    start: int
    hours: int

    @property
    def end(self) -> int:
        return (self.start + self.hours) % HOURS_PER_WEEK

    def describe(self) -> str:
        return f"{slot_name(self.start)} → {slot_name(self.end)}"


@dataclass(frozen=True)
class WeeklyPattern:
    observed: tuple[int, ...]  # observations per slot
    active: tuple[int, ...]  # active observations per slot
    off_stretches: tuple[OffStretch, ...]
    weeks_observed: float

    @property
    def off_slots(self) -> frozenset[int]:
        return frozenset((s.start + i) % HOURS_PER_WEEK for s in self.off_stretches for i in range(s.hours))

    @property
    def off_hours_per_week(self) -> int:
        return sum(s.hours for s in self.off_stretches)

    @property
    def on_hours_per_week(self) -> int:
        return HOURS_PER_WEEK - self.off_hours_per_week

    @property
    def regularity(self) -> float:
        """Active observations ÷ observations over the on slots (1.0 when there is no on slot)."""
        off = self.off_slots
        seen = sum(n for slot, n in enumerate(self.observed) if slot not in off)
        busy = sum(n for slot, n in enumerate(self.active) if slot not in off)
        return busy / seen if seen else 1.0

    def schedule(self) -> str:
        """When the capacity runs, day by day (UTC), consecutive days with the same hours grouped:
        ``Mon–Fri 09:00–19:00; Sat–Sun off``."""
        off = self.off_slots
        days: list[str] = []
        for day in range(7):
            on = [h for h in range(24) if day * 24 + h not in off]
            days.append(_hours_text(on))
        parts: list[str] = []
        first = 0
        for day in range(1, 8):
            if day == 7 or days[day] != days[first]:
                span = DAY_NAMES[first] if day - 1 == first else f"{DAY_NAMES[first]}–{DAY_NAMES[day - 1]}"
                parts.append(f"{span} {days[first]}")
                first = day
        return "; ".join(parts) + " (UTC)"


def slot_name(slot: int) -> str:
    return f"{DAY_NAMES[slot // 24]} {slot % 24:02d}:00"


def _hours_text(on: list[int]) -> str:
    if not on:
        return "off"
    if len(on) == 24:
        return "all day"
    ranges: list[tuple[int, int]] = []
    for hour in on:
        if ranges and ranges[-1][1] == hour:
            ranges[-1] = (ranges[-1][0], hour + 1)
        else:
            ranges.append((hour, hour + 1))
    return ", ".join(f"{a:02d}:00–{b:02d}:00" for a, b in ranges)


def slot_occurrences(since: datetime, end: datetime) -> tuple[int, ...]:
    """How many times each slot of the week falls in ``[since, end)`` (whole hours)."""
    counts = [0] * HOURS_PER_WEEK
    hour = since.replace(minute=0, second=0, microsecond=0)
    if hour < since:
        hour += HOUR
    full_weeks, _ = divmod(int((end - hour) / HOUR), HOURS_PER_WEEK)
    if full_weeks:
        counts = [full_weeks] * HOURS_PER_WEEK
        hour += timedelta(weeks=full_weeks)
    while hour < end:
        counts[hour_of_week(hour)] += 1
        hour += HOUR
    return tuple(counts)


def weekly_pattern(
    series: SeriesStats,
    *,
    threshold: float,
    counter: bool,
    since: datetime,
    end: datetime,
    min_weeks: int,
    min_off_stretch_hours: int,
) -> WeeklyPattern | None:
    """The weekly pattern of ``series`` over ``[since, end)`` (None when it was not kept by hour of week)."""
    if series.weekly is None:
        return None
    slots = series.weekly
    runs = slot_occurrences(since, end)
    observed = runs if counter else tuple(min(slots.seen(slot), run) for slot, run in enumerate(runs))
    active = tuple(min(slots.at_or_above(slot, threshold), seen) for slot, seen in enumerate(observed))
    quiet = [observed[s] >= min_weeks and active[s] == 0 for s in range(HOURS_PER_WEEK)]
    return WeeklyPattern(
        observed=observed,
        active=active,
        off_stretches=_stretches(quiet, min_off_stretch_hours),
        weeks_observed=max(0.0, (end - since) / timedelta(weeks=1)),
    )


def _stretches(quiet: list[bool], min_hours: int) -> tuple[OffStretch, ...]:
    """Runs of quiet slots, wrapping round the week, of at least ``min_hours``."""
    if all(quiet):
        return (OffStretch(0, HOURS_PER_WEEK),) if min_hours <= HOURS_PER_WEEK else ()
    if not any(quiet):
        return ()
    begin = next(s for s in range(HOURS_PER_WEEK) if not quiet[s])  # start the walk on an on slot
    found: list[OffStretch] = []
    start: int | None = None
    length = 0
    for i in range(1, HOURS_PER_WEEK + 1):
        slot = (begin + i) % HOURS_PER_WEEK
        if quiet[slot] and start is None:
            start, length = slot, 0
        if quiet[slot]:
            length += 1
        elif start is not None:
            if length >= min_hours:
                found.append(OffStretch(start, length))
            start = None
    return tuple(sorted(found, key=lambda s: s.start))
