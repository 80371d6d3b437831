"""New resource kinds of issue 25 on the emulator, scanned end to end (inventory, cost, activity, outcome):
capacity reservations and Capacity Blocks, Batch compute environments holding minimum vCPUs, SageMaker notebook
instances and HyperPod clusters. Per kind: an idle one gets its waste at the right rate, a busy one none, one
without activity data "cannot judge" with the fix named. A listing AWS refuses is a scan error, the rest goes on.

Rates are the catalog's on-demand prices (no Cost Explorer pages are seeded): g5.12xlarge $5.672/h,
p4d.24xlarge $21.957642/h, inf2.xlarge $0.7582/h.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from typing import Any

import boto3
from sqlalchemy import select

from chipwise.aws import aws_context
from chipwise.catalog import get_catalog
from chipwise.models.scan import ScanDocument
from chipwise.pipeline.scan import run_scan
from chipwise.store import get_session_factory
from chipwise.store.tables import Finding
from chipwise_devkit.emulator import Emulator, MetricPoint
from chipwise_devkit.emulator.studio_apps import set_last_user_activity

REGION = "us-east-1"
ACCOUNT = "123456789012"
ZONE = "us-east-1a"
LOOKBACK_DAYS = 8


def _now() -> datetime:
    # two days after the resources are created (moto stamps them with the real clock)
    return datetime.now(UTC) + timedelta(days=2)


def _scan(url: str) -> ScanDocument:
    return run_scan(aws_context(REGION), get_session_factory(url), region=REGION, now=_now(), lookback_days=8)


def _findings(url: str) -> dict[tuple[str, str], Finding]:
    with get_session_factory(url)() as session:
        return {(f.resource_name, f.rule_id): f for f in session.scalars(select(Finding))}


def _client(service: str) -> Any:
    return boto3.client(service, region_name=REGION)  # type: ignore[call-overload]


def _price(instance_type: str) -> Decimal:
    price = get_catalog().price(instance_type, REGION)
    assert price is not None
    return price


def test_capacity_reservations_unused_capacity_is_waste_at_the_on_demand_rate(aws: Emulator, sqlite_url: str) -> None:
    ec2 = _client("ec2")
    # Given an open reservation of 2 x g5.12xlarge nothing runs in, one of 2 x p4d.24xlarge with both instances
    # running in it, and a Capacity Block of 1 x p4d.24xlarge unused
    ec2.create_capacity_reservation(
        InstanceType="g5.12xlarge",
        InstancePlatform="Linux/UNIX",
        AvailabilityZone=ZONE,
        InstanceCount=2,
        TagSpecifications=[{"ResourceType": "capacity-reservation", "Tags": [{"Key": "Name", "Value": "idle-cr"}]}],
    )
    ec2.create_capacity_reservation(
        InstanceType="p4d.24xlarge",
        InstancePlatform="Linux/UNIX",
        AvailabilityZone=ZONE,
        InstanceCount=2,
        TagSpecifications=[{"ResourceType": "capacity-reservation", "Tags": [{"Key": "Name", "Value": "busy-cr"}]}],
    )
    ec2.run_instances(
        ImageId="ami-12345678",
        InstanceType="p4d.24xlarge",
        MinCount=2,
        MaxCount=2,
        Placement={"AvailabilityZone": ZONE},
    )
    offering = ec2.describe_capacity_block_offerings(
        InstanceType="p4d.24xlarge",
        InstanceCount=1,
        CapacityDurationHours=24 * 14,
        StartDateRange=datetime.now(UTC) - timedelta(days=1),
    )["CapacityBlockOfferings"][0]
    ec2.purchase_capacity_block(
        CapacityBlockOfferingId=offering["CapacityBlockOfferingId"],
        InstancePlatform="Linux/UNIX",
        TagSpecifications=[{"ResourceType": "capacity-reservation", "Tags": [{"Key": "Name", "Value": "block"}]}],
    )
    # When scanned
    document = _scan(sqlite_url)
    found = _findings(sqlite_url)
    # Then the idle reservation's 2 unused g5.12xlarge are waste at 5.672 x 2 x 730 = $8,281.12 a month
    assert {e.source for e in document.errors if e.source != "rules"} == set()
    idle = found[("idle-cr", "capacity_held_idle")]
    assert (
        idle.estimated_monthly_savings_usd
        == Decimal("8281.12")
        == (_price("g5.12xlarge") * 2 * 730).quantize(Decimal("0.01"))
    )
    assert idle.evidence["unused_instances"] == 2 and idle.recommendation["target_count"] == 0
    # the busy one (both instances in it) has no finding
    assert not [k for k in found if k[0] == "busy-cr"]
    # the Capacity Block's unused share is committed until it ends: 21.957642 x 730 = $16,029.08, out of totals
    block = found[("block", "capacity_held_idle")]
    assert block.estimated_monthly_savings_usd == Decimal("16029.08")
    assert block.recommendation["excluded_from_totals"] == "committed"
    assert block.evidence["capacity_block"] is True and block.evidence["commitment_ends"]


def _batch_environment(name: str, min_vcpus: int) -> str:
    ec2, iam, batch = _client("ec2"), _client("iam"), _client("batch")
    vpc = ec2.create_vpc(CidrBlock="10.9.0.0/16")["Vpc"]["VpcId"]
    subnet = ec2.create_subnet(VpcId=vpc, CidrBlock="10.9.1.0/24")["Subnet"]["SubnetId"]
    group = ec2.create_security_group(GroupName=f"batch-{name}", Description="batch", VpcId=vpc)["GroupId"]
    trust = json.dumps(
        {
            "Version": "2012-10-17",
            "Statement": [
                {"Effect": "Allow", "Principal": {"Service": "batch.amazonaws.com"}, "Action": "sts:AssumeRole"}
            ],
        }
    )
    role = iam.create_role(RoleName=f"batch-{name}", AssumeRolePolicyDocument=trust)["Role"]["Arn"]
    profile = iam.create_instance_profile(InstanceProfileName=f"ecs-{name}")["InstanceProfile"]["Arn"]
    env = batch.create_compute_environment(
        computeEnvironmentName=name,
        type="MANAGED",
        state="ENABLED",
        serviceRole=role,
        computeResources={
            "type": "EC2",
            "minvCpus": min_vcpus,
            "maxvCpus": 256,
            "instanceTypes": ["g5.12xlarge"],
            "subnets": [subnet],
            "securityGroupIds": [group],
            "instanceRole": profile,
        },
    )["computeEnvironmentArn"]
    batch.create_job_queue(
        jobQueueName=f"{name}-queue",
        state="ENABLED",
        priority=1,
        computeEnvironmentOrder=[{"order": 1, "computeEnvironment": env}],
    )
    return f"{name}-queue"


def test_a_batch_environment_holding_minimum_vcpus_without_jobs_is_waste(aws: Emulator, sqlite_url: str) -> None:
    batch = _client("batch")
    # Given two g5.12xlarge (48 vCPUs) environments with minvCpus 96: one whose queue ran no job, one that ran one
    _batch_environment("idle-ce", 96)
    queue = _batch_environment("busy-ce", 96)
    definition = batch.register_job_definition(
        jobDefinitionName="train",
        type="container",
        containerProperties={"image": "busybox", "vcpus": 1, "memory": 128, "command": ["true"]},
    )["jobDefinitionArn"]
    batch.submit_job(jobName="nightly", jobQueue=queue, jobDefinition=definition)
    # When scanned
    _scan(sqlite_url)
    found = _findings(sqlite_url)
    # Then the idle one holds ceil(96 / 48) = 2 instances: 5.672 x 2 x 730 = $8,281.12 a month, set minvCpus to 0
    idle = found[("idle-ce", "capacity_held_idle")]
    assert idle.estimated_monthly_savings_usd == Decimal("8281.12")
    assert idle.evidence["held_instances"] == 2 and idle.evidence["min_vcpus"] == 96
    assert ("busy-ce", "capacity_held_idle") not in found


def test_a_notebook_instance_on_an_accelerator_cannot_be_judged_and_names_the_fix(
    aws: Emulator, sqlite_url: str
) -> None:
    sm = _client("sagemaker")
    # Given an ml.g5.xlarge notebook instance, and a CPU one (not Chipwise's business)
    role = f"arn:aws:iam::{ACCOUNT}:role/sagemaker"
    sm.create_notebook_instance(NotebookInstanceName="research-nb", InstanceType="ml.g5.xlarge", RoleArn=role)
    sm.create_notebook_instance(NotebookInstanceName="cpu-nb", InstanceType="ml.t3.medium", RoleArn=role)
    # When scanned
    document = _scan(sqlite_url)
    found = _findings(sqlite_url)
    # Then the accelerated one is inventoried at its catalog rate and cannot be judged: no activity is exposed,
    # and the fix is an idle-shutdown lifecycle configuration; no saving is claimed
    assert {r.name for r in document.resources if r.kind == "sagemaker_notebook_instance"} == {"research-nb"}
    outcome = found[("research-nb", "cannot_judge")]
    assert outcome.evidence["verdict"] == "cannot_judge"
    assert "idle shutdown" in outcome.evidence["fix"]
    assert outcome.estimated_monthly_savings_usd == Decimal("0.00")
    rate = get_catalog().price("ml.g5.xlarge", REGION)
    assert rate is not None and outcome.monthly_cost_usd == (rate * 730).quantize(Decimal("0.01"))
    assert [k for k in found if k[0] == "research-nb"] == [("research-nb", "cannot_judge")]


def test_a_hyperpod_cluster_is_inventoried_with_its_groups_and_cannot_be_judged(aws: Emulator, sqlite_url: str) -> None:
    sm = _client("sagemaker")
    # Given a HyperPod cluster with a controller group on CPU and 2 x ml.p4d.24xlarge workers
    role = f"arn:aws:iam::{ACCOUNT}:role/sagemaker"
    lifecycle = {"SourceS3Uri": "s3://sagemaker-lifecycle/hyperpod/", "OnCreate": "on_create.sh"}
    sm.create_cluster(
        ClusterName="pretrain",
        InstanceGroups=[
            {
                "InstanceGroupName": "controller",
                "InstanceType": "ml.m5.xlarge",
                "InstanceCount": 1,
                "LifeCycleConfig": lifecycle,
                "ThreadsPerCore": 1,
                "ExecutionRole": role,
            },
            {
                "InstanceGroupName": "workers",
                "InstanceType": "ml.p4d.24xlarge",
                "InstanceCount": 2,
                "LifeCycleConfig": lifecycle,
                "ThreadsPerCore": 1,
                "ExecutionRole": role,
            },
        ],
    )
    # When scanned
    document = _scan(sqlite_url)
    found = _findings(sqlite_url)
    # Then the cluster is one resource on its accelerated group (2 x ml.p4d.24xlarge) that cannot be judged
    (cluster,) = [r for r in document.resources if r.kind == "sagemaker_hyperpod_cluster"]
    assert (cluster.instance_type, cluster.instance_count) == ("ml.p4d.24xlarge", 2)
    outcome = found[("pretrain", "cannot_judge")]
    assert "Container Insights" in outcome.evidence["fix"]


def test_a_refused_listing_of_a_new_kind_is_a_scan_error_and_the_rest_goes_on(aws: Emulator, sqlite_url: str) -> None:
    sm = _client("sagemaker")
    sm.create_notebook_instance(
        NotebookInstanceName="research-nb", InstanceType="ml.g5.xlarge", RoleArn=f"arn:aws:iam::{ACCOUNT}:role/sm"
    )
    aws.inject_fault("ec2", "DescribeCapacityReservations", "UnauthorizedOperation", "not authorized")
    document = _scan(sqlite_url)
    assert document.status == "partial"
    errors = {e.source: e.code for e in document.errors if e.source != "rules"}
    assert errors == {"inventory.ec2_capacity_reservations": "UnauthorizedOperation"}
    assert {r.name for r in document.resources} == {"research-nb"}


def _provisioned(name: str, commitment: str | None = None) -> str:
    bedrock = _client("bedrock")
    extra = {"commitmentDuration": commitment} if commitment else {}
    return str(
        bedrock.create_provisioned_model_throughput(
            modelUnits=2, provisionedModelName=name, modelId="meta.llama3-1-70b-instruct-v1:0", **extra
        )["provisionedModelArn"]
    )


def test_bedrock_provisioned_throughput_without_invocations_is_idle_and_says_when_its_term_ends(
    aws: Emulator, sqlite_url: str
) -> None:
    # Given two provisioned models of 2 model units: one on a one-month commitment nobody invokes, one invoked
    # every hour (AWS/Bedrock Invocations by ModelId = its ARN)
    _provisioned("idle-pt", "OneMonth")
    busy = _provisioned("busy-pt")
    end = _now().replace(minute=0, second=0, microsecond=0)
    aws.seed_metrics(
        MetricPoint("AWS/Bedrock", "Invocations", {"ModelId": busy}, end - timedelta(hours=h), 40.0, "Count")
        for h in range(1, LOOKBACK_DAYS * 24)
    )
    # When scanned
    document = _scan(sqlite_url)
    found = _findings(sqlite_url)
    # Then the idle one is found: no invocation in 8 days, its commitment's end named; its model-unit price is not
    # in the verified data, so it asks for a quote (no figure, out of the totals); the busy one has no finding
    assert {r.name for r in document.resources if r.kind == "bedrock_provisioned_throughput"} == {"idle-pt", "busy-pt"}
    idle = found[("idle-pt", "capacity_held_idle")]
    assert idle.evidence["model_units"] == 2 and idle.evidence["commitment_term"] == "OneMonth"
    assert idle.recommendation["excluded_from_totals"] == "quote_needed"
    assert "commitment bills until" in idle.summary and idle.evidence["commitment_ends"]
    assert idle.estimated_monthly_savings_usd == Decimal("0.00")
    assert not [k for k in found if k[0] == "busy-pt"]


def test_bedrock_provisioned_throughput_whose_invocations_were_not_read_cannot_be_judged(
    aws: Emulator, sqlite_url: str
) -> None:
    _provisioned("unread-pt")
    aws.inject_fault("cloudwatch", "GetMetricData", "AccessDenied", "not authorized")
    _scan(sqlite_url)
    found = _findings(sqlite_url)
    outcome = found[("unread-pt", "cannot_judge")]
    assert "not read" in outcome.evidence["reason"] and "GetMetricData" in outcome.evidence["fix"]
    assert ("unread-pt", "capacity_held_idle") not in found


def _studio_app(space: str, instance_type: str = "ml.g5.xlarge") -> str:
    return str(
        _client("sagemaker").create_app(
            DomainId="d-research",
            SpaceName=space,
            AppType="JupyterLab",
            AppName="default",
            ResourceSpec={"InstanceType": instance_type},
        )["AppArn"]
    )


def test_studio_apps_idle_busy_and_without_activity(aws: Emulator, sqlite_url: str) -> None:
    # Given three JupyterLab apps on ml.g5.xlarge: one whose last user activity was 9 days ago, one used an hour
    # ago, one with no activity recorded; and one on a CPU type (not Chipwise's business)
    idle, busy = _studio_app("alice"), _studio_app("bob")
    _studio_app("carol")
    _studio_app("dave", "ml.t3.medium")
    set_last_user_activity(ACCOUNT, REGION, idle, _now() - timedelta(days=9))
    set_last_user_activity(ACCOUNT, REGION, busy, _now() - timedelta(hours=1))
    # When scanned
    document = _scan(sqlite_url)
    found = _findings(sqlite_url)
    # Then the idle one is waste at the catalog's ml.g5.xlarge rate x 730; the busy one has nothing; the one with
    # no recorded activity cannot be judged, with idle shutdown as the fix
    assert {r.name for r in document.resources if r.kind == "sagemaker_studio_app"} == {
        "d-research/alice/default",
        "d-research/bob/default",
        "d-research/carol/default",
    }
    waste = found[("d-research/alice/default", "capacity_held_idle")]
    assert waste.estimated_monthly_savings_usd == (_price("ml.g5.xlarge") * 730).quantize(Decimal("0.01"))
    assert waste.evidence["idle_days"] == 9.0
    assert not [k for k in found if k[0] == "d-research/bob/default"]
    unknown = found[("d-research/carol/default", "cannot_judge")]
    assert "idle shutdown" in unknown.evidence["fix"]
    assert ("d-research/carol/default", "capacity_held_idle") not in found
