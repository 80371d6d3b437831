"""The incremental scan: the next day's scan reads each (resource, metric) from the hour its last read ended minus a
3-hour overlap, a resource never read over the whole window; coverage and profiles still span the whole window."""

from __future__ import annotations

import math
from datetime import UTC, datetime, timedelta

import boto3
from sqlalchemy import func, select

from chipwise.aws import aws_context
from chipwise.pipeline.scan import run_scan
from chipwise.store import get_session_factory
from chipwise.store.tables import MetricCoverage, MetricRollup, Resource, Scan
from chipwise_devkit.emulator import Emulator, MetricPoint

NOW = datetime(2026, 11, 20, 12, tzinfo=UTC)
NEXT_DAY = NOW + timedelta(days=1)
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
