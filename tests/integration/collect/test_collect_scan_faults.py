"""Faults: throttling is retried with backoff; a source that keeps failing makes a partial scan that says why;
nothing collected is lost; a missing event bus is an error of the scan, not a crash."""

from __future__ import annotations

import boto3
import pytest
from scan_account_fixture import LOOKBACK_DAYS, NOW, REGION, Seeded, seed_account
from sqlalchemy import func, select

from chipwise.aws import aws_context
from chipwise.emulator import Emulator
from chipwise.models.scan import ScanDocument
from chipwise.scan import run_scan
from chipwise.store import get_session_factory
from chipwise.store.tables import CostRecord, MetricRollup, Resource, Scan


@pytest.fixture
def seeded(aws: Emulator) -> Seeded:
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
    ):
        aws.inject_fault(service, operation, "UnauthorizedOperation", "denied")
    document = _scan(sqlite_url)
    assert document.status == "failed"
    assert len([e for e in document.errors if e.source.startswith("inventory.")]) == 4


def test_a_missing_event_bus_is_recorded(aws: Emulator, sqlite_url: str) -> None:
    # Given an account without the Chipwise bus
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
