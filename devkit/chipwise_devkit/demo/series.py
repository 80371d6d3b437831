"""Deterministic hourly series for the demo account: daily cycles, quiet weekends, spikes and idleness.

Every generator returns one value per hour for ``hours`` consecutive hours ending at the demo's "now";
values are plain floats (utilisation in percent, counts per hour).
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta

Series = Callable[[list[datetime], random.Random], list[float]]


def hours_ending(now: datetime, hours: int) -> list[datetime]:
    """The ``hours`` full hours before ``now`` (oldest first); ``now`` is an hour boundary."""
    return [now - timedelta(hours=hours - i) for i in range(hours)]


def _daily_shape(ts: datetime) -> float:
    """1.0 on average; peaks mid-afternoon UTC, troughs at night, 30 % quieter at weekends."""
    cycle = 1.0 + 0.35 * math.sin(2 * math.pi * (ts.hour - 9) / 24)
    return cycle * (0.7 if ts.weekday() >= 5 else 1.08)


@dataclass(frozen=True)
class Steady:
    """Busy all day every day around ``level`` (with a daily cycle and ``jitter`` relative noise)."""

    level: float
    jitter: float = 0.08
    cap: float | None = 100.0

    def __call__(self, stamps: list[datetime], rng: random.Random) -> list[float]:
        values = []
        for ts in stamps:
            value = self.level * _daily_shape(ts) * (1 + rng.uniform(-self.jitter, self.jitter))
            values.append(min(value, self.cap) if self.cap is not None else value)
        return [max(0.0, v) for v in values]


@dataclass(frozen=True)
class Flat:
    """Nearly constant (an idle box: a little background noise around ``level``)."""

    level: float
    noise: float = 0.0

    def __call__(self, stamps: list[datetime], rng: random.Random) -> list[float]:
        return [max(0.0, self.level + rng.uniform(-self.noise, self.noise)) for _ in stamps]


@dataclass(frozen=True)
class Spiky:
    """Idle most hours; ``bursts_per_day`` hours a day jump to ``peak`` (zero elsewhere)."""

    peak: float
    bursts_per_day: int = 2
    floor: float = 0.0

    def __call__(self, stamps: list[datetime], rng: random.Random) -> list[float]:
        burst_hours: set[tuple[int, int]] = set()
        for day in {ts.toordinal() for ts in stamps}:
            for hour in rng.sample(range(8, 20), self.bursts_per_day):
                burst_hours.add((day, hour))
        return [
            self.peak * rng.uniform(0.8, 1.0) if (ts.toordinal(), ts.hour) in burst_hours else self.floor
            for ts in stamps
        ]


@dataclass(frozen=True)
class OfficeHours:
    """``level`` (with a little noise) on weekdays from ``start`` to ``end`` o'clock UTC, ``off`` otherwise."""

    level: float
    start: int = 9
    end: int = 19
    off: float = 0.0
    jitter: float = 0.08

    def __call__(self, stamps: list[datetime], rng: random.Random) -> list[float]:
        return [
            self.level * (1 + rng.uniform(-self.jitter, self.jitter))
            if ts.weekday() < 5 and self.start <= ts.hour < self.end
            else self.off
            for ts in stamps
        ]


@dataclass(frozen=True)
class Window:
    """``inner`` only while a job ran: ``hours`` hours starting ``ended_hours_ago + hours`` hours before now."""

    inner: Series
    hours: int
    ended_hours_ago: int = 0

    def __call__(self, stamps: list[datetime], rng: random.Random) -> list[float]:
        values = self.inner(stamps, rng)
        end = len(stamps) - self.ended_hours_ago
        start = end - self.hours
        return [v if start <= i < end else math.nan for i, v in enumerate(values)]
