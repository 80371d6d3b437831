"""The scan end to end on the emulator: an account of every platform gives the right inventory, costs (to the
cent) and rollups on SQLite and PostgreSQL; a second scan adds no rows; the document and the event are right."""

from __future__ import annotations

import json
from decimal import Decimal
from typing import Any

import boto3
import pytest
from scan_account_fixture import (
    ACCOUNT,
    LOOKBACK_DAYS,
    NOW,
    REGION,
    WINDOW_END,
    WINDOW_START,
    Seeded,
    seed_account,
    total_cost,
)
from sqlalchemy import func, select
from sqlalchemy.orm import Session, sessionmaker

from chipwise.aws import aws_context
from chipwise.collect import metrics
from chipwise.models.scan import ScanDocument
from chipwise.pipeline.scan import run_scan
from chipwise.settings import get_settings
from chipwise.store.tables import CostRecord, MetricCoverage, MetricRollup, NeuronRollup, Resource, Scan
from chipwise_devkit.emulator import Emulator

TABLES = (Resource, CostRecord, MetricRollup, MetricCoverage, NeuronRollup)


def _scan(session_factory: sessionmaker[Session]) -> ScanDocument:
    return run_scan(aws_context(REGION), session_factory, region=REGION, now=NOW, lookback_days=LOOKBACK_DAYS)


def _counts(session_factory: sessionmaker[Session]) -> dict[str, int]:
    with session_factory() as session:
        return {t.__tablename__: session.scalar(select(func.count()).select_from(t)) or 0 for t in TABLES}


def _rollups(session: Session, arn: str, namespace: str, metric: str) -> list[MetricRollup]:
    resource_id = session.scalar(select(Resource.id).where(Resource.arn == arn))
    stmt = select(MetricRollup).where(
        MetricRollup.resource_id == resource_id, MetricRollup.namespace == namespace, MetricRollup.metric == metric
    )
    return list(session.scalars(stmt.order_by(MetricRollup.hour)))


def _coverage(session: Session, arn: str) -> dict[tuple[str, str], tuple[bool, int]]:
    resource_id = session.scalar(select(Resource.id).where(Resource.arn == arn))
    rows = session.scalars(select(MetricCoverage).where(MetricCoverage.resource_id == resource_id))
    return {(c.namespace, c.metric): (c.exists, c.hours_with_data) for c in rows}


@pytest.fixture
def seeded(aws: Emulator, monkeypatch: pytest.MonkeyPatch) -> Seeded:
    # the Chipwise bus, configured as a deployment configures it
    monkeypatch.setenv("CHIPWISE_EVENT_BUS_NAME", "chipwise")
    get_settings.cache_clear()
    boto3.client("events", region_name=REGION).create_event_bus(Name="chipwise")
    return seed_account(aws)


def test_inventory_of_every_platform(seeded: Seeded, session_factory: sessionmaker[Session]) -> None:
    # Given an account with instances, endpoints, training jobs and a Batch environment of every platform
    # When it is scanned
    document = _scan(session_factory)
    # Then every accelerator resource is there with its type, count and platform (the CPU web server is not)
    found = {r.name: (r.kind, r.instance_type, r.instance_count, r.platform) for r in document.resources}
    assert found == {
        "inf2-box": ("ec2_instance", "inf2.xlarge", 1, "inferentia"),
        "gpu-box": ("ec2_instance", "g5.12xlarge", 1, "nvidia"),
        "eks-trn1-node": ("ec2_instance", "trn1.2xlarge", 1, "trainium"),
        # a type neither the catalog nor EC2 knows is kept as "other" (never guessed from its "inf" prefix)
        "future-box": ("ec2_instance", "inf9.xlarge", 1, "other"),
        "chat-inf2": ("sagemaker_endpoint", "ml.inf2.xlarge", 2, "inferentia"),
        "vision-g5": ("sagemaker_endpoint", "ml.g5.xlarge", 1, "nvidia"),
        "sls": ("sagemaker_endpoint", None, 0, "cpu"),
        "ft-p4d": ("sagemaker_training_job", "ml.p4d.24xlarge", 2, "nvidia"),
        "ft-trn1": ("sagemaker_training_job", "ml.trn1.32xlarge", 1, "trainium"),
        "neuron-ce": ("batch_compute_environment", "inf2.xlarge", 0, "inferentia"),
    }
    by_name = {r.name: r for r in document.resources}
    assert by_name["future-box"].unknown_instance_type is True
    assert by_name["chat-inf2"].id == seeded.arns["chat-inf2"]
    assert by_name["inf2-box"].id == seeded.arns["inf2-box"]
    chat = by_name["chat-inf2"].hints
    assert (chat["model_family"], chat["workload"], chat["serving_stack"], chat["neuron_image"]) == (
        "llama",
        "inference",
        "tgi",
        True,
    )
    assert chat["owner"] == "ml@example.com" and chat["hf_model_id"] == "meta-llama/Meta-Llama-3-8B-Instruct"
    assert by_name["inf2-box"].hints["model_family"] == "bert"
    assert by_name["ft-trn1"].hints["workload"] == "training"
    with session_factory() as session:
        node = session.scalar(select(Resource).where(Resource.arn == seeded.arns["eks-trn1-node"]))
        endpoint = session.scalar(select(Resource).where(Resource.arn == seeded.arns["chat-inf2"]))
        sls = session.scalar(select(Resource).where(Resource.arn == seeded.arns["sls"]))
        batch = session.scalar(select(Resource).where(Resource.arn == seeded.arns["neuron-ce"]))
    assert node is not None and node.details["eks_cluster"] == "prod" and node.details["catalog"]["neuron_cores"] == 2
    assert endpoint is not None and endpoint.details["variants"][0]["instance_count"] == 2
    assert endpoint.details["variants"][0]["environment"] == {"HF_MODEL_ID": "meta-llama/Meta-Llama-3-8B-Instruct"}
    assert sls is not None and sls.details["variants"][0]["serverless"] == {"MemorySizeInMB": 2048, "MaxConcurrency": 5}
    assert batch is not None and batch.details["job_queues"][0]["name"] == "neuron-queue"
    assert batch.details["instance_types"] == ["inf2.xlarge", "trn1.2xlarge"]


def test_costs_to_the_cent(seeded: Seeded, session_factory: sessionmaker[Session]) -> None:
    document = _scan(session_factory)
    cent = Decimal("0.01")
    assert document.costs.total_usd.quantize(cent) == total_cost().quantize(cent) == Decimal("3131.32")
    assert document.costs.by_instance_type == {
        "g5.12xlarge": Decimal("272.256000"),
        "inf2.xlarge": Decimal("36.393600"),
        "m5.large": Decimal("4.608000"),
        "ml.g5.xlarge": Decimal("67.718400"),
        "ml.inf2.xlarge": Decimal("95.040000"),
        "ml.p4d.24xlarge": Decimal("2634.917040"),
        "trn1.2xlarge": Decimal("19.350000"),
    }
    dumped = document.model_dump(mode="json")
    assert dumped["costs"]["total_usd"] == "3131.32" and dumped["costs"]["by_instance_type"]["inf2.xlarge"] == "36.39"
    assert (document.window.start.isoformat(), document.window.end.isoformat()) == ("2026-11-18", "2026-11-20")
    with session_factory() as session:
        spot = session.scalar(select(CostRecord).where(CostRecord.usage_type == "SpotUsage:trn1.2xlarge"))
    assert spot is not None and (spot.usage_kind, spot.instance_type, spot.region) == (
        "SpotUsage",
        "trn1.2xlarge",
        REGION,
    )


def test_rollups_and_coverage(seeded: Seeded, session_factory: sessionmaker[Session]) -> None:
    _scan(session_factory)
    with session_factory() as session:
        invocations = _rollups(session, seeded.arns["chat-inf2"], "AWS/SageMaker", "Invocations")
        cpu = _rollups(session, seeded.arns["chat-inf2"], "/aws/sagemaker/Endpoints", "CPUUtilization")
        gpu = _rollups(session, seeded.arns["gpu-box"], "CWAgent", "nvidia_smi_utilization_gpu")
        eks = _rollups(session, seeded.arns["eks-trn1-node"], "ContainerInsights", "node_neuroncore_utilization")
        training = _rollups(session, seeded.arns["ft-p4d"], "/aws/sagemaker/TrainingJobs", "GPUUtilization")
        chat_coverage = _coverage(session, seeded.arns["chat-inf2"])
        vision_coverage = _coverage(session, seeded.arns["vision-g5"])
        sls_coverage = _coverage(session, seeded.arns["sls"])
        box_coverage = _coverage(session, seeded.arns["inf2-box"])
        gpu_coverage = _coverage(session, seeded.arns["gpu-box"])
    # Invocations: the hour's total in `sum`, hourly, the first day only
    assert len(invocations) == 24 and {r.sum for r in invocations} == {100.0}
    assert invocations[0].hour == WINDOW_START
    # Gauges: average, maximum and sample count of the hour
    assert len(cpu) == 48 and {(r.average, r.maximum, r.sample_count) for r in cpu} == {(20.0, 30.0, 2.0)}
    assert cpu[-1].hour < WINDOW_END
    # The busiest GPU, Container Insights by node, training hosts averaged
    assert {(r.average, r.maximum) for r in gpu} == {(80.0, 80.0)}
    assert {r.average for r in eks} == {64.0}
    assert {(r.average, r.maximum) for r in training} == {(300.0, 400.0)}
    # No datapoints in some hours vs no metric at all
    assert chat_coverage[("AWS/SageMaker", "Invocations")] == (True, 24)
    assert chat_coverage[("Chipwise/Neuron", "NeuronCoreUtilization")] == (True, 48)
    assert chat_coverage[("Chipwise/Neuron", "ExecutionsCompleted")] == (False, 0)
    assert vision_coverage[("AWS/SageMaker", "Invocations")] == (True, 0)  # SageMaker omits zero hours
    assert vision_coverage[("/aws/sagemaker/Endpoints", "GPUUtilization")] == (False, 0)  # telemetry missing
    assert set(sls_coverage) == {
        ("AWS/SageMaker", m) for m in ("Invocations", "InvocationsPerInstance", "ModelLatency")
    } | {("Chipwise/Serving", "GeneratedTokens")}
    assert sls_coverage[("Chipwise/Serving", "GeneratedTokens")] == (False, 0)  # no tokens published: unknown
    assert box_coverage[("AWS/EC2", "CPUUtilization")] == (True, 48)
    assert box_coverage[("neuron-monitor", "neuroncore_utilization")] == (False, 0)
    assert gpu_coverage[("CWAgent", "nvidia_smi_utilization_gpu")] == (True, 48)
    assert gpu_coverage[("CWAgent", "nvidia_smi_utilization_memory")] == (False, 0)


def test_api_calls_are_at_the_floor(seeded: Seeded, session_factory: sessionmaker[Session]) -> None:
    document = _scan(session_factory)
    calls = document.api_calls
    # One query shape (two pages), GetMetricData packed, no per-resource statistics calls
    assert calls["ce.GetCostAndUsage"] == 2
    assert "cloudwatch.GetMetricStatistics" not in calls
    # one listing for GPU series, one for EKS node series, one per optional agent's namespace (Chipwise/Neuron and
    # Chipwise/Serving: a read starting within ListMetrics' two weeks queries only the series it lists)
    assert calls["cloudwatch.ListMetrics"] == 2 + 2
    with session_factory() as session:
        scan = session.get(Scan, document.scan_id)
        assert scan is not None
        queries = scan.timings["counts"]["metric_queries"]
    assert calls["cloudwatch.GetMetricData"] == metrics.expected_calls(queries, LOOKBACK_DAYS * 24) == 1


def test_a_second_scan_adds_no_rows(seeded: Seeded, session_factory: sessionmaker[Session]) -> None:
    # Given a first scan
    first = _scan(session_factory)
    before = _counts(session_factory)
    # When the same scan runs again
    second = _scan(session_factory)
    # Then nothing is duplicated, and both scans are recorded
    assert _counts(session_factory) == before
    assert before["resources"] == 10 and before["cost_records"] == 18
    assert second.costs == first.costs
    assert [r.id for r in second.resources] == [r.id for r in first.resources]
    with session_factory() as session:
        assert session.scalar(select(func.count()).select_from(Scan)) == 2


def test_the_document_is_stored_and_announced(seeded: Seeded, session_factory: sessionmaker[Session]) -> None:
    # Given a queue listening to ScanCompleted on the Chipwise bus
    sqs, events = boto3.client("sqs", region_name=REGION), boto3.client("events", region_name=REGION)
    queue = sqs.create_queue(QueueName="scan-completed")["QueueUrl"]
    queue_arn = sqs.get_queue_attributes(QueueUrl=queue, AttributeNames=["QueueArn"])["Attributes"]["QueueArn"]
    events.put_rule(
        Name="completed", EventBusName="chipwise", EventPattern=json.dumps({"detail-type": ["ScanCompleted"]})
    )
    events.put_targets(Rule="completed", EventBusName="chipwise", Targets=[{"Id": "q", "Arn": queue_arn}])
    # When the account is scanned
    document = _scan(session_factory)
    # Then the scan row holds the document, and the event names the scan
    assert document.status == "succeeded", document.errors
    with session_factory() as session:
        scan = session.get(Scan, document.scan_id)
        assert scan is not None
        assert (scan.status, scan.resource_count, scan.account_id) == ("succeeded", 10, ACCOUNT)
        assert scan.document == json.loads(document.model_dump_json()) == document.model_dump(mode="json")
        assert scan.api_calls == document.api_calls and set(scan.timings) >= {"inventory", "costs", "metrics"}
    [message] = sqs.receive_message(QueueUrl=queue, WaitTimeSeconds=1)["Messages"]
    event: dict[str, Any] = json.loads(message["Body"])
    assert (event["source"], event["detail-type"]) == ("chipwise", "ScanCompleted")
    assert event["detail"]["scan_id"] == document.scan_id and event["detail"]["status"] == "succeeded"
    keys = set(json.loads(document.model_dump_json()))
    assert keys >= {
        "scan_id",
        "account_id",
        "region",
        "started_at",
        "finished_at",
        "window",
        "resources",
        "costs",
        "api_calls",
        "findings",
        "errors",
    }
