"""Issue 35's known gap: a managed EC2 compute environment tied to the instances it launched, the way AWS documents
it (DescribeComputeEnvironments names its ``ecsClusterArn``; each instance Batch launches registers in that cluster:
ECS ListContainerInstances, then DescribeContainerInstances gives its ``ec2InstanceId``). Every answer below goes
through botocore's Stubber, which checks it against the service's documented output shape."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime
from typing import Any

import pytest
from batch_stubs import ACCOUNT, REGION, Stubs, container_instance, stubbed

from chipwise.aws import AwsContext
from chipwise.collect.inventory.sources.batch_compute_environments import ECS_DESCRIBE_LIMIT, collect_batch
from chipwise.models.resources import BatchEnvironmentDetails

CLUSTER = f"arn:aws:ecs:{REGION}:{ACCOUNT}:cluster/AWSBatch-trn1-pool-5b7c3f0e-7a3d-3c1b-9e8b-1f2a3b4c5d6e"
WINDOW = datetime(2026, 11, 15, tzinfo=UTC)


def _environment(name: str, compute_type: str, *, cluster: str | None = CLUSTER, **extra: Any) -> dict[str, Any]:
    env: dict[str, Any] = {
        "computeEnvironmentName": name,
        "computeEnvironmentArn": f"arn:aws:batch:{REGION}:{ACCOUNT}:compute-environment/{name}",
        "type": "MANAGED",
        "state": "ENABLED",
        "status": "VALID",
        "computeResources": {
            "type": compute_type,
            "maxvCpus": 256,
            "subnets": ["subnet-0a1b2c3d"],
            **({"minvCpus": 128, "desiredvCpus": 128, "instanceTypes": ["trn1.32xlarge"]} if "FARGATE" not in
               compute_type else {}),
        },
        **extra,
    }  # fmt: skip
    if cluster is not None:
        env["ecsClusterArn"] = cluster
    return env


@pytest.fixture
def stubs() -> Iterator[Stubs]:
    with stubbed() as found:
        yield found


def _details(aws: AwsContext) -> tuple[dict[str, BatchEnvironmentDetails], list[Any]]:
    inventory = collect_batch(aws, ACCOUNT, WINDOW)
    found = {}
    for r in inventory.resources:
        assert isinstance(r.details, BatchEnvironmentDetails)
        found[r.name] = r.details
    return found, inventory.problems


def test_a_managed_ec2_environment_records_the_instances_of_its_ecs_cluster(stubs: Stubs) -> None:
    # Given a managed EC2 environment whose cluster holds two container instances (over two ListContainerInstances
    # pages), a Fargate environment (no instance of the account's) and an EKS one (its nodes are in its EKS cluster)
    fargate = _environment("cpu-fargate", "FARGATE")
    eks = _environment("gpu-eks", "EC2", cluster=None, containerOrchestrationType="EKS")
    stubs.environments(_environment("trn1-pool", "EC2"), fargate, eks)
    first, second = container_instance(1, "i-0bbbbbbbbbbbbbbbb"), container_instance(2, "i-0aaaaaaaaaaaaaaaa")
    stubs.ecs.add_response(
        "list_container_instances",
        {"containerInstanceArns": [first["containerInstanceArn"]], "nextToken": "page-2"},
        {"cluster": CLUSTER},
    )
    stubs.ecs.add_response(
        "list_container_instances",
        {"containerInstanceArns": [second["containerInstanceArn"]]},
        {"cluster": CLUSTER, "nextToken": "page-2"},
    )
    arns = [first["containerInstanceArn"], second["containerInstanceArn"]]
    stubs.ecs.add_response(
        "describe_container_instances",
        {"containerInstances": [first, second], "failures": []},
        {"cluster": CLUSTER, "containerInstances": arns},
    )
    # When the Batch inventory reads them
    found, problems = _details(stubs.aws)
    # Then the EC2 environment names its cluster and the instance ids it launched (sorted); the others none,
    # without an ECS call (the Stubber refuses any call it was not given)
    assert problems == []
    assert found["trn1-pool"].ecs_cluster_arn == CLUSTER
    assert found["trn1-pool"].instance_ids == ["i-0aaaaaaaaaaaaaaaa", "i-0bbbbbbbbbbbbbbbb"]
    assert found["cpu-fargate"].instance_ids is None and found["gpu-eks"].instance_ids is None


def test_an_environment_with_no_container_instance_records_none_running(stubs: Stubs) -> None:
    stubs.environments(_environment("trn1-pool", "SPOT"))
    stubs.ecs.add_response("list_container_instances", {"containerInstanceArns": []}, {"cluster": CLUSTER})
    found, problems = _details(stubs.aws)
    # an empty list (read: nothing running), not None (unknown); no DescribeContainerInstances with nothing to ask
    assert found["trn1-pool"].instance_ids == [] and problems == []


def test_describe_container_instances_is_asked_100_at_a_time(stubs: Stubs) -> None:
    stubs.environments(_environment("trn1-pool", "EC2"))
    instances = [container_instance(n, f"i-{n:017x}") for n in range(ECS_DESCRIBE_LIMIT + 1)]
    arns = [c["containerInstanceArn"] for c in instances]
    stubs.ecs.add_response("list_container_instances", {"containerInstanceArns": arns}, {"cluster": CLUSTER})
    for chunk in (instances[:ECS_DESCRIBE_LIMIT], instances[ECS_DESCRIBE_LIMIT:]):
        stubs.ecs.add_response(
            "describe_container_instances",
            {"containerInstances": chunk},
            {"cluster": CLUSTER, "containerInstances": [c["containerInstanceArn"] for c in chunk]},
        )
    found, _ = _details(stubs.aws)
    assert found["trn1-pool"].instance_ids == sorted(c["ec2InstanceId"] for c in instances)


@pytest.mark.parametrize("refused", ["list_container_instances", "describe_container_instances"])
def test_a_refused_ecs_call_keeps_the_environment_without_instances_and_says_so(stubs: Stubs, refused: str) -> None:
    # Given ECS refusing one of the two calls
    stubs.environments(_environment("trn1-pool", "EC2"))
    arn = container_instance(1, "i-0aaaaaaaaaaaaaaaa")["containerInstanceArn"]
    if refused == "list_container_instances":
        stubs.ecs.add_client_error(refused, "AccessDeniedException", "not authorized: ecs:ListContainerInstances")
    else:
        stubs.ecs.add_response("list_container_instances", {"containerInstanceArns": [arn]}, {"cluster": CLUSTER})
        stubs.ecs.add_client_error(refused, "AccessDeniedException", "not authorized: ecs:DescribeContainerInstances")
    # When the Batch inventory reads the environment
    found, problems = _details(stubs.aws)
    # Then it is recorded (its jobs and settings were read) with its instances unknown, never guessed, and the
    # problem names what could not be read
    assert found["trn1-pool"].instance_ids is None
    (problem,) = problems
    assert problem.recorded and problem.code == "AccessDeniedException"
    assert "its instances (ECS container instances)" in problem.message
