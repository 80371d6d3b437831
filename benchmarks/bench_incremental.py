"""A first scan against the next day's scan at R = 1,000 (14-day look-back): calls, datapoints and client CPU.

The first scan reads every series over the whole window; the next day's scan reads each series from the hour the
first one ended minus the 3-hour overlap (24 + 3 hours), while the profiles still span the whole window from the
store. Goals (issues 18 and 22): the next-day scan reads at most 1/10 of the datapoints and uses at most 1/5 of the
client CPU of the full scan, with GetMetricData calls at the floor for the queries it makes (``calls_floor``). Same
emulator child as ``bench_scan`` (CPU metrics only, no Neuron agent: 9 queries per Inferentia instance over the
whole window; a day's read lists the agent's namespace first and queries the 3 CPU statistics), seeded with 15 days
so both scans find a full window.
"""

from __future__ import annotations

import os
import tempfile
from datetime import timedelta
from pathlib import Path
from typing import Any

from benchmarks.bench_scan import LOOKBACK_DAYS, NOW, _Emulator
from benchmarks.harness import BenchResult, measure

RESOURCES = 1_000
NEXT_DAY = NOW + timedelta(days=1)
OVERLAP_HOURS = 3  # the default CHIPWISE_METRIC_OVERLAP_HOURS: a day's read is 24 + 3 hours
CPU_GOAL = 0.2  # the next-day scan at most 1/5 of the first scan's client CPU (issues 18 and 22)


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
        },
    )


def run() -> list[BenchResult]:
    from chipwise.aws import base_session
    from chipwise.store import get_session_factory, upgrade

    emulator = _Emulator(NEXT_DAY, (LOOKBACK_DAYS + 1) * 24)
    saved = {k: os.environ.get(k) for k in emulator.env}
    os.environ.update(emulator.env)
    try:
        emulator.seed(RESOURCES)
        with tempfile.TemporaryDirectory() as tmp:
            url = f"sqlite:///{Path(tmp) / 'incremental.db'}"
            upgrade(url)
            base_session.cache_clear()
            factory = get_session_factory(url)
            full = _scan(factory, NOW, f"first scan R={RESOURCES:,}", LOOKBACK_DAYS * 24)
            nextday = _scan(factory, NEXT_DAY, f"next-day scan R={RESOURCES:,}", 24 + OVERLAP_HOURS)
    finally:
        emulator.close()
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value
    nextday.baseline = full.name
    nextday.ratio = nextday.figures["cpu_s"] / max(full.figures["cpu_s"], 1e-9)
    nextday.goal = CPU_GOAL
    nextday.figures["datapoints_ratio"] = round(nextday.figures["datapoints"] / max(full.figures["datapoints"], 1), 3)
    nextday.figures["metrics_cpu_ratio"] = round(
        (nextday.figures["metrics_stage_cpu_s"] or 0) / max(full.figures["metrics_stage_cpu_s"] or 0, 1e-9), 3
    )
    return [full, nextday]
