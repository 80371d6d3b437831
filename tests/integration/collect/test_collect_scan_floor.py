"""The API-call floor: GetMetricData = ceil(R x M / per call), per call bounded by 500 queries and 100,800
datapoints; Cost Explorer = the pages of one query shape; never a per-resource GetMetricStatistics."""

from __future__ import annotations

import math
from datetime import UTC, datetime, timedelta
from typing import Any

import boto3
from sqlalchemy import func, select

from chipwise.aws import aws_context
from chipwise.pipeline.scan import run_scan
from chipwise.store import get_session_factory
from chipwise.store.tables import MetricRollup, Scan
from chipwise_devkit.emulator import Emulator, MetricPoint

NOW = datetime(2026, 11, 20, 12, tzinfo=UTC)
QUERIES_PER_NEURON_INSTANCE = 9  # CPU (3 stats) + NeuronCoreUtilization (3) + Avg, memory, executions (1 each)
CPU_QUERIES = 3  # Average, Maximum, SampleCount
NEURON_SERIES = (
    ("AWS/EC2", "CPUUtilization"),
    ("Chipwise/Neuron", "NeuronCoreUtilization"),
    ("Chipwise/Neuron", "NeuronCoreUtilizationAvg"),
    ("Chipwise/Neuron", "NeuronDeviceMemoryUsed"),
    ("Chipwise/Neuron", "ExecutionsCompleted"),
)


def _instances(count: int) -> list[str]:
    reservation = boto3.client("ec2").run_instances(
        ImageId="ami-12345678", InstanceType="inf2.xlarge", MinCount=count, MaxCount=count
    )
    return [i["InstanceId"] for i in reservation["Instances"]]


def _cost_pages(pages: int) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for n in range(pages):
        day = (NOW - timedelta(days=pages - n)).date()
        group = {
            "Keys": ["Amazon Elastic Compute Cloud - Compute", "BoxUsage:inf2.xlarge"],
            "Metrics": {m: {"Amount": "18.1968", "Unit": "USD"} for m in ("UnblendedCost", "AmortizedCost")}
            | {"UsageQuantity": {"Amount": "24", "Unit": "Hrs"}},
        }
        page: dict[str, Any] = {
            "ResultsByTime": [
                {"TimePeriod": {"Start": str(day), "End": str(day + timedelta(days=1))}, "Groups": [group]}
            ]
        }
        if n < pages - 1:
            page["NextPageToken"] = f"page-{n + 2}"
        out.append(page)
    return out


def test_1200_resources_cost_8_get_metric_data_calls_and_one_listing(aws: Emulator, sqlite_url: str) -> None:
    # Given 1,200 Inferentia instances with a day of CPU metrics and no Neuron agent, and three pages of Cost
    # Explorer results
    ids = _instances(1_200)
    hours = [NOW - timedelta(hours=h) for h in range(1, 25)]
    aws.seed_metrics(
        MetricPoint("AWS/EC2", "CPUUtilization", {"InstanceId": iid}, at, 5.0, "Percent") for iid in ids for at in hours
    )
    aws.inject_cost_and_usage(_cost_pages(3))
    # When the account is scanned over one day
    document = run_scan(
        aws_context("us-east-1"), get_session_factory(sqlite_url), region="us-east-1", now=NOW, lookback_days=1
    )
    # Then the Neuron agent's namespace is listed once (a day lies within ListMetrics' two weeks) and lists
    # nothing, so only CPU is queried: GetMetricData ceil(R x 3 / 500) times, not ceil(R x 9 / 500) = 22;
    # Cost Explorer once per page, and nothing per resource
    calls = document.api_calls
    assert len(document.resources) == 1_200
    assert calls["cloudwatch.ListMetrics"] == 1
    assert calls["cloudwatch.GetMetricData"] == math.ceil(1_200 * CPU_QUERIES / 500) == 8
    assert calls["ce.GetCostAndUsage"] == 3
    assert not {name for name in calls if name.endswith("GetMetricStatistics")}
    with get_session_factory(sqlite_url)() as session:
        assert session.scalar(select(func.count()).select_from(MetricRollup)) == 1_200 * 24
        scan = session.get(Scan, document.scan_id)
        assert scan is not None and scan.api_calls == calls


def test_a_full_14_day_window_packs_by_datapoints_and_never_pages(aws: Emulator, sqlite_url: str) -> None:
    # Given 34 instances with every hour of 14 days of every metric (306 queries, 336 points each)
    ids = _instances(34)
    hours = [NOW - timedelta(hours=h) for h in range(1, 14 * 24 + 1)]
    aws.seed_metrics(
        MetricPoint(namespace, metric, {"InstanceId": iid}, at, 40.0)
        for iid in ids
        for namespace, metric in NEURON_SERIES
        for at in hours
    )
    # When scanned
    document = run_scan(
        aws_context("us-east-1"), get_session_factory(sqlite_url), region="us-east-1", now=NOW, lookback_days=14
    )
    # Then 300 queries fit one call's 100,800 datapoints: 2 calls, no NextToken pages, every datapoint read
    queries = 34 * QUERIES_PER_NEURON_INSTANCE
    assert document.api_calls["cloudwatch.GetMetricData"] == math.ceil(queries / (100_800 // 336)) == 2
    with get_session_factory(sqlite_url)() as session:
        scan = session.get(Scan, document.scan_id)
        assert scan is not None and scan.timings["counts"]["datapoints"] == queries * 336
        assert session.scalar(select(func.count()).select_from(MetricRollup)) == 34 * 5 * 336
