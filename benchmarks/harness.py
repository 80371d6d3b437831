"""Small helpers shared by the benchmark modules."""

from __future__ import annotations

import resource
import time
import tracemalloc
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any


@dataclass
class Measurement:
    cpu_seconds: float = 0.0
    wall_seconds: float = 0.0
    peak_mib: float = 0.0


@dataclass
class BenchResult:
    """One line of the report: a name, its figures, and optionally its ratio to a baseline and the ratio's goal
    (at most)."""

    name: str
    figures: dict[str, Any] = field(default_factory=dict)
    baseline: str | None = None
    ratio: float | None = None
    goal: float | None = None


@contextmanager
def measure(track_memory: bool = True) -> Iterator[Measurement]:
    """CPU time (this process), wall time and peak Python heap of the block."""
    m = Measurement()
    if track_memory:
        tracemalloc.start()
    cpu0, wall0 = time.process_time(), time.perf_counter()
    try:
        yield m
    finally:
        m.cpu_seconds = time.process_time() - cpu0
        m.wall_seconds = time.perf_counter() - wall0
        if track_memory:
            m.peak_mib = tracemalloc.get_traced_memory()[1] / 2**20
            tracemalloc.stop()


def best_of(repeats: int, fn: Callable[[], object]) -> float:
    """The best CPU time of ``repeats`` runs of ``fn`` (seconds)."""
    best = float("inf")
    for _ in range(repeats):
        start = time.process_time()
        fn()
        best = min(best, time.process_time() - start)
    return best


def max_rss_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
