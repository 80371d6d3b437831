"""AWS Batch job definitions and submissions for benchmark runs.

Neuron devices reach a Batch container only as host devices (``linuxParameters.devices``): Batch's resource
types are GPU, VCPU and MEMORY, nothing for Neuron (aws.md §4.1). So there is one job definition per instance
type, mapping ``/dev/neuron0..N-1`` for the type's Neuron device count from the catalog, with vCPU and memory
sized to the instance. Registration is idempotent: the definition carries a hash of its content as a tag, and
a new revision is registered only when the content changed.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from decimal import ROUND_DOWN, Decimal
from typing import TYPE_CHECKING, Any

from chipwise.catalog import InstanceType
from chipwise.models.benchmark import (
    ACCOUNT_ID_TAG,
    ATTEMPT_TAG,
    FINDING_ID_TAG,
    ROLE_TAG,
    RULE_ID_TAG,
    RUN_ID_TAG,
    TARGET_TAG,
    BenchmarkParameters,
    BenchmarkRole,
)
from chipwise.settings import Settings

if TYPE_CHECKING:
    from mypy_boto3_batch import BatchClient

SPEC_HASH_TAG = "chipwise:spec-sha256"
MANAGED_TAG = "chipwise:managed"
# ECS registers less memory than the instance's nominal size (kernel, ECS agent, reserved memory); asking for
# 85 % keeps the job schedulable on every accelerated size while leaving the model almost all of it.
SCHEDULABLE_MEMORY_FRACTION = Decimal("0.85")
DEVICE_PERMISSIONS = ["READ", "WRITE", "MKNOD"]


@dataclass(frozen=True)
class JobDefinitionSpec:
    """A job definition as it will be registered: its name and RegisterJobDefinition arguments."""

    name: str
    body: dict[str, Any]

    @property
    def digest(self) -> str:
        """A hash of the content (name included), stored as a tag to tell whether AWS already has it."""
        canonical = json.dumps({"name": self.name, **self.body}, sort_keys=True, separators=(",", ":"))
        return hashlib.sha256(canonical.encode()).hexdigest()


def job_definition_name(instance: InstanceType, role: BenchmarkRole) -> str:
    """``chipwise-bench-inf2-48xlarge`` (``chipwise-baseline-g5-2xlarge`` for a GPU baseline)."""
    prefix = "chipwise-bench" if role == "target" else "chipwise-baseline"
    return f"{prefix}-{instance.ec2_name.replace('.', '-')}"


def neuron_devices(count: int) -> list[dict[str, Any]]:
    """``/dev/neuron0`` .. ``/dev/neuron{count-1}``, read-write, as host devices."""
    return [
        {"hostPath": f"/dev/neuron{i}", "containerPath": f"/dev/neuron{i}", "permissions": list(DEVICE_PERMISSIONS)}
        for i in range(count)
    ]


def job_definition_spec(instance: InstanceType, role: BenchmarkRole, settings: Settings) -> JobDefinitionSpec:
    """The job definition for benchmark jobs on ``instance`` (an EC2 type: Batch runs on EC2 hosts).

    Neuron types map every Neuron device and lift the memlock limit (the Neuron runtime pins host memory);
    GPU baseline types ask Batch for every GPU instead.
    """
    if instance.sagemaker:
        raise ValueError(f"{instance.name}: Batch jobs run on EC2 types, not SageMaker ml. types")
    memory_mib = int((instance.memory_gib * 1024 * SCHEDULABLE_MEMORY_FRACTION).to_integral_value(ROUND_DOWN))
    requirements = [{"type": "VCPU", "value": str(instance.vcpu)}, {"type": "MEMORY", "value": str(memory_mib)}]
    container: dict[str, Any] = {
        "image": settings.benchmark_image if instance.neuron else settings.benchmark_gpu_image,
        "command": BenchmarkParameters.command_arguments(),
        "resourceRequirements": requirements,
        "ulimits": [{"name": "memlock", "softLimit": -1, "hardLimit": -1}],
    }
    if instance.neuron:
        container["linuxParameters"] = {"devices": neuron_devices(instance.neuron_devices)}
    elif instance.accelerator_count:
        requirements.append({"type": "GPU", "value": str(instance.accelerator_count)})
    if settings.benchmark_job_role_arn:
        container["jobRoleArn"] = settings.benchmark_job_role_arn
    body: dict[str, Any] = {
        "type": "container",
        "parameters": dict.fromkeys(BenchmarkParameters.model_fields, ""),
        "containerProperties": container,
        "timeout": {"attemptDurationSeconds": settings.benchmark_timeout_minutes * 60},
        # One attempt per job: Chipwise retries itself, so every attempt is stored with its own reason.
        "retryStrategy": {"attempts": 1},
        "propagateTags": True,
        "platformCapabilities": ["EC2"],
    }
    return JobDefinitionSpec(name=job_definition_name(instance, role), body=body)


def ensure_job_definition(batch: BatchClient, spec: JobDefinitionSpec) -> str:
    """The ARN of an ACTIVE definition with this content: the latest revision when its hash tag matches,
    else a newly registered revision."""
    found = batch.describe_job_definitions(jobDefinitionName=spec.name, status="ACTIVE")["jobDefinitions"]
    latest = max(found, key=lambda d: d["revision"], default=None)
    if latest is not None and latest.get("tags", {}).get(SPEC_HASH_TAG) == spec.digest:
        return latest["jobDefinitionArn"]
    tags = {SPEC_HASH_TAG: spec.digest, MANAGED_TAG: "true"}
    registered = batch.register_job_definition(jobDefinitionName=spec.name, tags=tags, **spec.body)
    return registered["jobDefinitionArn"]


class JobDefinitions:
    """Job definitions ensured at most once per dispatch (one describe per instance type and role)."""

    def __init__(self, batch: BatchClient, settings: Settings) -> None:
        self._batch = batch
        self._settings = settings
        self._arns: dict[str, str] = {}

    def arn_for(self, instance: InstanceType, role: BenchmarkRole) -> str:
        spec = job_definition_spec(instance, role, self._settings)
        if spec.name not in self._arns:
            self._arns[spec.name] = ensure_job_definition(self._batch, spec)
        return self._arns[spec.name]


@dataclass(frozen=True)
class JobLabels:
    """What the job's tags say about it (the link from a Batch job back to its run and finding)."""

    rule_id: str
    account_id: str
    attempt: int

    def tags(self, parameters: BenchmarkParameters) -> dict[str, str]:
        return {
            RUN_ID_TAG: parameters.run_id,
            FINDING_ID_TAG: parameters.finding_id,
            RULE_ID_TAG: self.rule_id,
            ACCOUNT_ID_TAG: self.account_id,
            ROLE_TAG: parameters.role,
            ATTEMPT_TAG: str(self.attempt),
            TARGET_TAG: parameters.priced_as,
        }


def job_name(parameters: BenchmarkParameters) -> str:
    """``chipwise-inf2-xlarge-1a2b3c4d``: readable in the console, unique per run."""
    return f"chipwise-{parameters.instance_type.replace('.', '-')}-{parameters.run_id[:8]}"


def submit_job(
    batch: BatchClient, *, queue: str, definition_arn: str, parameters: BenchmarkParameters, labels: JobLabels
) -> str:
    """Submit one benchmark job; returns its job id."""
    response = batch.submit_job(
        jobName=job_name(parameters),
        jobQueue=queue,
        jobDefinition=definition_arn,
        parameters=parameters.to_batch(),
        tags=labels.tags(parameters),
        propagateTags=True,
    )
    return response["jobId"]
