"""AWS Batch for the demo and the tests: benchmark queues by family, and the job-state events Batch emits.

Production declares the queues in SAM (``iac/template.yaml``). These are for the emulator (or a sandbox
account): everything is looked up before it is created, so running it twice changes nothing.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any

from chipwise.clock import utcnow
from chipwise.models.benchmark import BATCH_DETAIL_TYPE, BATCH_SOURCE
from chipwise.settings import Settings

if TYPE_CHECKING:
    from mypy_boto3_batch import BatchClient
    from mypy_boto3_ec2 import EC2Client
    from mypy_boto3_iam import IAMClient

    from chipwise.aws import AwsContext

NAME = "chipwise-bench"
# Instance families each queue's compute environment may launch (Batch accepts family names).
QUEUE_INSTANCE_FAMILIES: dict[str, tuple[str, ...]] = {
    "inf1": ("inf1",),
    "inf2": ("inf2",),
    "trn1": ("trn1", "trn1n"),
    "trn2": ("trn2",),
    "gpu_baseline": ("g5", "g6", "g6e", "p4d", "p5"),
}
MAX_VCPUS = 768  # a few of the largest accelerated instances at once; benchmarks run one job per instance
_TRUST_BATCH = {
    "Version": "2012-10-17",
    "Statement": [{"Effect": "Allow", "Principal": {"Service": "batch.amazonaws.com"}, "Action": "sts:AssumeRole"}],
}


@dataclass(frozen=True)
class Network:
    """Where the compute environments launch instances, and the roles they use."""

    subnets: list[str]
    security_groups: list[str]
    instance_profile: str
    service_role: str


def sandbox_network(ec2: EC2Client, iam: IAMClient) -> Network:
    """A VPC with one subnet and security group, an ECS instance profile and the Batch service role."""
    vpcs = ec2.describe_vpcs(Filters=[{"Name": "tag:Name", "Values": [NAME]}])["Vpcs"]
    if vpcs:
        vpc_id = vpcs[0]["VpcId"]
        subnet = ec2.describe_subnets(Filters=[{"Name": "vpc-id", "Values": [vpc_id]}])["Subnets"][0]["SubnetId"]
        groups = ec2.describe_security_groups(Filters=[{"Name": "vpc-id", "Values": [vpc_id]}])["SecurityGroups"]
        group = next(g["GroupId"] for g in groups if g["GroupName"] == NAME)
    else:
        vpc_id = ec2.create_vpc(CidrBlock="10.42.0.0/16")["Vpc"]["VpcId"]
        ec2.create_tags(Resources=[vpc_id], Tags=[{"Key": "Name", "Value": NAME}])
        subnet = ec2.create_subnet(VpcId=vpc_id, CidrBlock="10.42.0.0/20")["Subnet"]["SubnetId"]
        description = "Chipwise benchmark jobs"
        group = ec2.create_security_group(GroupName=NAME, Description=description, VpcId=vpc_id)["GroupId"]
    return Network(
        subnets=[subnet],
        security_groups=[group],
        instance_profile=_instance_profile(iam, f"{NAME}-ecs-instance"),
        service_role=_service_role(iam, f"{NAME}-batch-service"),
    )


def _instance_profile(iam: IAMClient, name: str) -> str:
    try:
        return iam.get_instance_profile(InstanceProfileName=name)["InstanceProfile"]["Arn"]
    except iam.exceptions.NoSuchEntityException:
        return iam.create_instance_profile(InstanceProfileName=name)["InstanceProfile"]["Arn"]


def _service_role(iam: IAMClient, name: str) -> str:
    try:
        return iam.get_role(RoleName=name)["Role"]["Arn"]
    except iam.exceptions.NoSuchEntityException:
        return iam.create_role(RoleName=name, AssumeRolePolicyDocument=json.dumps(_TRUST_BATCH))["Role"]["Arn"]


def ensure_compute_environment(batch: BatchClient, name: str, families: Sequence[str], network: Network) -> str:
    """A managed EC2 compute environment scaling from zero over ``families``."""
    found = batch.describe_compute_environments(computeEnvironments=[name])["computeEnvironments"]
    if found:
        return found[0]["computeEnvironmentArn"]
    return batch.create_compute_environment(
        computeEnvironmentName=name,
        type="MANAGED",
        state="ENABLED",
        computeResources={
            "type": "EC2",
            "minvCpus": 0,
            "maxvCpus": MAX_VCPUS,
            "instanceTypes": list(families),
            "subnets": network.subnets,
            "securityGroupIds": network.security_groups,
            "instanceRole": network.instance_profile,
        },
        serviceRole=network.service_role,
    )["computeEnvironmentArn"]


def ensure_job_queue(batch: BatchClient, name: str, compute_environment_arn: str) -> str:
    found = batch.describe_job_queues(jobQueues=[name])["jobQueues"]
    if found:
        return found[0]["jobQueueArn"]
    return batch.create_job_queue(
        jobQueueName=name,
        state="ENABLED",
        priority=1,
        computeEnvironmentOrder=[{"order": 1, "computeEnvironment": compute_environment_arn}],
    )["jobQueueArn"]


def configured_queues(settings: Settings) -> dict[str, str]:
    """Queue key (inf1, inf2, trn1, trn2, gpu_baseline) -> the configured queue name (the baseline when set)."""
    queues: Mapping[str, str | None] = settings.batch_queues.model_dump()
    return {key: name for key, name in queues.items() if name}


def provision_benchmark_queues(ctx: AwsContext, settings: Settings) -> dict[str, str]:
    """Every configured benchmark queue with its compute environment; returns queue name -> ARN."""
    network = sandbox_network(ctx.client("ec2"), ctx.client("iam"))
    batch = ctx.client("batch")
    arns: dict[str, str] = {}
    for key, queue in configured_queues(settings).items():
        environment = ensure_compute_environment(batch, f"{NAME}-{key}", QUEUE_INSTANCE_FAMILIES[key], network)
        arns[queue] = ensure_job_queue(batch, queue, environment)
    return arns


def job_state_event(job: Mapping[str, Any], *, time: datetime | None = None) -> dict[str, Any]:
    """The EventBridge event AWS Batch emits for a job in this state (``job`` is a DescribeJobs JobDetail).

    The demo delivers these for its emulated jobs, and tests build FAILED events from them (the emulator's
    docker-less jobs only ever succeed)."""
    arn = str(job.get("jobArn") or "")
    parts = arn.split(":")
    return {
        "version": "0",
        "id": str(uuid.uuid4()),
        "detail-type": BATCH_DETAIL_TYPE,
        "source": BATCH_SOURCE,
        "account": parts[4] if len(parts) > 5 else "",
        "time": (time or utcnow()).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "region": parts[3] if len(parts) > 5 else "",
        "resources": [arn] if arn else [],
        "detail": json.loads(json.dumps(dict(job), default=str)),
    }
