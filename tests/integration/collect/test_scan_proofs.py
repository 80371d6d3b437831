"""Proofs for issue 26 item 7: a scan killed at any stage and re-run leaves the store as a clean run would; two
scans of one account at once leave no duplicates; a fault on any AWS operation a scan calls (the inference-component,
Batch and EventBridge ones included) ends the scan ``partial`` with the reason. SQLite always, PostgreSQL too."""

from __future__ import annotations

import shutil
import threading
from collections.abc import Iterator
from decimal import Decimal
from pathlib import Path
from typing import Any

import boto3
import pytest
from scan_account_fixture import LOOKBACK_DAYS, NOW, REGION, ROLE, seed_account
from sqlalchemy import select

from chipwise import neuron_agent
from chipwise.aws import aws_context, base_session
from chipwise.models.scan import ScanDocument
from chipwise.pipeline.scan import run_scan
from chipwise.settings import get_settings
from chipwise.store import get_session_factory
from chipwise.store.session import get_engine
from chipwise.store.tables import CostRecord, Finding, MetricCoverage, MetricRollup, Resource, Scan
from chipwise_devkit.emulator import Emulator

STAGES = ["inventory", "costs", "metrics", "neuron", "rules", "event"]
LMI = "763104351884.dkr.ecr.us-east-1.amazonaws.com/djl-inference:0.31.0-lmi13.0.0-cu124"


class Killed(BaseException):
    """The process dying at a stage (a BaseException: nothing in the scan catches it, as nothing survives a kill)."""


def _seed(aws: Emulator) -> None:
    """The scan fixture's account, the Chipwise bus, and an endpoint hosting an inference component."""
    boto3.client("events", region_name=REGION).create_event_bus(Name="chipwise")
    seed_account(aws)
    sm = boto3.client("sagemaker", region_name=REGION)
    variant = {"VariantName": "AllTraffic", "InstanceType": "ml.g5.12xlarge", "InitialInstanceCount": 1}
    sm.create_endpoint_config(
        EndpointConfigName="shared-llm-config", ExecutionRoleArn=ROLE, ProductionVariants=[variant]
    )
    sm.create_endpoint(EndpointName="shared-llm", EndpointConfigName="shared-llm-config")
    sm.create_inference_component(
        InferenceComponentName="mistral-chat",
        EndpointName="shared-llm",
        VariantName="AllTraffic",
        Specification={
            "Container": {"Image": LMI, "Environment": {"OPTION_MODEL_ID": "mistralai/Mistral-7B-Instruct-v0.3"}},
            "ComputeResourceRequirements": {"NumberOfAcceleratorDevicesRequired": 2, "MinMemoryRequiredInMb": 1024},
        },
        RuntimeConfig={"CopyCount": 1},
    )


@pytest.fixture
def seeded(aws: Emulator, monkeypatch: pytest.MonkeyPatch) -> None:
    """The account seeded afresh (the emulator reset by ``aws``), the settings naming the Chipwise bus."""
    monkeypatch.setenv("CHIPWISE_EVENT_BUS_NAME", "chipwise")
    get_settings.cache_clear()
    _seed(aws)


_SEEDED_AT: dict[int, int] = {}  # id(emulator) -> its reset count when this module last seeded it


@pytest.fixture
def seeded_read_only(emulator: Emulator, monkeypatch: pytest.MonkeyPatch) -> Iterator[Emulator]:
    """The same account, seeded once and kept for the tests that only read it (a scan only reads the account; its
    one write, PutEvents, adds nothing a later scan reads; Cost Explorer answers a repeated request as before): seeded
    again only when something reset the emulator since. No fault is left over from another test, nor left after."""
    from chipwise_devkit.emulator.faults import REGISTRY

    for key, value in emulator.env().items():
        monkeypatch.setenv(key, value)
    monkeypatch.setenv("CHIPWISE_EVENT_BUS_NAME", "chipwise")
    get_settings.cache_clear()
    base_session.cache_clear()
    neuron_agent.aws_client.cache_clear()
    if _SEEDED_AT.get(id(emulator)) != emulator.resets:
        emulator.reset()
        _seed(emulator)
        _SEEDED_AT[id(emulator)] = emulator.resets
    REGISTRY.clear()
    yield emulator
    REGISTRY.clear()
    base_session.cache_clear()


@pytest.fixture
def clean_url(tmp_path: Path, _sqlite_template: Path) -> Iterator[str]:
    """A second, separate migrated SQLite store for the clean run to compare with."""
    path = tmp_path / "clean.db"
    shutil.copy(_sqlite_template, path)
    url = f"sqlite:///{path}"
    yield url
    get_engine(url).dispose()


def _scan(url: str, on_stage: Any = None) -> ScanDocument:
    return run_scan(
        aws_context(REGION),
        get_session_factory(url),
        region=REGION,
        now=NOW,
        lookback_days=LOOKBACK_DAYS,
        on_stage=on_stage,
    )


def _store(url: str) -> dict[str, Any]:
    """What a scan leaves in the store, without ids and clock times (which differ between any two runs)."""
    with get_session_factory(url)() as session:
        resources = sorted(
            (r.arn, r.kind, r.state, r.instance_type, r.instance_count) for r in session.scalars(select(Resource))
        )
        costs = sorted(
            (c.day, c.service, c.usage_type, c.unblended_cost, c.amortized_cost, c.usage_quantity)
            for c in session.scalars(select(CostRecord))
        )
        arns = {row.id: row.arn for row in session.execute(select(Resource.id, Resource.arn))}
        rollups = sorted(
            (arns[r.resource_id], r.namespace, r.metric, r.hour, r.average, r.maximum, r.sum, r.sample_count)
            for r in session.scalars(select(MetricRollup))
        )
        coverage = sorted(
            (arns[c.resource_id], c.namespace, c.metric, c.exists, c.hours_with_data, c.window_start, c.window_end)
            for c in session.scalars(select(MetricCoverage))
        )
        findings = sorted(
            (f.rule_id, f.resource_arn, f.status, f.estimated_monthly_savings_usd)
            for f in session.scalars(select(Finding))
        )
    return {"resources": resources, "costs": costs, "rollups": rollups, "coverage": coverage, "findings": findings}


@pytest.mark.parametrize("stage", STAGES)
def test_a_scan_killed_at_any_stage_and_rerun_leaves_the_store_of_a_clean_run(
    aws: Emulator, seeded: None, db_url: str, clean_url: str, stage: str
) -> None:
    # Given a clean run's store (on its own SQLite file)
    _scan(clean_url)
    clean = _store(clean_url)

    # When a scan is killed as it enters ``stage``, and the scan is run again
    def kill(name: str) -> None:
        if name == stage:
            raise Killed(name)

    with pytest.raises(Killed):
        _scan(db_url, on_stage=kill)
    rerun = _scan(db_url)
    # Then the re-run succeeded and the store holds exactly what the clean run's holds
    assert rerun.status in ("succeeded", "partial") and [e.source for e in rerun.errors if e.source != "rules"] == []
    assert _store(db_url) == clean
    # And the killed scan is still on record: running (the next scan past the hour marks it abandoned), or, killed
    # as it announced itself, finished and stored
    with get_session_factory(db_url)() as session:
        statuses = sorted(session.scalars(select(Scan.status)))
    assert statuses == sorted([rerun.status if stage == "event" else "running", rerun.status])


def test_two_scans_of_one_account_at_once_leave_no_duplicates(
    aws: Emulator, seeded: None, db_url: str, clean_url: str
) -> None:
    # Given a clean run's store
    _scan(clean_url)
    clean = _store(clean_url)
    # When two scans of the same account and region run at the same moment
    start = threading.Barrier(2)
    results: list[ScanDocument | BaseException] = []

    def scan() -> None:
        start.wait()
        try:
            results.append(_scan(db_url))
        except BaseException as exc:  # a crash is a result the test reports
            results.append(exc)

    threads = [threading.Thread(target=scan) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(300)
    # Then both finished, and the store holds each resource, cost, rollup and finding once
    assert all(isinstance(r, ScanDocument) for r in results), results
    assert len(results) == 2
    assert _store(db_url) == clean


def test_every_operation_a_scan_calls_is_listed_here(aws: Emulator, seeded: None, clean_url: str) -> None:
    document = _scan(clean_url)
    # (the document counts the calls made before it is stored; PutEvents announces it afterwards)
    assert document.api_calls["sts.GetCallerIdentity"] == 1
    assert sorted([*document.api_calls, "events.PutEvents"]) == sorted([*FAULTED, "sts.GetCallerIdentity"])


# Every operation a scan calls but the identity call (a fault there fails the scan: tested in
# test_collect_scan_faults), with the error source the scan reports it under (a call about one resource names it).
FAULTED = {
    "batch.DescribeComputeEnvironments": "inventory.batch",
    "batch.DescribeJobQueues": "inventory.batch",
    "batch.ListJobs": "inventory.batch:neuron-ce",  # the environment its queue feeds (kept, not described)
    "bedrock.ListProvisionedModelThroughputs": "inventory.bedrock_provisioned_throughput",
    "ce.GetCostAndUsage": "costs",
    "cloudwatch.GetMetricData": "metrics",
    "cloudwatch.ListMetrics": "metrics.list_metrics",
    "ec2.DescribeCapacityReservations": "inventory.ec2_capacity_reservations",
    "ec2.DescribeInstanceTypes": "inventory.ec2:describe_instance_types",
    "ec2.DescribeInstances": "inventory.ec2",
    "ecs.ListContainerInstances": "inventory.batch:neuron-ce",  # its instances: kept without them (minvCpus 0: no
    # container instance, so DescribeContainerInstances is not called here; tests/unit/collect covers it)
    "events.PutEvents": "events.chipwise",
    "sagemaker.DescribeEndpoint": "inventory.sagemaker_endpoints:chat-inf2",
    "sagemaker.DescribeEndpointConfig": "inventory.sagemaker_endpoints:chat-inf2",
    "sagemaker.DescribeInferenceComponent": "inventory.sagemaker_endpoints:shared-llm",
    "sagemaker.DescribeModel": "inventory.sagemaker_endpoints:chat-inf2",
    "sagemaker.DescribeTrainingJob": "inventory.sagemaker_training_jobs:ft-p4d",
    "sagemaker.ListApps": "inventory.sagemaker_studio_apps",
    "sagemaker.ListClusters": "inventory.sagemaker_hyperpod",
    "sagemaker.ListEndpoints": "inventory.sagemaker_endpoints",
    "sagemaker.ListInferenceComponents": "inventory.sagemaker_endpoints:shared-llm",
    "sagemaker.ListNotebookInstances": "inventory.sagemaker_notebooks",
    "sagemaker.ListTags": "inventory.sagemaker_endpoints:chat-inf2",
    "sagemaker.ListTrainingJobs": "inventory.sagemaker_training_jobs",
}


@pytest.mark.parametrize("operation", sorted(FAULTED))
def test_a_fault_on_any_operation_ends_the_scan_partial_with_the_reason(
    seeded_read_only: Emulator, db_url: str, operation: str
) -> None:
    # Given the operation refusing its next call (the first endpoint, job or page it is called for)
    service, name = operation.split(".")
    seeded_read_only.inject_fault(service, name, "AccessDeniedException", f"injected: not authorized to {operation}")
    # When the account is scanned
    document = _scan(db_url)
    # Then the scan ends partial, stored so, with the reason
    assert document.status == "partial", document.errors
    reasons = {e.source: (e.code, e.message) for e in document.errors if e.code == "AccessDeniedException"}
    assert list(reasons) == [FAULTED[operation]], reasons
    assert f"injected: not authorized to {operation}" in reasons[FAULTED[operation]][1]
    with get_session_factory(db_url)() as session:
        scan = session.get(Scan, document.scan_id)
        assert scan is not None and scan.status == "partial" and scan.errors
    assert Decimal(0) <= document.costs.total_usd
