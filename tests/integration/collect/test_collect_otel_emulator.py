"""Issue 34, item 6, on the emulator: an EKS GPU node that classic Container Insights has no series for is looked
up in the OTel metrics (CloudWatch's PromQL QueryMetrics API). The emulator, like a region without that API, answers
404: the scan says the API is unavailable and goes on -- no error, no rows, no "no telemetry" verdict invented."""

from __future__ import annotations

from datetime import UTC, datetime

import boto3
from sqlalchemy import select
from sqlalchemy.orm import Session, sessionmaker

from chipwise.aws import aws_context
from chipwise.pipeline.scan import run_scan
from chipwise.store.tables import MetricCoverage, Scan
from chipwise_devkit.emulator import Emulator

REGION = "us-east-1"
NOW = datetime(2026, 11, 20, 12, 17, tzinfo=UTC)


def test_an_otel_only_eks_gpu_node_is_asked_about_and_an_absent_api_is_not_an_error(
    aws: Emulator, session_factory: sessionmaker[Session]
) -> None:
    # Given an EKS GPU node (g6.xlarge, tagged with its cluster) with no classic Container Insights series
    ec2 = boto3.client("ec2", region_name=REGION)
    ec2.run_instances(
        ImageId="ami-12345678",
        InstanceType="g6.xlarge",
        MinCount=1,
        MaxCount=1,
        TagSpecifications=[
            {"ResourceType": "instance", "Tags": [{"Key": "eks:cluster-name", "Value": "inference-prod"}]}
        ],
    )
    # When the account is scanned
    context = aws_context(REGION)
    document = run_scan(context, session_factory, region=REGION, now=NOW, lookback_days=2)
    # Then QueryMetrics was asked once, answered 404, and the scan has no error for it
    assert context.counter.snapshot().get("cloudwatch.QueryMetrics") == 1
    assert [e.source for e in document.errors if e.source.startswith("metrics")] == []
    with session_factory() as session:
        timings = session.scalars(select(Scan.timings)).one()
        otel = {c.metric for c in session.scalars(select(MetricCoverage)) if c.namespace == "ContainerInsights/OTel"}
    assert timings["counts"]["otel_metrics"] == {"nodes": 1, "queries": 1, "unavailable": "HTTP 404"}
    assert otel == set()  # nothing read: no coverage claimed either way
