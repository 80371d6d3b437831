"""The incremental scan: the next day's scan reads each (resource, metric) from the hour its last read ended minus a
3-hour overlap, a resource never read over the whole window; coverage and profiles still span the whole window."""

from __future__ import annotations

import math
import shutil
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import boto3
import pytest
from sqlalchemy import event, func, select
from sqlalchemy.engine import Engine

from chipwise.aws import aws_context
from chipwise.pipeline import scan_metrics
from chipwise.pipeline.scan import run_scan
from chipwise.store import get_session_factory
from chipwise.store.repositories.metric_series import KEEP_HOURS, keep_hours
from chipwise.store.tables import MetricCoverage, MetricRollup, MetricSeries, Resource, Scan
from chipwise_devkit.emulator import Emulator, MetricPoint

NOW = datetime(2026, 11, 20, 12, tzinfo=UTC)
NEXT_DAY = NOW + timedelta(days=1)
HOUR = timedelta(hours=1)
SERIES = (("AWS/EC2", "CPUUtilization"), ("Chipwise/Neuron", "NeuronCoreUtilization"))
QUERIES_PER_INSTANCE = 9  # CPU (3 stats) + NeuronCoreUtilization (3) + Avg, memory, executions (1 each)
GAUGE_STATS = 3  # Average, Maximum, SampleCount: one datapoint each per hour with data


def _instances(count: int) -> list[str]:
    reservation = boto3.client("ec2").run_instances(
        ImageId="ami-12345678", InstanceType="inf2.xlarge", MinCount=count, MaxCount=count
    )
    return [i["InstanceId"] for i in reservation["Instances"]]


def _seed(aws: Emulator, ids: list[str], hours: list[datetime]) -> None:
    aws.seed_metrics(
        MetricPoint(namespace, metric, {"InstanceId": iid}, at, 40.0, "Percent")
        for iid in ids
        for namespace, metric in SERIES
        for at in hours
    )


def _counts(url: str, scan_id: str) -> dict[str, int]:
    with get_session_factory(url)() as session:
        scan = session.get(Scan, scan_id)
        assert scan is not None
        return dict(scan.timings["counts"])


def test_the_next_day_scan_reads_a_day_and_the_overlap(aws: Emulator, sqlite_url: str) -> None:
    # Given 40 Inferentia instances with 15 days of hourly CPU and NeuronCore metrics up to the next day, except the
    # NeuronCore datapoint of 2 hours before the first scan (CloudWatch has not got it yet)
    ids = _instances(40)
    late = NOW - timedelta(hours=2)
    every_hour = [NEXT_DAY - timedelta(hours=h) for h in range(1, 15 * 24 + 1)]
    aws.seed_metrics(
        MetricPoint("AWS/EC2", "CPUUtilization", {"InstanceId": iid}, at, 40.0, "Percent")
        for iid in ids
        for at in every_hour
    )
    aws.seed_metrics(
        MetricPoint("Chipwise/Neuron", "NeuronCoreUtilization", {"InstanceId": iid}, at, 40.0, "Percent")
        for iid in ids
        for at in every_hour
        if at != late
    )
    factory = get_session_factory(sqlite_url)
    # When the first scan runs: every series over the whole 14-day window (336 hours; 300 queries a call)
    first = run_scan(aws_context("us-east-1"), factory, region="us-east-1", now=NOW, lookback_days=14)
    counts = _counts(sqlite_url, first.scan_id)
    assert counts["datapoints"] == 40 * GAUGE_STATS * (336 + 335)
    assert first.api_calls["cloudwatch.GetMetricData"] == math.ceil(40 * QUERIES_PER_INSTANCE / 300) == 2
    assert counts["metric_targets_incremental"] == 0
    # Given the late datapoint arrives, and a new instance appears with 15 days of metrics
    aws.seed_metrics(
        MetricPoint("Chipwise/Neuron", "NeuronCoreUtilization", {"InstanceId": iid}, late, 40.0, "Percent")
        for iid in ids
    )
    (new,) = _instances(1)
    _seed(aws, [new], every_hour)
    # When the next day's scan runs
    second = run_scan(aws_context("us-east-1"), factory, region="us-east-1", now=NEXT_DAY, lookback_days=14)
    counts = _counts(sqlite_url, second.scan_id)
    # Then the 40 known instances are read over 24 + 3 hours (one call of 360 queries, under 500), the new one over
    # the whole window (one call): 40 x 2 series x 3 stats x 27 + 1 x 2 x 3 x 336 datapoints
    assert second.api_calls["cloudwatch.GetMetricData"] == 1 + 1
    assert counts["datapoints"] == 40 * 2 * GAUGE_STATS * 27 + 2 * GAUGE_STATS * 336
    assert counts["metric_targets_incremental"] == 40 * 5
    assert counts["metric_targets_full"] == 5
    # And a day's read queries only the agent series ListMetrics lists: CPU and NeuronCoreUtilization (3 stats
    # each) of the 40, not their unpublished Avg, memory and executions; the new instance's whole-window read
    # (older than ListMetrics' two weeks) queries all 9
    assert counts["metric_queries"] == 40 * 6 + QUERIES_PER_INSTANCE
    assert second.api_calls["cloudwatch.ListMetrics"] >= 1
    assert "cloudwatch.ListMetrics" not in first.api_calls  # a first read over the whole window never lists
    # And coverage spans the whole window from the store: 336 hours of each series, the late hour included
    with factory() as session:
        window_start = NEXT_DAY - timedelta(days=14)
        rows = session.execute(
            select(MetricCoverage.metric, MetricCoverage.hours_with_data, MetricCoverage.exists)
            .join(Resource, Resource.id == MetricCoverage.resource_id)
            .where(Resource.name == ids[0])
        ).all()
        by_metric = {metric: (hours, exists) for metric, hours, exists in rows}
        # every row covers the new window, those whose hours did not change (moved in one UPDATE per metric) too
        windows = set(
            session.execute(
                select(MetricCoverage.window_start, MetricCoverage.window_end, MetricCoverage.checked_at).distinct()
            )
        )
        assert windows == {(window_start, NEXT_DAY, NEXT_DAY)}
        assert by_metric["CPUUtilization"] == (336, True)
        assert by_metric["NeuronCoreUtilization"] == (336, True)
        assert by_metric["ExecutionsCompleted"] == (0, False)
        stored = session.scalar(
            select(func.count())
            .select_from(MetricRollup)
            .where(MetricRollup.metric == "NeuronCoreUtilization", MetricRollup.hour >= window_start)
        )
        assert stored == 41 * 336


def test_a_full_read_can_be_asked_for(aws: Emulator, sqlite_url: str) -> None:
    # Given 3 instances scanned once
    ids = _instances(3)
    _seed(aws, ids, [NEXT_DAY - timedelta(hours=h) for h in range(1, 15 * 24 + 1)])
    factory = get_session_factory(sqlite_url)
    run_scan(aws_context("us-east-1"), factory, region="us-east-1", now=NOW, lookback_days=14)
    # When the next day's scan is asked to read everything
    second = run_scan(
        aws_context("us-east-1"), factory, region="us-east-1", now=NEXT_DAY, lookback_days=14, incremental=False
    )
    # Then every series is read over the whole window again
    assert _counts(sqlite_url, second.scan_id)["datapoints"] == 3 * 2 * GAUGE_STATS * 336


def _scrubbed(value: Any) -> Any:
    """A document's JSON without the ids a run draws at random (scans, findings)."""
    if isinstance(value, dict):
        return {k: _scrubbed(v) for k, v in value.items() if k not in {"id", "finding_id", "scan_id", "last_scan_id"}}
    if isinstance(value, list):
        return [_scrubbed(v) for v in value]
    return value


def _daily_scans(url: str, days: int) -> tuple[list[Any], list[int], dict[str, Any]]:
    """A first scan, then a next-day scan each day to ``days``: each day's findings and verdicts (ids left out), the
    SQL statements of each next-day scan, and what the store holds at the end (coverage, rollups, packed hours)."""
    factory = get_session_factory(url)
    statements: list[int] = []
    judged = []
    counted = [0]

    def count(*_: Any) -> None:
        counted[0] += 1

    event.listen(Engine, "before_cursor_execute", count)
    try:
        for day in range(days):
            before = counted[0]
            now = NOW + timedelta(days=day)
            document = run_scan(aws_context("us-east-1"), factory, region="us-east-1", now=now, lookback_days=14)
            assert document.status == "succeeded"
            if day:
                statements.append(counted[0] - before)
            judged.append(_scrubbed(document.model_dump(mode="json", include={"findings", "verdicts", "window"})))
    finally:
        event.remove(Engine, "before_cursor_execute", count)
    with factory() as session:
        coverage = select(
            Resource.name,
            MetricCoverage.namespace,
            MetricCoverage.metric,
            MetricCoverage.exists,
            MetricCoverage.hours_with_data,
        ).join(Resource, Resource.id == MetricCoverage.resource_id)
        held = {
            "coverage": sorted(tuple(row) for row in session.execute(coverage)),
            "rollups": session.scalar(select(func.count()).select_from(MetricRollup)),
            "packed_hours": sorted({len(p) for p in session.scalars(select(MetricSeries.present))}),
        }
    return judged, statements, held


def test_a_next_day_scan_does_the_same_work_whatever_the_days_of_history(
    aws: Emulator, sqlite_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Given 4 instances with hourly CPU and NeuronCore metrics (varying by the hour) over 14 days and the 5 to come,
    # and two empty stores
    ids = _instances(4)
    last = NOW + timedelta(days=5)
    aws.seed_metrics(
        MetricPoint(
            namespace,
            metric,
            {"InstanceId": iid},
            last - h * HOUR,
            (h * 7 + n) % 3 * 0.3 if n % 2 else float((h * 7 + n) % 60),
            "Percent",
        )
        for n, iid in enumerate(ids)
        for namespace, metric in SERIES
        for h in range(1, 19 * 24 + 1)
    )
    shutil.copy(sqlite_url.removeprefix("sqlite:///"), tmp_path / "unbounded.db")
    # When a first scan and 5 daily scans run on the first store, and the same on the other with the packed series
    # keeping every hour up to the longest window (63 days: as before the scan bounded them by what it reads)
    judged, statements, held = _daily_scans(sqlite_url, 6)
    monkeypatch.setattr(scan_metrics, "keep_hours", lambda _days: KEEP_HOURS)
    before, _, held_before = _daily_scans(f"sqlite:///{tmp_path / 'unbounded.db'}", 6)
    # Then every next-day scan runs the same statements, its packed series hold the window and a day, not the
    # history (the other store's grew a day each day)
    assert len(statements) == 5 and len(set(statements)) == 1
    assert held["packed_hours"] == [keep_hours(14)]
    assert held_before["packed_hours"] == [19 * 24]
    # And the findings, verdicts, coverage and rollups are the same day by day
    assert judged == before
    assert all(day["verdicts"] for day in judged) and any(day["findings"] for day in judged)
    assert held | {"packed_hours": None} == held_before | {"packed_hours": None}
