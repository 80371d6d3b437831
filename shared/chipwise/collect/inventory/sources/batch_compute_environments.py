"""AWS Batch compute environments, each with the job queues that feed it, their jobs created in the window and, for a
managed EC2 environment, the EC2 instances it launched: as AWS documents it, DescribeComputeEnvironments names the
environment's Amazon ECS cluster (``ecsClusterArn``) and every instance Batch launches registers in it as a container
instance (ECS ListContainerInstances, then DescribeContainerInstances: ``ec2InstanceId``). The bill names the
environment's cost by those instance ids, never by its own ARN."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from botocore.exceptions import BotoCoreError, ClientError

from chipwise.aws import AwsContext
from chipwise.catalog import get_catalog
from chipwise.collect.inventory.answers import CALL_ERRORS, problem
from chipwise.collect.inventory.instance_types import TypeFacts, TypeFactsReader, typed_resource
from chipwise.collect.inventory.registry import register
from chipwise.models.records import CollectedResource, Inventory
from chipwise.models.resources import BatchEnvironmentDetails, BatchJobQueue

MAX_RECENT_BATCH_JOBS = 50


@register(
    name="inventory.batch",
    kinds=("batch_compute_environment",),
    listing_calls=("batch.DescribeComputeEnvironments", "batch.DescribeJobQueues"),
    detail_calls=(
        "batch.ListJobs",
        "ec2.DescribeInstanceTypes",
        "ecs.ListContainerInstances",
        "ecs.DescribeContainerInstances",
    ),
)
def collect_batch(aws: AwsContext, _account_id: str, window_start: datetime) -> Inventory:
    """Compute environments, each with the job queues that feed it and their jobs created in the window. A queue
    whose jobs cannot be listed leaves the environments it feeds undescribed this scan (their job counts would be
    wrong): each is a problem of its own and is kept as stored, never marked gone."""
    batch = aws.client("batch")
    queues: dict[str, list[dict[str, Any]]] = {}
    unread: dict[str, ClientError | BotoCoreError] = {}  # environment -> why a queue feeding it was not read
    for queue_page in batch.get_paginator("describe_job_queues").paginate():
        for queue in queue_page.get("jobQueues", []):
            entry = {"name": queue["jobQueueName"], "arn": queue["jobQueueArn"], "state": queue.get("state")}
            try:
                entry |= _recent_jobs(aws, queue["jobQueueArn"], window_start)
            except CALL_ERRORS as exc:
                unread.update((order["computeEnvironment"], exc) for order in queue.get("computeEnvironmentOrder", []))
            for order in queue.get("computeEnvironmentOrder", []):
                queues.setdefault(order["computeEnvironment"], []).append(entry)
    environments: list[dict[str, Any]] = []
    for page in batch.get_paginator("describe_compute_environments").paginate():
        environments.extend(dict(e) for e in page.get("computeEnvironments", []))
    types = TypeFactsReader(aws)
    types.prefetch(t for e in environments for t in (e.get("computeResources") or {}).get("instanceTypes") or [])
    result = Inventory()
    for env in environments:
        arn, name = str(env["computeEnvironmentArn"]), str(env["computeEnvironmentName"])
        error = unread.get(arn) or unread.get(name)
        if error is not None:
            result.listed_arns.add(arn)
            result.problems.append(problem(arn, name, error, recorded=False, what="job queue jobs (ListJobs)"))
            continue
        attached = queues.get(arn, []) + queues.get(name, [])
        instance_ids: list[str] | None = None
        if _launches_ec2(env):
            try:
                instance_ids = environment_instances(aws, str(env["ecsClusterArn"]))
            except CALL_ERRORS as exc:
                kept = "recorded without its instances: its cost is not tied to the bill this scan"
                result.problems.append(
                    problem(arn, name, exc, recorded=True, what="its instances (ECS container instances)", note=kept)
                )
        result.resources.append(_batch_resource(env, attached, types, instance_ids))
    result.problems.extend(types.problems)
    return result


def _launches_ec2(env: dict[str, Any]) -> bool:
    """A managed environment on EC2 (On-Demand or Spot) with an ECS cluster: the instances it launched run in that
    cluster. Fargate runs no instance of the account's; an EKS environment's nodes are in its EKS cluster."""
    compute = env.get("computeResources") or {}
    return (
        env.get("type") == "MANAGED"
        and compute.get("type") in ("EC2", "SPOT")
        and bool(env.get("ecsClusterArn"))
        and env.get("containerOrchestrationType", "ECS") == "ECS"
    )


ECS_DESCRIBE_LIMIT = 100  # DescribeContainerInstances takes up to 100 container instances a call


def environment_instances(aws: AwsContext, cluster_arn: str) -> list[str]:
    """The EC2 instance ids of the container instances registered in a compute environment's ECS cluster, sorted:
    the instances Batch launched for it (ListContainerInstances, then DescribeContainerInstances by 100)."""
    ecs = aws.client("ecs")
    arns: list[str] = []
    for page in ecs.get_paginator("list_container_instances").paginate(cluster=cluster_arn):
        arns.extend(str(a) for a in page.get("containerInstanceArns", []))
    ids: set[str] = set()
    for i in range(0, len(arns), ECS_DESCRIBE_LIMIT):
        chunk = arns[i : i + ECS_DESCRIBE_LIMIT]
        described = ecs.describe_container_instances(cluster=cluster_arn, containerInstances=chunk)
        ids.update(str(c["ec2InstanceId"]) for c in described.get("containerInstances", []) if c.get("ec2InstanceId"))
    return sorted(ids)


def _recent_jobs(aws: AwsContext, queue_arn: str, window_start: datetime) -> dict[str, Any]:
    after = str(int(window_start.timestamp() * 1000))
    jobs: list[dict[str, Any]] = []
    pages = (
        aws.client("batch")
        .get_paginator("list_jobs")
        .paginate(jobQueue=queue_arn, filters=[{"name": "AFTER_CREATED_AT", "values": [after]}])
    )
    for page in pages:
        jobs.extend(dict(j) for j in page.get("jobSummaryList", []))
    by_status: dict[str, int] = {}
    for job in jobs:
        status = str(job.get("status", "UNKNOWN"))
        by_status[status] = by_status.get(status, 0) + 1
    recent = sorted(jobs, key=lambda j: j.get("createdAt", 0), reverse=True)[:MAX_RECENT_BATCH_JOBS]
    return {
        "jobs_in_window": len(jobs),
        "jobs_by_status": by_status,
        "recent_jobs": [
            {"job_id": j.get("jobId"), "name": j.get("jobName"), "status": j.get("status")} for j in recent
        ],
    }


def _batch_resource(
    env: dict[str, Any],
    queues: list[dict[str, Any]],
    reader: TypeFactsReader | None = None,
    instance_ids: list[str] | None = None,
) -> CollectedResource:
    compute = env.get("computeResources") or {}
    types = [str(t) for t in compute.get("instanceTypes") or []]
    typed = [(t, _batch_type_facts(t, reader)) for t in types]
    accelerated = [(t, f) for t, f in typed if f.platform != "cpu"]
    chosen: list[tuple[str | None, TypeFacts]] = [*accelerated, *typed, (None, TypeFacts("cpu", False, {}))]
    instance_type, typ = chosen[0]
    vcpu = typ.facts.get("vcpu") if typ.facts else None
    desired = int(compute.get("desiredvCpus") or 0)
    tags = {str(k): str(v) for k, v in (env.get("tags") or {}).items()}
    details = BatchEnvironmentDetails(
        instance_types=types,
        type=env.get("type"),
        compute_type=compute.get("type"),
        min_vcpus=compute.get("minvCpus"),
        max_vcpus=compute.get("maxvCpus"),
        desired_vcpus=desired,
        status=env.get("status"),
        job_queues=[BatchJobQueue.model_validate(q) for q in queues],
        catalog=typ.facts,
        ecs_cluster_arn=env.get("ecsClusterArn"),
        instance_ids=instance_ids,
    )
    return typed_resource(
        typ,
        arn=str(env["computeEnvironmentArn"]),
        kind="batch_compute_environment",
        name=str(env["computeEnvironmentName"]),
        instance_type=instance_type,
        instance_count=desired // int(vcpu) if vcpu else 0,
        state=env.get("state"),
        tags=tags,
        details=details,
    )


def _batch_type_facts(name: str, reader: TypeFactsReader | None = None) -> TypeFacts:
    """Batch accepts whole families (``inf2``) and ``optimal`` beside exact types."""
    if "." in name:
        return (reader or TypeFactsReader(None)).facts(name)
    platform = get_catalog().platform_of_family(name)
    return TypeFacts(platform or "cpu", platform is None and name != "optimal", {})
