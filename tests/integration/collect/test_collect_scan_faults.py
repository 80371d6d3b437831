"""Faults: throttling is retried with backoff; a source that keeps failing makes a partial scan that says why;
nothing collected is lost; a missing event bus is an error of the scan, not a crash."""

from __future__ import annotations

import boto3
import pytest
from scan_account_fixture import LOOKBACK_DAYS, NOW, REGION, Seeded, seed_account
from sqlalchemy import func, select

from chipwise.aws import aws_context
from chipwise.models.scan import ScanDocument
from chipwise.pipeline.scan import run_scan
from chipwise.settings import get_settings
from chipwise.store import get_session_factory
from chipwise.store.tables import CostRecord, MetricRollup, Resource, Scan
from chipwise_devkit.emulator import Emulator


@pytest.fixture
def seeded(aws: Emulator, monkeypatch: pytest.MonkeyPatch) -> Seeded:
    # the Chipwise bus, configured as a deployment configures it
    monkeypatch.setenv("CHIPWISE_EVENT_BUS_NAME", "chipwise")
    get_settings.cache_clear()
    boto3.client("events", region_name=REGION).create_event_bus(Name="chipwise")
    return seed_account(aws)


def _scan(url: str) -> ScanDocument:
    return run_scan(aws_context(REGION), get_session_factory(url), region=REGION, now=NOW, lookback_days=LOOKBACK_DAYS)


def _count(url: str, table: type) -> int:
    with get_session_factory(url)() as session:
        return session.scalar(select(func.count()).select_from(table)) or 0


def _errors(document: ScanDocument) -> dict[str, str | None]:
    return {e.source: e.code for e in document.errors if e.source != "rules"}


def test_throttling_is_retried(aws: Emulator, seeded: Seeded, sqlite_url: str) -> None:
    # Given CloudWatch and Cost Explorer that throttle the first calls
    aws.inject_fault("cloudwatch", "GetMetricData", "Throttling", "Rate exceeded", times=2)
    aws.inject_fault("ce", "GetCostAndUsage", "LimitExceededException", "too many calls", times=1)
    # When the account is scanned
    document = _scan(sqlite_url)
    # Then the retries succeeded: no error, every cost and rollup stored, the retries counted as calls
    assert _errors(document) == {}
    assert aws.fault_hits() == {"ce.GetCostAndUsage": 1, "cloudwatch.GetMetricData": 2}
    assert document.api_calls["cloudwatch.GetMetricData"] == 1 + 2
    assert document.api_calls["ce.GetCostAndUsage"] == 2 + 1
    assert _count(sqlite_url, CostRecord) == 18 and _count(sqlite_url, MetricRollup) > 0


def test_a_failing_source_makes_a_partial_scan_that_keeps_the_rest(
    aws: Emulator, seeded: Seeded, sqlite_url: str
) -> None:
    # Given a first complete scan, then Cost Explorer and the endpoint listing refusing
    _scan(sqlite_url)
    aws.inject_fault("ce", "GetCostAndUsage", "AccessDeniedException", "not authorized: ce:GetCostAndUsage")
    aws.inject_fault("sagemaker", "ListEndpoints", "AccessDeniedException", "not authorized")
    # When scanned again
    document = _scan(sqlite_url)
    # Then the scan is partial, says which sources failed and why, and keeps everything else
    assert document.status == "partial"
    assert _errors(document) == {
        "costs": "AccessDeniedException",
        "inventory.sagemaker_endpoints": "AccessDeniedException",
    }
    assert "not authorized" in next(e.message for e in document.errors if e.source == "costs")
    kinds = {r.kind for r in document.resources}
    assert "sagemaker_endpoint" not in kinds and {"ec2_instance", "sagemaker_training_job"} <= kinds
    assert _count(sqlite_url, CostRecord) == 18  # what the first scan stored is still there
    with get_session_factory(sqlite_url)() as session:
        endpoints = session.scalars(select(Resource).where(Resource.kind == "sagemaker_endpoint")).all()
        assert len(endpoints) == 3 and {e.state for e in endpoints} == {"InService"}  # not "gone": unknown
        scan = session.get(Scan, document.scan_id)
        assert scan is not None and scan.status == "partial"
        assert {e["source"] for e in scan.errors} >= {"costs", "inventory.sagemaker_endpoints"}


def test_no_inventory_at_all_is_a_failed_scan(aws: Emulator, sqlite_url: str) -> None:
    for service, operation in (
        ("ec2", "DescribeInstances"),
        ("sagemaker", "ListEndpoints"),
        ("sagemaker", "ListTrainingJobs"),
        ("batch", "DescribeJobQueues"),
        ("sagemaker", "ListNotebookInstances"),
        ("sagemaker", "ListClusters"),
        ("ec2", "DescribeCapacityReservations"),
        ("bedrock", "ListProvisionedModelThroughputs"),
        ("sagemaker", "ListApps"),
    ):
        aws.inject_fault(service, operation, "UnauthorizedOperation", "denied")
    document = _scan(sqlite_url)
    assert document.status == "failed"
    assert len([e for e in document.errors if e.source.startswith("inventory.")]) == 9


def test_a_missing_event_bus_is_recorded(aws: Emulator, sqlite_url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    # Given a configured Chipwise bus that does not exist
    monkeypatch.setenv("CHIPWISE_EVENT_BUS_NAME", "chipwise")
    get_settings.cache_clear()
    seed_account(aws)
    # When scanned
    document = _scan(sqlite_url)
    # Then the scan completes, partial, with the bus error stored on its row
    assert _errors(document) == {"events.chipwise": "ResourceNotFoundException"}
    assert document.status == "partial"
    with get_session_factory(sqlite_url)() as session:
        scan = session.get(Scan, document.scan_id)
        assert scan is not None and scan.status == "partial"
        assert scan.document is not None and scan.document["errors"][-1]["source"] == "events.chipwise"


def test_a_deleted_model_blinds_only_its_own_endpoint(aws: Emulator, seeded: Seeded, sqlite_url: str) -> None:
    # Given a first complete scan, then one endpoint's model deleted while the endpoint keeps serving (SageMaker
    # allows it; DescribeModel then answers "Could not find model")
    first = _scan(sqlite_url)
    endpoints = sorted(r.name for r in first.resources if r.kind == "sagemaker_endpoint")
    assert len(endpoints) == 3
    boto3.client("sagemaker", region_name=REGION).delete_model(ModelName=f"{endpoints[0]}-model")
    # When scanned again
    document = _scan(sqlite_url)
    # Then the scan is partial with one per-resource error, every endpoint is still inventoried (the one whose
    # model is gone with what is known), and nothing is marked gone
    assert document.status == "partial"
    errors = [e for e in document.errors if e.source != "rules"]
    assert [e.source for e in errors] == [f"inventory.sagemaker_endpoints:{endpoints[0]}"]
    assert "recorded with what is known" in errors[0].message
    assert sorted(r.name for r in document.resources if r.kind == "sagemaker_endpoint") == endpoints
    with get_session_factory(sqlite_url)() as session:
        states = {
            e.name: e.state for e in session.scalars(select(Resource).where(Resource.kind == "sagemaker_endpoint"))
        }
        assert states == dict.fromkeys(endpoints, "InService")


def test_an_endpoint_gone_between_list_and_describe_is_skipped_alone(
    aws: Emulator, seeded: Seeded, sqlite_url: str
) -> None:
    # Given DescribeEndpoint answering "Could not find endpoint" once (deleted after the listing)
    aws.inject_fault("sagemaker", "DescribeEndpoint", "ValidationException", 'Could not find endpoint "x".')
    # When scanned
    document = _scan(sqlite_url)
    # Then that one is skipped, the other endpoints are inventoried and the source is not failed
    assert _errors(document) == {}
    assert len([r for r in document.resources if r.kind == "sagemaker_endpoint"]) == 2


def test_an_endpoint_that_cannot_be_described_is_not_marked_gone(
    aws: Emulator, seeded: Seeded, sqlite_url: str
) -> None:
    # Given a first scan, then DescribeEndpoint denied once (after boto3's retries, a real error)
    _scan(sqlite_url)
    aws.inject_fault("sagemaker", "DescribeEndpoint", "AccessDeniedException", "not authorized", times=1)
    # When scanned again
    document = _scan(sqlite_url)
    # Then one per-resource error, the source completed, and the undescribed endpoint keeps its state
    (error,) = [e for e in document.errors if e.source.startswith("inventory.sagemaker_endpoints:")]
    assert error.code == "AccessDeniedException" and "not described this scan" in error.message
    with get_session_factory(sqlite_url)() as session:
        endpoints = session.scalars(select(Resource).where(Resource.kind == "sagemaker_endpoint")).all()
        assert len(endpoints) == 3 and {e.state for e in endpoints} == {"InService"}


def test_a_scan_left_running_is_marked_abandoned_by_the_next(aws: Emulator, seeded: Seeded, sqlite_url: str) -> None:
    # Given scans of this account killed two hours ago (still "running"), in this region and in another
    from datetime import timedelta

    first = _scan(sqlite_url)
    with get_session_factory(sqlite_url).begin() as session:
        for scan_id, region in (("killed", REGION), ("other", "eu-west-1")):
            session.add(
                Scan(
                    id=scan_id,
                    account_id=first.account_id,
                    region=region,
                    status="running",
                    started_at=NOW - timedelta(hours=2),
                    window_start=NOW.date(),
                    window_end=NOW.date(),
                )
            )
    # When the account is scanned again in this region
    _scan(sqlite_url)
    # Then the killed scan is abandoned (with when it was noticed); another region's is not this scan's business
    with get_session_factory(sqlite_url)() as session:
        killed, other = session.get(Scan, "killed"), session.get(Scan, "other")
        assert killed is not None and killed.status == "abandoned" and killed.finished_at is not None
        assert other is not None and other.status == "running"


# --- the identity call at the start of a scan -------------------------------------------------------------------


def test_a_denied_identity_call_ends_the_scan_failed_with_the_reason(aws: Emulator, sqlite_url: str) -> None:
    # Given an STS that denies GetCallerIdentity (the account to scan is not named)
    aws.inject_fault("sts", "GetCallerIdentity", "AccessDenied", "not authorized: sts:GetCallerIdentity")
    # When the scan starts
    document = _scan(sqlite_url)
    # Then it ends failed, saying which call failed and why, with nothing collected (no account to write under)
    assert document.status == "failed"
    assert [(e.source, e.code) for e in document.errors] == [("sts.GetCallerIdentity", "AccessDenied")]
    assert "not authorized" in document.errors[0].message
    assert document.resources == [] and document.costs.total_usd == 0
    assert _count(sqlite_url, Scan) == 0 and _count(sqlite_url, Resource) == 0


def test_a_throttled_identity_call_is_retried_then_fails_the_scan(
    aws: Emulator, sqlite_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Given two attempts per call and an STS that throttles the identity call three times
    monkeypatch.setenv("AWS_MAX_ATTEMPTS", "2")
    aws.inject_fault("sts", "GetCallerIdentity", "Throttling", "Rate exceeded", times=3)
    # When scanned twice
    first = _scan(sqlite_url)
    second = _scan(sqlite_url)
    # Then the first fails on the throttling (both attempts spent) and the second retries past the last fault
    assert first.status == "failed" and [(e.source, e.code) for e in first.errors] == [
        ("sts.GetCallerIdentity", "Throttling")
    ]
    assert second.status != "failed" and second.account_id == "123456789012"
    assert aws.fault_hits() == {"sts.GetCallerIdentity": 3}


def test_the_cli_records_a_failed_identity_call_under_the_named_account(
    aws: Emulator, use_db: str, capsys: pytest.CaptureFixture[str]
) -> None:
    from chipwise.cli import main

    # Given an STS that denies GetCallerIdentity and an account named on the command line
    aws.inject_fault("sts", "GetCallerIdentity", "AccessDenied", "not authorized", times=10)
    # When `chipwise scan --account` runs
    code = main(["scan", "--account", "123456789012", "--region", "us-east-1", "--json"])
    # Then it exits with an error naming the call, and the failed scan is stored with its reason
    assert code != 0
    assert "sts.GetCallerIdentity" in capsys.readouterr().err
    with get_session_factory(use_db)() as session:
        (scan,) = session.scalars(select(Scan)).all()
        assert scan.status == "failed" and scan.account_id == "123456789012"
        assert scan.errors[0]["source"] == "sts.GetCallerIdentity" and scan.errors[0]["code"] == "AccessDenied"
        assert scan.document is not None and scan.document["status"] == "failed"


def test_a_refused_describe_instance_types_is_recorded_and_the_inventory_goes_on(
    aws: Emulator, seeded: Seeded, sqlite_url: str
) -> None:
    # Given DescribeInstanceTypes denied (the account has "future-box", an inf9.xlarge the catalog lacks, so the
    # EC2 collector asks EC2 for its facts)
    aws.inject_fault(
        "ec2", "DescribeInstanceTypes", "UnauthorizedOperation", "not authorized: ec2:DescribeInstanceTypes"
    )
    # When scanned
    document = _scan(sqlite_url)
    # Then the refusal is a scan error naming the source, the code and the type asked, and the scan is partial
    assert aws.fault_hits() == {"ec2.DescribeInstanceTypes": 1}
    assert _errors(document) == {"inventory.ec2:describe_instance_types": "UnauthorizedOperation"}
    (error,) = [e for e in document.errors if e.source == "inventory.ec2:describe_instance_types"]
    assert "inf9.xlarge" in error.message and "fall back" in error.message
    assert document.status == "partial"
    # And the inventory went on: every instance is there, the unknown type kept as "other" as before
    found = {r.name: (r.instance_type, r.platform) for r in document.resources if r.kind == "ec2_instance"}
    assert found == {
        "inf2-box": ("inf2.xlarge", "inferentia"),
        "gpu-box": ("g5.12xlarge", "nvidia"),
        "eks-trn1-node": ("trn1.2xlarge", "trainium"),
        "future-box": ("inf9.xlarge", "other"),
    }


def test_an_unknown_type_answered_invalid_is_not_an_error(aws: Emulator, seeded: Seeded, sqlite_url: str) -> None:
    # Given EC2 answering InvalidInstanceType for the type it does not know (as it does for a typo): not a refusal
    aws.inject_fault(
        "ec2",
        "DescribeInstanceTypes",
        "InvalidInstanceType",
        "The following supplied instance types do not exist: [inf9.xlarge]",
    )
    document = _scan(sqlite_url)
    assert _errors(document) == {}
    assert document.status == "succeeded"
