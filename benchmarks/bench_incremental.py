"""A first scan against the next day's scan at R = 1,000 (14-day look-back): calls, datapoints and client CPU.

The first scan reads every series over the whole window; the next day's scan reads each series from the hour the
first one ended minus the 3-hour overlap (24 + 3 hours), while the profiles still span the whole window from the
store. Goals (issues 18 and 22): the next-day scan reads at most 1/10 of the datapoints and uses at most 1/5 of the
client CPU of the full scan, with GetMetricData calls at the floor for the queries it makes (``calls_floor``). Same
emulator child as ``bench_scan`` (CPU metrics only, no Neuron agent: 9 queries per Inferentia instance over the
whole window; a day's read lists the agent's namespace first and queries the 3 CPU statistics), seeded with 15 days
so both scans find a full window.

Then the history (issue 37): a first scan and a next-day scan every day to day 30
(``CHIPWISE_BENCH_HISTORY_DAYS``) on one store, ``CHIPWISE_BENCH_HISTORY_RESOURCES`` instances (1,000 unless
set), the emulator seeded with the whole span; the next-day scan's CPU at the end of the history against its
start (medians of three days each: goal ≤ 1.2). A day whose scan is not ``succeeded`` is counted in
``scans_not_succeeded`` (its CPU is not a scan's).
"""

from __future__ import annotations

import os
import statistics
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from benchmarks.bench_scan import LOOKBACK_DAYS, NOW, _Emulator
from benchmarks.harness import BenchResult, measure

RESOURCES = 1_000
NEXT_DAY = NOW + timedelta(days=1)
OVERLAP_HOURS = 3  # the default CHIPWISE_METRIC_OVERLAP_HOURS: a day's read is 24 + 3 hours
CPU_GOAL = 0.2  # the next-day scan at most 1/5 of the first scan's client CPU (issues 18 and 22)
HISTORY_DAYS = int(os.environ.get("CHIPWISE_BENCH_HISTORY_DAYS", "30"))
HISTORY_RESOURCES = int(os.environ.get("CHIPWISE_BENCH_HISTORY_RESOURCES", str(RESOURCES)))
HISTORY_GOAL = 1.2  # issue 37: the next-day scan on day 30 of history within 1.2 x day 2


def _scan(factory: Any, now: Any, name: str, read_hours: int) -> BenchResult:
    from chipwise.aws import aws_context
    from chipwise.collect.metrics import expected_calls
    from chipwise.pipeline.scan import run_scan
    from chipwise.store.tables import Scan

    with measure(track_memory=False) as timed:
        document = run_scan(aws_context("us-east-1"), factory, region="us-east-1", now=now, lookback_days=LOOKBACK_DAYS)
    with factory() as session:
        scan = session.get(Scan, document.scan_id)
        assert scan is not None
        counts, cpu = scan.timings["counts"], scan.timings["cpu"]
    return BenchResult(
        name=name,
        figures={
            "GetMetricData": document.api_calls.get("cloudwatch.GetMetricData", 0),
            "ListMetrics": document.api_calls.get("cloudwatch.ListMetrics", 0),
            "metric_queries": counts["metric_queries"],
            "calls_floor": expected_calls(counts["metric_queries"], read_hours),
            "datapoints": counts["datapoints"],
            "cpu_s": round(timed.cpu_seconds, 2),
            "inventory_stage_cpu_s": cpu.get("inventory"),  # the same listing both days: a floor of the ratio
            "metrics_stage_cpu_s": cpu.get("metrics"),
            "rules_stage_cpu_s": cpu.get("rules"),
            "wall_s": round(timed.wall_seconds, 2),
            "status": document.status,
        },
    )


@contextmanager
def _emulated(now: datetime, hours: int, resources: int = RESOURCES) -> Iterator[Any]:
    """The emulator child seeded with R instances and ``hours`` of metrics up to ``now``; a fresh SQLite store's
    session factory, with the emulator's environment set for the block."""
    from chipwise.aws import base_session
    from chipwise.store import get_session_factory, upgrade

    emulator = _Emulator(now, hours)
    saved = {k: os.environ.get(k) for k in emulator.env}
    os.environ.update(emulator.env)
    try:
        emulator.seed(resources)
        with tempfile.TemporaryDirectory() as tmp:
            url = f"sqlite:///{Path(tmp) / 'incremental.db'}"
            upgrade(url)
            base_session.cache_clear()
            yield get_session_factory(url)
    finally:
        emulator.close()
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


def _next_day() -> list[BenchResult]:
    with _emulated(NEXT_DAY, (LOOKBACK_DAYS + 1) * 24) as factory:
        full = _scan(factory, NOW, f"first scan R={RESOURCES:,}", LOOKBACK_DAYS * 24)
        nextday = _scan(factory, NEXT_DAY, f"next-day scan R={RESOURCES:,}", 24 + OVERLAP_HOURS)
    nextday.baseline = full.name
    nextday.ratio = nextday.figures["cpu_s"] / max(full.figures["cpu_s"], 1e-9)
    nextday.goal = CPU_GOAL
    nextday.figures["datapoints_ratio"] = round(nextday.figures["datapoints"] / max(full.figures["datapoints"], 1), 3)
    nextday.figures["metrics_cpu_ratio"] = round(
        (nextday.figures["metrics_stage_cpu_s"] or 0) / max(full.figures["metrics_stage_cpu_s"] or 0, 1e-9), 3
    )
    return [full, nextday]


def _history() -> list[BenchResult]:
    """Day 1 a first scan, then a next-day scan every day up to day ``HISTORY_DAYS`` on the same store (the history
    accumulating: scans and their documents, findings, rollups, coverage): the next-day scan's CPU late in the
    history against early. Each end is the median of three days' scans (days 2-4 and the last three), the machine
    being noisy."""
    last = NOW + timedelta(days=HISTORY_DAYS - 1)
    days: list[BenchResult] = []
    with _emulated(last, (LOOKBACK_DAYS + HISTORY_DAYS) * 24, HISTORY_RESOURCES) as factory:
        for day in range(1, HISTORY_DAYS + 1):
            hours = LOOKBACK_DAYS * 24 if day == 1 else 24 + OVERLAP_HOURS
            days.append(_scan(factory, NOW + timedelta(days=day - 1), f"day {day}", hours))
    early, late = days[1:4], days[-3:]

    def median(results: list[BenchResult], figure: str) -> float:
        return float(statistics.median(float(r.figures[figure] or 0) for r in results))

    figures: dict[str, Any] = {}
    for figure in ("cpu_s", "rules_stage_cpu_s", "metrics_stage_cpu_s", "inventory_stage_cpu_s"):
        figures[f"day 2-4 {figure}"] = round(median(early, figure), 3)
        figures[f"day {HISTORY_DAYS - 2}-{HISTORY_DAYS} {figure}"] = round(median(late, figure), 3)
    figures["scans_not_succeeded"] = sum(1 for r in days if r.figures["status"] != "succeeded")
    figures["cpu_s by day"] = " ".join(f"{r.figures['cpu_s']:.2f}" for r in days[1:])
    return [
        BenchResult(
            name=f"next-day scan on day {HISTORY_DAYS - 2}-{HISTORY_DAYS} of history R={HISTORY_RESOURCES:,}",
            figures=figures,
            baseline="the same on days 2-4",
            ratio=median(late, "cpu_s") / max(median(early, "cpu_s"), 1e-9),
            goal=HISTORY_GOAL,
        )
    ]


def run() -> list[BenchResult]:
    return [*_next_day(), *_history()]
