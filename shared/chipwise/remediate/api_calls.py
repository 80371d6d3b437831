"""What a remediation is made of: the finding's facts it starts from, the AWS calls it makes (each with its undo),
the refusal a guard raises, and the one place a call is made."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from chipwise.aws import AwsContext

MARK_TAG = "chipwise:remediation"

# The services remediation calls, by the name an ApiCall stores (boto3's client name).
SERVICES = ("ec2", "sagemaker", "scheduler", "application-autoscaling", "autoscaling", "eks")


@dataclass(frozen=True)
class ApiCall:
    """One AWS call, as made and as stored: ``ec2.StopInstances(InstanceIds=['i-0abc'])``."""

    service: str  # one of SERVICES
    operation: str
    params: dict[str, Any]

    def as_json(self) -> dict[str, Any]:
        return {"service": self.service, "operation": self.operation, "params": self.params}

    @classmethod
    def from_json(cls, value: dict[str, Any]) -> ApiCall:
        return cls(str(value["service"]), str(value["operation"]), dict(value["params"]))

    def __str__(self) -> str:
        args = ", ".join(f"{k}={v!r}" for k, v in self.params.items())
        return f"{self.service}.{self.operation}({args})"


@dataclass(frozen=True)
class FindingFacts:
    """What the scan recorded and the step needs (a plain copy of the stored finding's columns)."""

    finding_id: str
    rule_id: str
    resource_arn: str  # an ARN AWS accepts: the endpoint's for a variant, the component's own for a component
    resource_variant: str | None  # the production variant, for one variant of a multi-variant endpoint
    resource_kind: str
    instance_type: str | None
    instance_count: int
    recommendation: dict[str, Any]
    evidence: dict[str, Any]
    last_seen: datetime
    details: dict[str, Any] = field(default_factory=dict)  # the stored resource's details (tags, node group)


@dataclass
class RemediationPlan:
    """The step for one finding: the calls in order, each with its undo, and the state they were planned from."""

    action: str
    resource: str  # what a person calls it: the instance id, endpoint/variant, the component
    calls: list[ApiCall] = field(default_factory=list)
    undo: list[ApiCall] = field(default_factory=list)  # undo[i] undoes calls[i]
    before: dict[str, Any] = field(default_factory=dict)


class GuardRefusal(Exception):
    """The step must not run now; the message says why (stored as a refusal)."""


def call(aws: AwsContext, api: ApiCall) -> None:
    """Make one call through the cached factory's clients (only the services remediation touches)."""
    if api.service not in SERVICES:
        raise ValueError(f"remediation makes no {api.service} calls")
    client: Any = aws.client(api.service)  # type: ignore[call-overload]  # one of SERVICES
    operation: dict[str, str] = client.meta.method_to_api_mapping  # {"stop_instances": "StopInstances", ...}
    method = next(name for name, op in operation.items() if op == api.operation)
    getattr(client, method)(**api.params)


def ec2_mark(instance_id: str, finding_id: str) -> tuple[ApiCall, ApiCall]:
    """The mark on an instance (the opt-in role acts only on a marked resource) and its removal."""
    return (
        ApiCall("ec2", "CreateTags", {"Resources": [instance_id], "Tags": [{"Key": MARK_TAG, "Value": finding_id}]}),
        ApiCall("ec2", "DeleteTags", {"Resources": [instance_id], "Tags": [{"Key": MARK_TAG}]}),
    )


def sagemaker_mark(arn: str, finding_id: str) -> tuple[ApiCall, ApiCall]:
    """The mark on a SageMaker endpoint and its removal."""
    return (
        ApiCall("sagemaker", "AddTags", {"ResourceArn": arn, "Tags": [{"Key": MARK_TAG, "Value": finding_id}]}),
        ApiCall("sagemaker", "DeleteTags", {"ResourceArn": arn, "TagKeys": [MARK_TAG]}),
    )


Reader = Callable[[], Any]
