"""The checks before acting (issue 36): fresh evidence or nothing (no datapoints since the scan, stale ones, a busy
CPU on a "GPU idle" box, an endpoint whose instance metrics stopped: refused with the reason), the protect tag in
every accepted spelling, the right step per kind (an EKS managed node group's node lowers the node group's desired
size and the rollback restores it; an Auto Scaling group member lowers the group; a loose Kubernetes node is
refused), and a dry run from the store with no AWS credentials at all."""

from __future__ import annotations

import os
import subprocess
import sys
from datetime import timedelta
from pathlib import Path
from typing import Any

import boto3
import pytest
from remediate_factories import (
    ACCOUNT,
    REGION,
    add_finding,
    endpoint,
    gpu_instance,
    gpu_utilisation,
    idle_instance_finding,
    instance_state,
)
from sqlalchemy.orm import Session
from test_remediate_apply import audit, idle_endpoint_finding, run, undo

from chipwise.clock import utcnow
from chipwise.remediate.guards import is_protected
from chipwise.store.tables import Resource
from chipwise_devkit.emulator import Emulator
from chipwise_devkit.emulator.server import MetricPoint

CHIPWISE = Path(sys.executable).with_name("chipwise")
MARK = "chipwise:remediation"


def cpu(emulator: Emulator, instance_id: str, value: float, hours_ago: float = 1) -> None:
    at = utcnow() - timedelta(hours=hours_ago)
    emulator.seed_metrics([MetricPoint("AWS/EC2", "CPUUtilization", {"InstanceId": instance_id}, at, value, "Percent")])


# --- fresh evidence or nothing -------------------------------------------------------------------------------------


def test_no_gpu_datapoints_since_the_scan_is_refused(aws: Emulator, session: Session) -> None:
    instance = gpu_instance()
    finding = idle_instance_finding(session, instance)  # scanned two hours ago
    gpu_utilisation(aws, instance, 0.5, hours_ago=30)  # what the scan saw; nothing since (the agent stopped)
    outcome = run(session, finding, approved=True)
    assert outcome.status == "refused"
    assert "no GPU utilisation datapoints since the scan" in outcome.message
    assert instance_state(instance) == ("running", {})
    assert audit(session, finding) == [("refusal", "refused", "alice")]


def test_stale_datapoints_are_refused(aws: Emulator, session: Session) -> None:
    instance = gpu_instance()
    finding = add_finding(
        session,
        rule_id="gpu_idle",
        arn=f"arn:aws:ec2:{REGION}:{ACCOUNT}:instance/{instance}",
        kind="ec2_instance",
        name=instance,
        instance_type="g5.xlarge",
        count=1,
        recommendation={"action": "stop"},
        seen=utcnow() - timedelta(hours=9),
    )
    gpu_utilisation(aws, instance, 0.5, hours_ago=8)  # after the scan, but nothing in the last 8 hours
    outcome = run(session, finding, approved=True)
    assert outcome.status == "refused" and "stale evidence" in outcome.message
    assert instance_state(instance) == ("running", {})


def test_a_busy_cpu_on_a_gpu_idle_box_is_refused(aws: Emulator, session: Session) -> None:
    instance = gpu_instance()
    finding = idle_instance_finding(session, instance)
    gpu_utilisation(aws, instance, 0.5)
    cpu(aws, instance, 97.0)
    outcome = run(session, finding, approved=True)
    assert outcome.status == "refused"
    assert "CPU peaked at 97.0 % since the scan" in outcome.message and "contradicts idle" in outcome.message
    assert instance_state(instance) == ("running", {})


def test_a_busy_cpu_with_no_gpu_metric_is_refused(aws: Emulator, session: Session) -> None:
    instance = gpu_instance()
    finding = idle_instance_finding(session, instance)
    cpu(aws, instance, 97.0)
    outcome = run(session, finding, approved=True)
    assert outcome.status == "refused" and "no GPU utilisation datapoints since the scan" in outcome.message


def test_an_endpoint_whose_instance_metrics_stopped_is_refused(aws: Emulator, session: Session) -> None:
    arn = endpoint("idle-ep", count=2)  # no requests (no Invocations datapoints) and no CPU datapoints either
    outcome = run(session, idle_endpoint_finding(session, arn), approved=True)
    assert outcome.status == "refused"
    assert "has no CPUUtilization (/aws/sagemaker/Endpoints) datapoints since the scan" in outcome.message


# --- the protect tag -----------------------------------------------------------------------------------------------

PROTECTED = [
    ("Chipwise:Protect", "true"),
    ("CHIPWISE:PROTECT", "True"),
    ("chipwise:protect", "yes"),
    ("chipwise:protect", "1"),
    ("chipwise:protect ", "true"),
    (" chipwise:protect", " YES "),
    ("chipwise:protect", "TRUE"),
]


@pytest.mark.parametrize(("key", "value"), PROTECTED, ids=[f"{k!r}={v!r}" for k, v in PROTECTED])
def test_every_spelling_of_the_protect_tag_is_refused(aws: Emulator, session: Session, key: str, value: str) -> None:
    instance = gpu_instance(tags={key: value})
    finding = idle_instance_finding(session, instance)
    gpu_utilisation(aws, instance, 0.5)
    outcome = run(session, finding, approved=True)
    assert outcome.status == "refused" and "chipwise:protect=true" in outcome.message
    assert instance_state(instance) == ("running", {key: value})


def test_other_values_do_not_protect() -> None:
    assert [is_protected({"chipwise:protect": v}) for v in ("false", "no", "0", "", "truthy")] == [False] * 5
    assert not is_protected({"chipwise:protected": "true"}) and not is_protected({"protect": "true"})


# --- the right step per kind ---------------------------------------------------------------------------------------


def _node_group(desired: int = 2, minimum: int = 2) -> str:
    eks = boto3.client("eks", region_name=REGION)
    eks.create_cluster(
        name="ml", roleArn=f"arn:aws:iam::{ACCOUNT}:role/eks", resourcesVpcConfig={"subnetIds": ["subnet-1"]}
    )
    created = eks.create_nodegroup(
        clusterName="ml",
        nodegroupName="gpu",
        nodeRole=f"arn:aws:iam::{ACCOUNT}:role/node",
        subnets=["subnet-1"],
        scalingConfig={"minSize": minimum, "maxSize": 4, "desiredSize": desired},
        instanceTypes=["g5.xlarge"],
    )
    return str(created["nodegroup"]["nodegroupArn"])


def _node_group_now() -> tuple[dict[str, int], dict[str, str]]:
    found = boto3.client("eks", region_name=REGION).describe_nodegroup(clusterName="ml", nodegroupName="gpu")
    return dict(found["nodegroup"]["scalingConfig"]), dict(found["nodegroup"].get("tags") or {})


EKS_NODE = {"eks:cluster-name": "ml", "eks:nodegroup-name": "gpu", "kubernetes.io/cluster/ml": "owned"}


def test_an_eks_node_lowers_its_node_group_and_the_rollback_restores_it(aws: Emulator, session: Session) -> None:
    _node_group(desired=2, minimum=2)
    instance = gpu_instance(tags={**EKS_NODE, "aws:autoscaling:groupName": "eks-gpu-1858ca64"})
    finding = idle_instance_finding(session, instance)
    gpu_utilisation(aws, instance, 0.5)
    outcome = run(session, finding, approved=True)
    assert outcome.status == "applied", outcome.message
    assert [str(c).split("(")[0] for c in outcome.calls] == ["eks.TagResource", "eks.UpdateNodegroupConfig"]
    assert outcome.calls[1].params == {
        "clusterName": "ml",
        "nodegroupName": "gpu",
        "scalingConfig": {"minSize": 1, "maxSize": 4, "desiredSize": 1},  # the minimum lowered with it
    }
    assert _node_group_now() == ({"minSize": 1, "maxSize": 4, "desiredSize": 1}, {MARK: finding})
    assert instance_state(instance)[0] == "running"  # never stopped directly: the node group removes a node
    assert undo(session, finding).status == "rolled_back"
    assert _node_group_now() == ({"minSize": 2, "maxSize": 4, "desiredSize": 2}, {})
    assert audit(session, finding) == [("apply", "applied", "alice"), ("rollback", "rolled_back", "bob")]


def test_an_auto_scaling_group_member_lowers_its_group(aws: Emulator, session: Session) -> None:
    autoscaling = boto3.client("autoscaling", region_name=REGION)
    autoscaling.create_launch_configuration(
        LaunchConfigurationName="lc", ImageId="ami-12345678", InstanceType="g5.xlarge"
    )
    autoscaling.create_auto_scaling_group(
        AutoScalingGroupName="fleet",
        LaunchConfigurationName="lc",
        MinSize=2,
        MaxSize=4,
        DesiredCapacity=2,
        AvailabilityZones=[f"{REGION}a"],
    )
    group = autoscaling.describe_auto_scaling_groups(AutoScalingGroupNames=["fleet"])["AutoScalingGroups"][0]
    instance = group["Instances"][0]["InstanceId"]
    assert instance_state(instance)[1].get("aws:autoscaling:groupName") == "fleet"  # as AWS tags its members
    finding = idle_instance_finding(session, instance)
    gpu_utilisation(aws, instance, 0.5)
    outcome = run(session, finding, approved=True)
    assert outcome.status == "applied", outcome.message
    assert [c.operation for c in outcome.calls] == ["CreateOrUpdateTags", "UpdateAutoScalingGroup"]
    assert outcome.calls[1].params == {"AutoScalingGroupName": "fleet", "MinSize": 1, "DesiredCapacity": 1}
    group = autoscaling.describe_auto_scaling_groups(AutoScalingGroupNames=["fleet"])["AutoScalingGroups"][0]
    assert (group["DesiredCapacity"], group["MinSize"]) == (1, 1)
    assert undo(session, finding).status == "rolled_back"
    group = autoscaling.describe_auto_scaling_groups(AutoScalingGroupNames=["fleet"])["AutoScalingGroups"][0]
    assert (group["DesiredCapacity"], group["MinSize"]) == (2, 2)
    assert MARK not in {t["Key"] for t in group["Tags"]}


def test_a_kubernetes_node_in_no_group_is_refused(aws: Emulator, session: Session) -> None:
    instance = gpu_instance(tags={"kubernetes.io/cluster/ml": "owned", "karpenter.sh/nodepool": "gpu"})
    finding = idle_instance_finding(session, instance)
    gpu_utilisation(aws, instance, 0.5)
    outcome = run(session, finding, approved=True)
    assert outcome.status == "refused" and "in no node group" in outcome.message
    assert instance_state(instance)[0] == "running"


# --- a dry run from the store, offline -----------------------------------------------------------------------------


def _offline(tmp_path: Path, url: str, *args: str) -> subprocess.CompletedProcess[str]:
    """The CLI with no AWS credentials, profile or endpoint at all (and a config file that does not exist)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("AWS_", "CHIPWISE_"))}
    env.update(
        CHIPWISE_DATABASE_URL=url,
        AWS_SHARED_CREDENTIALS_FILE=str(tmp_path / "none"),
        AWS_CONFIG_FILE=str(tmp_path / "none"),
        AWS_EC2_METADATA_DISABLED="true",
        COLUMNS="250",
    )
    return subprocess.run(
        [str(CHIPWISE), *args], capture_output=True, text=True, env=env, cwd=tmp_path, timeout=120, check=False
    )


def test_a_dry_run_needs_no_aws_credentials(tmp_path: Path, sqlite_url: str) -> None:
    from chipwise.store.session import get_session_factory

    instance = "i-0abc1234def567890"
    node = "i-0feed1234def56789"
    with get_session_factory(sqlite_url).begin() as session:
        finding = idle_instance_finding(session, instance)
        eks_finding = idle_instance_finding(session, node)
        arn = f"arn:aws:ec2:{REGION}:{ACCOUNT}:instance/{node}"
        session.add(_stored_instance(arn, {**EKS_NODE}))
    done = _offline(tmp_path, sqlite_url, "findings", "apply", finding[:8], "--dry-run")
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0] == f"dry run: instance {instance} ({finding[:8]}) would get these calls:"
    assert f"  ec2.StopInstances(InstanceIds=['{instance}'])" in lines
    assert "with no AWS call: the live re-check runs at apply time" in done.stdout
    node_run = _offline(tmp_path, sqlite_url, "findings", "apply", eks_finding[:8], "--dry-run")
    assert node_run.returncode == 0, node_run.stderr
    assert "eks.UpdateNodegroupConfig(clusterName='ml', nodegroupName='gpu'" in node_run.stdout
    assert "StopInstances" not in node_run.stdout
    live = _offline(tmp_path, sqlite_url, "findings", "apply", finding[:8], "--yes")
    assert live.returncode == 1 and "Traceback" not in live.stderr  # acting needs credentials: one line


def _stored_instance(arn: str, tags: dict[str, str]) -> Any:
    return Resource(
        account_id=ACCOUNT,
        region=REGION,
        arn=arn,
        kind="ec2_instance",
        name=arn.rsplit("/", 1)[-1],
        instance_type="g5.xlarge",
        instance_count=1,
        platform="nvidia",
        state="running",
        tags=tags,
        details={"instance_id": arn.rsplit("/", 1)[-1], "eks_cluster": "ml"},
    )
