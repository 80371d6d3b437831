"""The scan's own client CPU time and peak memory at R = 1,000 and 5,000 resources (14-day look-back).

The AWS emulator runs in a child process, so the figures are the scan's alone (boto3 parsing, packing, combining
rollups, writing the store, the rules), not moto's. Each R gets Inferentia instances with 14 days of hourly CPU metrics
(the agent-less case: 9 queries per instance, one series with data) and a week of Cost Explorer results. The
baseline is R = 1,000 in the same process: the ratio shows how the scan scales (5.0x would be linear).
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from benchmarks.harness import BenchResult, measure

SIZES = (1_000, 5_000)
LOOKBACK_DAYS = 14
NOW = datetime(2026, 11, 20, 12, tzinfo=UTC)

# The child: an emulator that creates R instances with metrics and cost pages on request, one command per line.
_CHILD = r"""
import json, sys
from datetime import datetime, timedelta, UTC
import boto3
from botocore.config import Config
from chipwise_devkit.emulator import Emulator, MetricPoint
NOW = datetime.fromisoformat(sys.argv[1])
HOURS = int(sys.argv[2])
with Emulator() as emu:
    print(json.dumps(emu.env()), flush=True)
    for line in sys.stdin:
        command, _, arg = line.strip().partition(" ")
        if command == "seed":
            emu.reset()
            ec2 = boto3.client("ec2", endpoint_url=emu.url, region_name="us-east-1",
                               aws_access_key_id="x", aws_secret_access_key="x",
                               config=Config(read_timeout=900))  # 1,000 instances a call: slow on a loaded machine
            ids = []
            for start in range(0, int(arg), 1000):
                n = min(1000, int(arg) - start)
                ids += [i["InstanceId"] for i in ec2.run_instances(
                    ImageId="ami-12345678", InstanceType="inf2.xlarge", MinCount=n, MaxCount=n)["Instances"]]
            hours = [NOW - timedelta(hours=h) for h in range(1, HOURS + 1)]
            emu.seed_metrics(MetricPoint("AWS/EC2", "CPUUtilization", {"InstanceId": i}, at, 7.5, "Percent")
                             for i in ids for at in hours)
            emu.inject_cost_and_usage(json.loads(sys.stdin.readline()))
            print("ok", flush=True)
"""


def _cost_pages() -> list[dict[str, Any]]:
    days = [(NOW - timedelta(days=d)).date() for d in range(7, 0, -1)]
    group = {
        "Keys": ["Amazon Elastic Compute Cloud - Compute", "BoxUsage:inf2.xlarge"],
        "Metrics": {
            "UnblendedCost": {"Amount": "758.2", "Unit": "USD"},
            "AmortizedCost": {"Amount": "758.2", "Unit": "USD"},
            "UsageQuantity": {"Amount": "1000", "Unit": "Hrs"},
        },
    }
    results = [{"TimePeriod": {"Start": str(d), "End": str(d + timedelta(days=1))}, "Groups": [group]} for d in days]
    return [{"ResultsByTime": results[:4], "NextPageToken": "2"}, {"ResultsByTime": results[4:]}]


class _Emulator:
    """The emulator child process."""

    def __init__(self, now: datetime = NOW, hours: int = LOOKBACK_DAYS * 24) -> None:
        self.process = subprocess.Popen(
            [sys.executable, "-c", _CHILD, now.isoformat(), str(hours)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        assert self.process.stdout is not None
        self.env: dict[str, str] = json.loads(self.process.stdout.readline())

    def seed(self, resources: int) -> None:
        assert self.process.stdin is not None and self.process.stdout is not None
        self.process.stdin.write(f"seed {resources}\n{json.dumps(_cost_pages())}\n")
        self.process.stdin.flush()
        if self.process.stdout.readline().strip() != "ok":
            raise RuntimeError("the emulator child did not seed")

    def close(self) -> None:
        if self.process.stdin:
            self.process.stdin.close()
        self.process.wait(timeout=60)


def _scan_once(resources: int, emulator: _Emulator, workdir: Path) -> BenchResult:
    """Scan R resources twice: CPU time untraced (tracemalloc slows allocation-heavy code), then the peak Python
    heap of the same scan again (idempotent: it reads and writes the same amounts)."""
    from chipwise.aws import aws_context, base_session
    from chipwise.pipeline.scan import run_scan
    from chipwise.store import get_session_factory, upgrade

    emulator.seed(resources)
    url = f"sqlite:///{workdir / f'scan-{resources}.db'}"
    upgrade(url)
    base_session.cache_clear()
    factory = get_session_factory(url)

    def scan() -> Any:  # a full read each time (bench_incremental measures the next-day scan)
        return run_scan(
            aws_context("us-east-1"),
            factory,
            region="us-east-1",
            now=NOW,
            lookback_days=LOOKBACK_DAYS,
            incremental=False,
        )

    with measure(track_memory=False) as timed:
        document = scan()
    with measure(track_memory=True) as traced:
        scan()
    calls = document.api_calls
    return BenchResult(
        name=f"scan R={resources:,}",
        figures={
            "cpu_s": round(timed.cpu_seconds, 2),
            "wall_s": round(timed.wall_seconds, 2),
            "peak_mib": round(traced.peak_mib, 1),
            "cpu_ms_per_resource": round(1000 * timed.cpu_seconds / resources, 2),
            "resources": len(document.resources),
            "GetMetricData": calls.get("cloudwatch.GetMetricData", 0),
            "GetCostAndUsage": calls.get("ce.GetCostAndUsage", 0),
            "api_calls": sum(calls.values()),
        },
    )


def run() -> list[BenchResult]:
    import os

    emulator = _Emulator()
    saved = {k: os.environ.get(k) for k in emulator.env}
    os.environ.update(emulator.env)
    try:
        with tempfile.TemporaryDirectory() as tmp:
            results = [_scan_once(r, emulator, Path(tmp)) for r in SIZES]
    finally:
        emulator.close()
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value
    baseline = results[0]
    for result in results[1:]:
        result.baseline = baseline.name
        result.ratio = result.figures["cpu_s"] / max(baseline.figures["cpu_s"], 1e-9)
        result.figures["peak_ratio"] = round(result.figures["peak_mib"] / max(baseline.figures["peak_mib"], 1e-9), 2)
    return results
