"""botocore Stubbers for the Batch, ECS and EC2 clients of one context (each answer checked against the service's
documented output shape), and an ECS container instance as DescribeContainerInstances returns it: for the tests of a
compute environment tied to the instances it launched."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import boto3
from botocore.stub import Stubber

from chipwise.aws import AwsContext

REGION = "us-east-1"
ACCOUNT = "123456789012"


class Stubs:
    def __init__(self) -> None:
        session = boto3.Session(aws_access_key_id="test", aws_secret_access_key="test", region_name=REGION)
        self.aws = AwsContext(session=session, region=REGION)
        self.batch = Stubber(self.aws.client("batch"))
        self.ecs = Stubber(self.aws.client("ecs"))
        self.ec2 = Stubber(self.aws.client("ec2"))

    def environments(self, *envs: dict[str, Any]) -> None:
        self.batch.add_response("describe_job_queues", {"jobQueues": []}, {})
        self.batch.add_response("describe_compute_environments", {"computeEnvironments": list(envs)}, {})


@contextmanager
def stubbed() -> Iterator[Stubs]:
    """The three Stubbers active; on leaving, every answer given must have been asked for."""
    found = Stubs()
    with found.batch, found.ecs, found.ec2:
        yield found
        for stub in (found.batch, found.ecs, found.ec2):
            stub.assert_no_pending_responses()


def container_instance(number: int, instance_id: str, environment: str = "trn1-pool") -> dict[str, Any]:
    """One container instance of ``environment``'s ECS cluster: the EC2 instance ``instance_id``."""
    return {
        "containerInstanceArn": f"arn:aws:ecs:{REGION}:{ACCOUNT}:container-instance/{environment}/{number:032x}",
        "ec2InstanceId": instance_id,
        "status": "ACTIVE",
        "agentConnected": True,
        "runningTasksCount": 0,
        "pendingTasksCount": 0,
    }
