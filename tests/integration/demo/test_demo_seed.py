"""The demo account as seeded into the emulator: inventory, metrics, reports and costs agree."""

from __future__ import annotations

import gzip
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from typing import Any

import boto3
import pytest

from chipwise.aws import base_session
from chipwise_devkit.demo.account import demo_resources
from chipwise_devkit.demo.seed import SeededAccount, seed_demo_account

NOW = datetime(2026, 11, 20, 6, tzinfo=UTC)


@pytest.fixture(scope="module")
def seeded(emulator: Any) -> Iterator[SeededAccount]:
    """Seeded once for the module: these tests only read."""
    emulator.reset()
    with pytest.MonkeyPatch.context() as mp:
        for key, value in emulator.env().items():
            mp.setenv(key, value)
        base_session.cache_clear()
        yield seed_demo_account(emulator, now=NOW)
    base_session.cache_clear()


def test_inventory_is_in_the_emulator(seeded: SeededAccount) -> None:
    # Given the seeded demo account
    # Then every resource exists where a scan will look for it
    ec2 = boto3.client("ec2")
    instances = [i for r in ec2.describe_instances()["Reservations"] for i in r["Instances"]]
    names = {t["Value"] for i in instances for t in i.get("Tags", []) if t["Key"] == "Name"}
    sm = boto3.client("sagemaker")
    endpoints = {e["EndpointName"] for e in sm.list_endpoints(MaxResults=100)["Endpoints"]}
    jobs = {j["TrainingJobName"] for j in sm.list_training_jobs(MaxResults=100)["TrainingJobSummaries"]}
    envs = {
        c["computeEnvironmentName"]
        for c in boto3.client("batch").describe_compute_environments()["computeEnvironments"]
    }
    by_kind: dict[str, set[str]] = {}
    for res in demo_resources():
        by_kind.setdefault(res.kind, set()).add(res.name)
    assert names == by_kind["ec2_instance"]
    assert endpoints == by_kind["sagemaker_endpoint"]
    assert jobs == by_kind["sagemaker_training_job"]
    assert envs == by_kind["batch_compute_environment"]
    assert len(seeded.arns) == len(demo_resources()) >= 30
    config = sm.describe_endpoint_config(EndpointConfigName="summarizer-inf2-48xl-config")
    assert config["ProductionVariants"][0]["InstanceType"] == "ml.inf2.48xlarge"


def test_cost_explorer_pages_add_up_to_the_inventory(seeded: SeededAccount) -> None:
    ce = boto3.client("ce", region_name="us-east-1")
    request: dict[str, Any] = {
        "TimePeriod": {"Start": "2026-11-06", "End": "2026-11-20"},
        "Granularity": "DAILY",
        "Metrics": ["UnblendedCost", "AmortizedCost", "UsageQuantity"],
    }
    total, pages = Decimal(0), 0
    while True:
        page = ce.get_cost_and_usage(**request)
        pages += 1
        for day in page["ResultsByTime"]:
            total += sum(Decimal(g["Metrics"]["UnblendedCost"]["Amount"]) for g in day["Groups"])
        if "NextPageToken" not in page:
            break
        request["NextPageToken"] = page["NextPageToken"]
    assert pages == 2
    assert total == seeded.total_cost
    # 14 days of 2 ml.inf2.xlarge + 1 + 1 endpoints, and one retired 108 h before now: billed from 6 November to
    # its deletion; priced from the catalog
    from chipwise.catalog import get_catalog

    price = get_catalog().price("ml.inf2.xlarge")
    assert price is not None
    retired_hours = (seeded.now - timedelta(hours=108) - datetime(2026, 11, 6, tzinfo=UTC)) // timedelta(hours=1)
    assert seeded.cost_by_usage_type["USE1-Host:ml.inf2.xlarge"] == price * (4 * 24 * 14 + retired_hours)


def test_neuron_reports_are_gzipped_json_lines_with_one_cut_line(seeded: SeededAccount) -> None:
    s3 = boto3.client("s3")
    keys = [o["Key"] for o in s3.list_objects_v2(Bucket="chipwise-artifacts", Prefix="neuron/")["Contents"]]
    assert len(keys) == seeded.neuron_objects
    embedder = seeded.instance_ids["inf2-batch-embedder"]
    first = sorted(k for k in keys if embedder in k)[0]
    lines = gzip.decompress(s3.get_object(Bucket="chipwise-artifacts", Key=first)["Body"].read()).splitlines()
    assert lines[3].startswith(b'{"neuron_runtime_data": [{"pid": 4121') and not lines[3].endswith(b"}")


def test_metrics_cover_the_window_with_sagemaker_zero_hours_omitted(seeded: SeededAccount) -> None:
    cw = boto3.client("cloudwatch")
    start = datetime(2026, 11, 6, 6, tzinfo=UTC)

    def hours(metric: str, endpoint: str, namespace: str = "AWS/SageMaker") -> int:
        result = cw.get_metric_data(
            MetricDataQueries=[
                {
                    "Id": "m",
                    "MetricStat": {
                        "Metric": {
                            "Namespace": namespace,
                            "MetricName": metric,
                            "Dimensions": [
                                {"Name": "EndpointName", "Value": endpoint},
                                {"Name": "VariantName", "Value": "AllTraffic"},
                            ],
                        },
                        "Period": 3600,
                        "Stat": "Sum",
                    },
                }
            ],
            StartTime=start,
            EndTime=NOW,
        )
        return len(result["MetricDataResults"][0]["Values"])

    assert hours("Invocations", "chat-llama3-8b-inf2") == 14 * 24
    assert hours("Invocations", "search-rerank-inf2-idle") == 0  # idle: SageMaker publishes nothing
    assert hours("NeuronCoreUtilization", "search-rerank-inf2-idle", "Chipwise/Neuron") == 14 * 24
    assert hours("NeuronCoreUtilization", "classifier-inf2-no-telemetry", "Chipwise/Neuron") == 0
    spiky = hours("Invocations", "support-bot-llama-g5-spiky")
    assert 2 * 13 <= spiky <= 2 * 15
