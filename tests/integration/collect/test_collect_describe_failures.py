"""Issue 36 item 6: a listed resource that cannot be described is a per-resource error, never gone.

Each inventory source of the registry is held to it: one resource of its kind is scanned, then every detail call
the source declares (and, apart, every listing call) fails, and the scan again must report the error and keep
the resource as stored (not ``gone``). A Studio app whose DescribeApp is throttled, denied or fails keeps its
finding open. Faults are injected in the emulator (HTTP answers shaped as AWS sends them).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Any

import boto3
import pytest
from sqlalchemy import select

from chipwise.aws import aws_context
from chipwise.catalog import get_catalog
from chipwise.collect.inventory import instance_types
from chipwise.collect.inventory.registry import InventorySource, inventory_sources
from chipwise.models.scan import ScanDocument
from chipwise.pipeline.scan import run_scan
from chipwise.store import get_session_factory
from chipwise.store.tables import Finding, Resource
from chipwise_devkit.emulator import Emulator
from chipwise_devkit.emulator.studio_apps import set_last_user_activity

REGION = "us-east-1"
ACCOUNT = "123456789012"
ZONE = "us-east-1a"
ROLE = f"arn:aws:iam::{ACCOUNT}:role/sagemaker"
LMI = "763104351884.dkr.ecr.us-east-1.amazonaws.com/djl-inference:0.31.0-lmi13.0.0-cu124"
# Accelerator types moto accepts where it checks them (g4dn for EC2 and Batch, ml.p2 for notebook instances); the
# sources see them through a catalog that lacks them (below), so each source asks DescribeInstanceTypes about them.
EC2_TYPE = "g4dn.xlarge"
FORGOTTEN = frozenset({EC2_TYPE, f"ml.{EC2_TYPE}", "ml.p2.xlarge"})


class _CatalogWithout:
    """The catalog, but for the seeded types: as for a type newer than its data, the inventory asks EC2."""

    def __init__(self, catalog: Any) -> None:
        self._catalog = catalog

    def get(self, name: str) -> Any:
        return None if name in FORGOTTEN else self._catalog.get(name)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._catalog, name)


@pytest.fixture(autouse=True)
def _catalog_without_the_seeded_types(monkeypatch: pytest.MonkeyPatch) -> None:
    catalog = _CatalogWithout(get_catalog())
    monkeypatch.setattr(instance_types, "get_catalog", lambda: catalog)


def _now() -> datetime:
    return datetime.now(UTC) + timedelta(days=2)  # resources are stamped with the real clock


def _scan(url: str) -> ScanDocument:
    return run_scan(aws_context(REGION), get_session_factory(url), region=REGION, now=_now(), lookback_days=8)


def _client(service: str) -> Any:
    return boto3.client(service, region_name=REGION)  # type: ignore[call-overload]


# --- one resource of each source's kind -----------------------------------------------------------------------


def _ec2() -> None:
    _client("ec2").run_instances(
        ImageId="ami-12345678",
        InstanceType=EC2_TYPE,
        MinCount=1,
        MaxCount=1,
        TagSpecifications=[{"ResourceType": "instance", "Tags": [{"Key": "Name", "Value": "gpu-box"}]}],
    )


def _endpoints() -> None:
    sm = _client("sagemaker")
    # an endpoint serving a model, and an endpoint whose variant hosts an inference component
    sm.create_model(ModelName="chat-model", PrimaryContainer={"Image": LMI}, ExecutionRoleArn=ROLE)
    sm.create_endpoint_config(
        EndpointConfigName="chat-config",
        ProductionVariants=[
            {
                "VariantName": "AllTraffic",
                "ModelName": "chat-model",
                "InstanceType": "ml.g5.xlarge",
                "InitialInstanceCount": 1,
            }
        ],
    )
    sm.create_endpoint(EndpointName="chat", EndpointConfigName="chat-config", Tags=[{"Key": "team", "Value": "ml"}])
    sm.create_endpoint_config(
        EndpointConfigName="shared-config",
        ExecutionRoleArn=ROLE,
        ProductionVariants=[{"VariantName": "AllTraffic", "InstanceType": "ml.g5.12xlarge", "InitialInstanceCount": 1}],
    )
    sm.create_endpoint(EndpointName="shared", EndpointConfigName="shared-config")
    sm.create_inference_component(
        InferenceComponentName="mistral",
        EndpointName="shared",
        VariantName="AllTraffic",
        Specification={
            "Container": {"Image": LMI, "Environment": {"OPTION_MODEL_ID": "mistralai/Mistral-7B-Instruct-v0.3"}},
            "ComputeResourceRequirements": {"NumberOfAcceleratorDevicesRequired": 2, "MinMemoryRequiredInMb": 1024},
        },
        RuntimeConfig={"CopyCount": 1},
    )


def _training_jobs() -> None:
    _client("sagemaker").create_training_job(
        TrainingJobName="ft-p4d",
        AlgorithmSpecification={"TrainingImage": f"{LMI}-training", "TrainingInputMode": "File"},
        RoleArn=ROLE,
        OutputDataConfig={"S3OutputPath": "s3://models/ft-p4d/"},
        ResourceConfig={"InstanceType": "ml.p4d.24xlarge", "InstanceCount": 1, "VolumeSizeInGB": 100},
        StoppingCondition={"MaxRuntimeInSeconds": 86400},
    )


def _batch() -> None:
    ec2, iam, batch = _client("ec2"), _client("iam"), _client("batch")
    vpc = ec2.create_vpc(CidrBlock="10.9.0.0/16")["Vpc"]["VpcId"]
    subnet = ec2.create_subnet(VpcId=vpc, CidrBlock="10.9.1.0/24")["Subnet"]["SubnetId"]
    group = ec2.create_security_group(GroupName="batch", Description="batch", VpcId=vpc)["GroupId"]
    principal = {"Effect": "Allow", "Principal": {"Service": "batch.amazonaws.com"}, "Action": "sts:AssumeRole"}
    trust = json.dumps({"Version": "2012-10-17", "Statement": [principal]})
    role = iam.create_role(RoleName="batch", AssumeRolePolicyDocument=trust)["Role"]["Arn"]
    profile = iam.create_instance_profile(InstanceProfileName="ecs-batch")["InstanceProfile"]["Arn"]
    known = _instance_ids(ec2)
    env = batch.create_compute_environment(
        computeEnvironmentName="gpu-ce",
        type="MANAGED",
        state="ENABLED",
        serviceRole=role,
        computeResources={
            "type": "EC2",
            "minvCpus": 4,
            "maxvCpus": 64,
            "instanceTypes": [EC2_TYPE],
            "subnets": [subnet],
            "securityGroupIds": [group],
            "instanceRole": profile,
        },
    )["computeEnvironmentArn"]
    batch.create_job_queue(
        jobQueueName="gpu-queue",
        state="ENABLED",
        priority=1,
        computeEnvironmentOrder=[{"order": 1, "computeEnvironment": env}],
    )
    # what the ECS agent on each instance minvCpus launched does when it boots (the emulator launches no agent):
    # register it in the environment's ECS cluster, where the inventory finds the environment's instances
    cluster = batch.describe_compute_environments(computeEnvironments=[env])["computeEnvironments"][0]["ecsClusterArn"]
    for instance_id in sorted(_instance_ids(ec2) - known):
        document = json.dumps({"instanceId": instance_id, "region": REGION, "accountId": ACCOUNT})
        _client("ecs").register_container_instance(cluster=cluster, instanceIdentityDocument=document)


def _instance_ids(ec2: Any) -> set[str]:
    return {i["InstanceId"] for r in ec2.describe_instances()["Reservations"] for i in r["Instances"]}


def _notebooks() -> None:
    _client("sagemaker").create_notebook_instance(
        NotebookInstanceName="research-nb", InstanceType="ml.p2.xlarge", RoleArn=ROLE
    )


def _hyperpod() -> None:
    lifecycle = {"SourceS3Uri": "s3://sagemaker-lifecycle/hyperpod/", "OnCreate": "on_create.sh"}
    _client("sagemaker").create_cluster(
        ClusterName="pretrain",
        InstanceGroups=[
            {
                "InstanceGroupName": "workers",
                "InstanceType": "ml.p4d.24xlarge",
                "InstanceCount": 2,
                "LifeCycleConfig": lifecycle,
                "ThreadsPerCore": 1,
                "ExecutionRole": ROLE,
            }
        ],
    )


def _capacity_reservations() -> None:
    _client("ec2").create_capacity_reservation(
        InstanceType=EC2_TYPE,
        InstancePlatform="Linux/UNIX",
        AvailabilityZone=ZONE,
        InstanceCount=2,
        TagSpecifications=[{"ResourceType": "capacity-reservation", "Tags": [{"Key": "Name", "Value": "held"}]}],
    )


def _bedrock() -> None:
    _client("bedrock").create_provisioned_model_throughput(
        modelUnits=1, provisionedModelName="support-pt", modelId="meta.llama3-1-70b-instruct-v1:0"
    )


def _studio_app(space: str = "alice", instance_type: str = f"ml.{EC2_TYPE}") -> str:
    return str(
        _client("sagemaker").create_app(
            DomainId="d-research",
            SpaceName=space,
            AppType="JupyterLab",
            AppName="default",
            ResourceSpec={"InstanceType": instance_type},
        )["AppArn"]
    )


# A source added to the registry needs its seed here (the test below fails on a source it cannot seed).
SEEDS: dict[str, Callable[[], object]] = {
    "inventory.ec2": _ec2,
    "inventory.sagemaker_endpoints": _endpoints,
    "inventory.sagemaker_training_jobs": _training_jobs,
    "inventory.batch": _batch,
    "inventory.sagemaker_notebooks": _notebooks,
    "inventory.sagemaker_hyperpod": _hyperpod,
    "inventory.ec2_capacity_reservations": _capacity_reservations,
    "inventory.bedrock_provisioned_throughput": _bedrock,
    "inventory.sagemaker_studio_apps": _studio_app,
}

SOURCES = inventory_sources()
DETAIL_CASES = [pytest.param(s, call, id=f"{s.name}:{call}") for s in SOURCES for call in s.detail_calls]
LISTING_CASES = [pytest.param(s, call, id=f"{s.name}:{call}") for s in SOURCES for call in s.listing_calls]


def _stored(url: str, kinds: tuple[str, ...]) -> dict[tuple[str, str], str | None]:
    with get_session_factory(url)() as session:
        rows = session.scalars(select(Resource).where(Resource.kind.in_(kinds))).all()
        return {(r.kind, r.name): r.state for r in rows}


def test_every_source_is_held_to_the_rule_and_has_a_seed() -> None:
    # Given the registry: every source is seeded here and declares what it calls
    assert sorted(SEEDS) == [s.name for s in SOURCES]
    assert all(s.listing_calls for s in SOURCES)


@pytest.mark.parametrize(("source", "call"), DETAIL_CASES)
def test_a_failed_detail_call_keeps_the_resource_and_is_reported(
    aws: Emulator, sqlite_url: str, source: InventorySource, call: str
) -> None:
    # Given a source's resource scanned once, then one of its detail calls denied
    SEEDS[source.name]()
    _scan(sqlite_url)
    before = _stored(sqlite_url, source.kinds)
    assert before and "gone" not in before.values()
    service, operation = call.split(".")
    aws.inject_fault(service, operation, "AccessDeniedException", f"not authorized: {call}")
    # When scanned again
    document = _scan(sqlite_url)
    # Then the call was made and refused, the refusal is a per-resource error of that source (the source itself
    # completed), and every stored resource of its kinds keeps its state: nothing is marked gone
    assert aws.fault_hits() == {call: 1}
    errors = [e for e in document.errors if e.source.startswith(f"{source.name}:")]
    assert [e.code for e in errors] == ["AccessDeniedException"]
    assert source.name not in {e.source for e in document.errors}
    assert _stored(sqlite_url, source.kinds) == before


@pytest.mark.parametrize(("source", "call"), LISTING_CASES)
def test_a_failed_listing_fails_its_source_and_marks_nothing_gone(
    aws: Emulator, sqlite_url: str, source: InventorySource, call: str
) -> None:
    SEEDS[source.name]()
    _scan(sqlite_url)
    before = _stored(sqlite_url, source.kinds)
    assert before
    service, operation = call.split(".")
    aws.inject_fault(service, operation, "AccessDeniedException", f"not authorized: {call}")
    document = _scan(sqlite_url)
    assert aws.fault_hits() == {call: 1}
    assert [(e.source, e.code) for e in document.errors if e.source.startswith("inventory.")] == [
        (source.name, "AccessDeniedException")
    ]
    assert _stored(sqlite_url, source.kinds) == before


# --- the Studio app of the issue: throttled, denied or failing DescribeApp --------------------------------------

# (code, HTTP status, calls made): throttling and a server error are retried (AWS_MAX_ATTEMPTS=2 is two attempts in
# all, the first included, as botocore documents the variable), a refusal is not
STUDIO_FAULTS = [
    pytest.param("ThrottlingException", 400, 2, id="throttled"),
    pytest.param("AccessDeniedException", 400, 1, id="denied"),
    pytest.param("InternalFailure", 500, 2, id="failed"),
]


@pytest.mark.parametrize(("code", "status", "attempts"), STUDIO_FAULTS)
def test_a_studio_app_that_cannot_be_described_is_kept_and_its_finding_stays_open(
    aws: Emulator, sqlite_url: str, monkeypatch: pytest.MonkeyPatch, code: str, status: int, attempts: int
) -> None:
    monkeypatch.setenv("AWS_MAX_ATTEMPTS", "2")
    # Given an idle Studio app (no user activity for 9 days) whose finding the first scan opened
    app = _studio_app(instance_type="ml.g5.xlarge")
    set_last_user_activity(ACCOUNT, REGION, app, _now() - timedelta(days=9))
    _scan(sqlite_url)
    name = "d-research/alice/default"
    with get_session_factory(sqlite_url)() as session:
        (finding,) = session.scalars(select(Finding).where(Finding.resource_name == name)).all()
        assert (finding.rule_id, finding.status) == ("capacity_held_idle", "open")
    # When DescribeApp fails on every attempt of the next scan
    aws.inject_fault("sagemaker", "DescribeApp", code, "injected", times=attempts, status=status)
    document = _scan(sqlite_url)
    # Then the app is a per-resource error of the scan, not gone, and its finding is still open
    assert aws.fault_hits() == {"sagemaker.DescribeApp": attempts}
    assert document.status == "partial"
    (error,) = [e for e in document.errors if e.source.startswith("inventory.")]
    assert (error.source, error.code) == (f"inventory.sagemaker_studio_apps:{name}", code)
    assert "not described this scan" in error.message
    with get_session_factory(sqlite_url)() as session:
        (resource,) = session.scalars(select(Resource).where(Resource.kind == "sagemaker_studio_app")).all()
        assert (resource.arn, resource.state, resource.ended_at) == (app, "InService", None)
        (finding,) = session.scalars(select(Finding).where(Finding.resource_name == name)).all()
        assert finding.status == "open"


def test_a_studio_app_deleted_after_the_listing_is_gone(aws: Emulator, sqlite_url: str) -> None:
    # Given a scanned app, then DescribeApp saying it no longer exists (deleted between ListApps and DescribeApp)
    _studio_app()
    _scan(sqlite_url)
    aws.inject_fault("sagemaker", "DescribeApp", "ResourceNotFound", "Could not find app default.")
    document = _scan(sqlite_url)
    # Then that is not an error and the app is gone (the one answer that says so)
    assert [e for e in document.errors if e.source.startswith("inventory.")] == []
    with get_session_factory(sqlite_url)() as session:
        (resource,) = session.scalars(select(Resource).where(Resource.kind == "sagemaker_studio_app")).all()
        assert resource.state == "gone"
