"""The agent against the emulator through boto3 (AWS_ENDPOINT_URL): a recorded stream becomes the expected
CloudWatch data, or S3 objects that ingest to the same rollups as the file itself."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import boto3
from sqlalchemy import select

from chipwise import neuron_agent
from chipwise.aws import aws_context
from chipwise.pipeline.neuron_ingest import ingest_prefix, ingest_text
from chipwise.store import get_session_factory
from chipwise.store.tables import NeuronRollup
from chipwise_devkit.emulator import Emulator

DATA = Path(__file__).resolve().parents[2] / "unit" / "collect" / "data"
INSTANCE = "i-0aaaaaaaaaaaaaaa1"


def _series(metric: str, stat: str) -> list[tuple[datetime, float]]:
    result = boto3.client("cloudwatch").get_metric_data(
        MetricDataQueries=[
            {
                "Id": "q",
                "MetricStat": {
                    "Metric": {
                        "Namespace": "Chipwise/Neuron",
                        "MetricName": metric,
                        "Dimensions": [{"Name": "InstanceId", "Value": INSTANCE}],
                    },
                    "Period": 60,
                    "Stat": stat,
                },
            }
        ],
        StartTime=datetime(2026, 11, 20, 10, 58, tzinfo=UTC),
        EndTime=datetime(2026, 11, 20, 11, 2, tzinfo=UTC),
        ScanBy="TimestampAscending",
    )["MetricDataResults"][0]
    return [(t.astimezone(UTC), v) for t, v in zip(result["Timestamps"], result["Values"], strict=True)]


def test_a_recorded_stream_becomes_per_minute_cloudwatch_data(aws: Emulator) -> None:
    # Given the recorded inf2 stream
    # When the agent ships it to CloudWatch
    code = neuron_agent.main(
        ["--to", "cloudwatch", "--input", str(DATA / "inf2_xlarge.jsonl"), "--region", "us-east-1"]
    )
    # Then each minute holds the busiest-core statistics of its reports (idle minute included)
    assert code == 0
    minutes = [
        datetime(2026, 11, 20, 10, 58, tzinfo=UTC).replace(hour=h, minute=m)
        for h, m in ((10, 58), (10, 59), (11, 0), (11, 1))
    ]
    assert _series("NeuronCoreUtilization", "Average") == list(zip(minutes, [30.0, 35.0, 40.0, 0.0], strict=True))
    assert _series("NeuronCoreUtilization", "Maximum") == list(zip(minutes, [40.0, 60.0, 50.0, 0.0], strict=True))
    # (11:01 holds the idle report only: the one whose runtime could not be reached is missing, not 0 %)
    assert _series("NeuronCoreUtilization", "SampleCount") == list(zip(minutes, [2.0, 2.0, 2.0, 1.0], strict=True))
    assert _series("ExecutionsCompleted", "Sum") == list(zip(minutes, [81.0, 85.0, 89.0, 0.0], strict=True))
    assert next(v for _, v in _series("NeuronDeviceMemoryUsed", "Maximum")) == 2**30 + 2**30 // 4


def _rollups(url: str) -> list[tuple[Any, ...]]:
    with get_session_factory(url)() as session:
        rows = session.scalars(select(NeuronRollup).order_by(NeuronRollup.hour, NeuronRollup.runtime_tag))
        return [
            (r.instance_id, r.runtime_tag, r.hour, r.reports, r.neuroncore_utilization_avg, r.executions_completed)
            for r in rows
        ]


def test_s3_mode_ships_objects_that_ingest_like_the_file(aws: Emulator, sqlite_url: str, tmp_path: Path) -> None:
    # Given a bucket, and the rollups the recorded file gives when ingested directly
    boto3.client("s3").create_bucket(Bucket="chipwise-artifacts")
    direct = tmp_path / "direct.db"
    from chipwise.store import upgrade

    upgrade(f"sqlite:///{direct}")
    ingest_text(
        get_session_factory(f"sqlite:///{direct}"),
        (DATA / "inf2_xlarge.jsonl").read_text(),
        source="file",
        account_id="123456789012",
    )
    # When the agent ships the stream to S3 and the objects are ingested
    code = neuron_agent.main(
        [
            "--to",
            "s3",
            "--bucket",
            "chipwise-artifacts",
            "--account-id",
            "123456789012",
            "--region",
            "us-east-1",
            "--input",
            str(DATA / "inf2_xlarge.jsonl"),
        ]
    )
    assert code == 0
    keys = [o["Key"] for o in boto3.client("s3").list_objects_v2(Bucket="chipwise-artifacts")["Contents"]]
    results = ingest_prefix(aws_context("us-east-1"), get_session_factory(sqlite_url), "chipwise-artifacts")
    # Then one object per hour, named by account and instance, giving the same rollups
    assert len(keys) == 2 and all(k.startswith(f"neuron/123456789012/{INSTANCE}/2026-11-20/") for k in keys)
    assert all(r.accepted and r.account_id == "123456789012" for r in results)
    assert _rollups(sqlite_url) == _rollups(f"sqlite:///{direct}")
