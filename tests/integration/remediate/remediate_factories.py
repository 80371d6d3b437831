"""Resources on the emulator and the findings a scan would have stored for them (for the remediation tests)."""

from __future__ import annotations

import uuid
from datetime import datetime, timedelta
from decimal import Decimal
from typing import Any

import boto3
from botocore.config import Config
from sqlalchemy.orm import Session

from chipwise.clock import utcnow
from chipwise.store.tables import Account, Finding
from chipwise_devkit.emulator import Emulator
from chipwise_devkit.emulator.server import MetricPoint

ACCOUNT = "123456789012"
REGION = "us-east-1"
NO_RETRY = Config(retries={"mode": "standard", "total_max_attempts": 1})
IMAGE = "763104351884.dkr.ecr.us-east-1.amazonaws.com/djl-inference:0.31.0-lmi13.0.0-cu124"


def ec2() -> Any:
    return boto3.client("ec2", region_name=REGION, config=NO_RETRY)


def sm() -> Any:
    return boto3.client("sagemaker", region_name=REGION, config=NO_RETRY)


def add_account(session: Session) -> None:
    if session.get(Account, ACCOUNT) is None:
        session.add(Account(account_id=ACCOUNT, name="Acme AI"))
        session.flush()


def add_finding(
    session: Session,
    *,
    rule_id: str,
    arn: str,
    kind: str,
    name: str,
    variant: str = "",
    instance_type: str,
    count: int,
    recommendation: dict[str, Any],
    evidence: dict[str, Any] | None = None,
    seen: datetime | None = None,
) -> str:
    """A stored open finding, last seen (scanned) two hours ago unless ``seen`` says otherwise."""
    add_account(session)
    finding_id = str(uuid.uuid4())
    session.add(
        Finding(
            id=finding_id,
            account_id=ACCOUNT,
            region=REGION,
            rule_id=rule_id,
            resource_arn=arn,
            resource_variant=variant,
            resource_kind=kind,
            resource_name=name,
            instance_type=instance_type,
            instance_count=count,
            monthly_cost_usd=Decimal("734.40"),
            estimated_monthly_savings_usd=Decimal("734.40"),
            measured_monthly_savings_usd=None,
            recommendation=recommendation,
            confidence="high",
            signals_used=[],
            signals_missing=[],
            effort="none",
            break_even_months=None,
            summary=f"{name} is idle.",
            evidence=evidence or {},
            status="open",
            first_seen=utcnow() - timedelta(days=8),
            last_seen=seen or utcnow() - timedelta(hours=2),
        )
    )
    session.flush()
    return finding_id


# --- EC2 ---------------------------------------------------------------------------------------------------------


def gpu_instance(tags: dict[str, str] | None = None, instance_type: str = "g5.xlarge") -> str:
    tag_spec = [{"ResourceType": "instance", "Tags": [{"Key": k, "Value": v} for k, v in (tags or {}).items()]}]
    reservation = ec2().run_instances(
        ImageId="ami-12345678",
        InstanceType=instance_type,
        MinCount=1,
        MaxCount=1,
        **({"TagSpecifications": tag_spec} if tags else {}),
    )
    return str(reservation["Instances"][0]["InstanceId"])


def instance_state(instance_id: str) -> tuple[str, dict[str, str]]:
    found = ec2().describe_instances(InstanceIds=[instance_id])["Reservations"][0]["Instances"][0]
    return found["State"]["Name"], {t["Key"]: t["Value"] for t in found.get("Tags", [])}


def idle_instance_finding(session: Session, instance_id: str, instance_type: str = "g5.xlarge") -> str:
    return add_finding(
        session,
        rule_id="gpu_idle",
        arn=f"arn:aws:ec2:{REGION}:{ACCOUNT}:instance/{instance_id}",
        kind="ec2_instance",
        name=instance_id,
        instance_type=instance_type,
        count=1,
        recommendation={"action": "stop"},
    )


def gpu_utilisation(emulator: Emulator, instance_id: str, value: float, hours_ago: float = 1) -> None:
    """The CloudWatch agent's busiest-GPU series for the instance (its documented nvidia_smi dimensions)."""
    dims = {"InstanceId": instance_id, "index": "0", "name": "NVIDIA A10G", "arch": "Ampere"}
    at = utcnow() - timedelta(hours=hours_ago)
    emulator.seed_metrics([MetricPoint("CWAgent", "nvidia_smi_utilization_gpu", dims, at, value, "Percent")])


# --- SageMaker -------------------------------------------------------------------------------------------------


def endpoint(name: str, *, count: int = 4, tags: dict[str, str] | None = None, for_components: bool = False) -> str:
    client = sm()
    client.create_model(
        ModelName=f"{name}-model",
        ExecutionRoleArn=f"arn:aws:iam::{ACCOUNT}:role/sagemaker",
        PrimaryContainer={"Image": IMAGE},
    )
    variant: dict[str, Any] = {
        "VariantName": "AllTraffic",
        "InstanceType": "ml.inf2.xlarge" if not for_components else "ml.g5.12xlarge",
        "InitialInstanceCount": count,
    }
    if not for_components:
        variant["ModelName"] = f"{name}-model"
    client.create_endpoint_config(EndpointConfigName=f"{name}-cfg", ProductionVariants=[variant])
    arn = str(
        client.create_endpoint(
            EndpointName=name,
            EndpointConfigName=f"{name}-cfg",
            Tags=[{"Key": k, "Value": v} for k, v in (tags or {}).items()],
        )["EndpointArn"]
    )
    return arn


def variant_count(name: str) -> int:
    return int(sm().describe_endpoint(EndpointName=name)["ProductionVariants"][0]["CurrentInstanceCount"])


def endpoint_tags(arn: str) -> dict[str, str]:
    return {t["Key"]: t["Value"] for t in sm().list_tags(ResourceArn=arn)["Tags"]}


def component(endpoint_name: str, name: str, copies: int = 2) -> None:
    sm().create_inference_component(
        InferenceComponentName=name,
        EndpointName=endpoint_name,
        VariantName="AllTraffic",
        Specification={
            "ModelName": f"{endpoint_name}-model",
            "Container": {"Image": IMAGE},
            "ComputeResourceRequirements": {"NumberOfAcceleratorDevicesRequired": 1, "MinMemoryRequiredInMb": 8192},
        },
        RuntimeConfig={"CopyCount": copies},
    )


def copies_of(name: str) -> int:
    return int(sm().describe_inference_component(InferenceComponentName=name)["RuntimeConfig"]["CurrentCopyCount"])


def invocations(emulator: Emulator, dims: dict[str, str], value: float, hours_ago: float = 1) -> None:
    at = utcnow() - timedelta(hours=hours_ago)
    emulator.seed_metrics([MetricPoint("AWS/SageMaker", "Invocations", dims, at, value, "None")])


def endpoint_cpu(emulator: Emulator, endpoint_name: str, value: float = 12.0, hours_ago: float = 1) -> None:
    """The endpoint's instance metric (what a live endpoint publishes every minute, requests or not)."""
    dims = {"EndpointName": endpoint_name, "VariantName": "AllTraffic"}
    at = utcnow() - timedelta(hours=hours_ago)
    emulator.seed_metrics([MetricPoint("/aws/sagemaker/Endpoints", "CPUUtilization", dims, at, value, "Percent")])


def component_cpu(emulator: Emulator, name: str, value: float = 3.0, hours_ago: float = 1) -> None:
    """An inference component's CPU, normalised (its documented /aws/sagemaker/InferenceComponents metric)."""
    dims = {"InferenceComponentName": name}
    at = utcnow() - timedelta(hours=hours_ago)
    emulator.seed_metrics(
        [MetricPoint("/aws/sagemaker/InferenceComponents", "CPUUtilizationNormalized", dims, at, value, "Percent")]
    )
