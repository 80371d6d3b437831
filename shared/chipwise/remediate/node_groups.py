"""An instance in a group is never stopped directly: its group would start a replacement (no saving, and on EKS its
pods evicted for nothing). The step lowers the group instead, by one instance:

- an EKS managed node group's node (tags ``eks:cluster-name`` and ``eks:nodegroup-name``): the node group's desired
  size, with ``eks:UpdateNodegroupConfig`` (``scalingConfig``; the minimum lowered with it when it would be above;
  EKS drains the node it removes). The rollback restores the scaling configuration as it was.
- any other instance of an Auto Scaling group (tag ``aws:autoscaling:groupName``: a self-managed Kubernetes node, a
  fleet): the group's desired capacity, with ``autoscaling:UpdateAutoScalingGroup``; the rollback restores it.

The group chooses which instance goes (its termination policy, or EKS's): one instance of the type, which is the
saving the finding counts. A Kubernetes node in no group (``kubernetes.io/cluster/<name>`` only: Karpenter, or
launched by hand) is refused: it is removed in Kubernetes, not by stopping it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from chipwise.aws import AwsContext
from chipwise.errors import NotFound
from chipwise.remediate.api_calls import MARK_TAG, ApiCall, FindingFacts, GuardRefusal, RemediationPlan
from chipwise.remediate.guards import read_again, refuse_protected

NODEGROUP_DESIRED, ASG_DESIRED = "nodegroup_desired", "asg_desired"
ASG_TAG = "aws:autoscaling:groupName"
UNREAD = "one fewer than it has at apply time"  # a dry run from the store: the live sizes are read by the apply
RESTORED = "as it was before the apply"
_K8S_CLUSTER_TAG = re.compile(r"^kubernetes\.io/cluster/(?P<name>.+)$")


@dataclass(frozen=True)
class InstanceGroup:
    """The group an instance belongs to: an EKS managed node group or an Auto Scaling group (None: a loose
    Kubernetes node)."""

    kind: str  # eks_nodegroup | autoscaling_group | kubernetes_node
    name: str  # the node group's or the Auto Scaling group's name; the cluster's for a loose node
    cluster: str | None = None


def instance_group(tags: dict[str, str]) -> InstanceGroup | None:
    """The group an instance's tags put it in, None for a stand-alone instance."""
    cluster, nodegroup = tags.get("eks:cluster-name"), tags.get("eks:nodegroup-name")
    if cluster and nodegroup:
        return InstanceGroup("eks_nodegroup", nodegroup, cluster)
    if tags.get(ASG_TAG):
        return InstanceGroup("autoscaling_group", tags[ASG_TAG])
    for key, value in tags.items():
        match = _K8S_CLUSTER_TAG.match(key)
        if match and value in {"owned", "shared"}:
            return InstanceGroup("kubernetes_node", match["name"], match["name"])
    return None


def plan_group_down(
    aws: AwsContext, finding: FindingFacts, group: InstanceGroup, instance_id: str, before: dict[str, Any]
) -> RemediationPlan:
    """One instance fewer in ``group`` (see the module docstring)."""
    if group.kind == "eks_nodegroup":
        return _plan_nodegroup(aws, finding, group, instance_id, before)
    if group.kind == "autoscaling_group":
        return _plan_asg(aws, finding, group, instance_id, before)
    raise GuardRefusal(
        f"instance {instance_id} is a node of the Kubernetes cluster {group.name} in no node group: remove it in "
        "Kubernetes (cordon, drain, then its provisioner), Chipwise does not stop it"
    )


def nodegroup_calls(
    finding_id: str, arn: str, cluster: str, nodegroup: str, scaling: dict[str, int] | None
) -> tuple[list[ApiCall], list[ApiCall]]:
    """The calls that take one node off an EKS node group's ``scaling`` (min, max, desired), and their undo
    (``scaling`` None: not read yet, a dry run from the store shows the change in words)."""
    update = {"clusterName": cluster, "nodegroupName": nodegroup}
    lower: dict[str, Any] | str = UNREAD
    if scaling is not None:
        desired = scaling["desiredSize"] - 1
        lower = {**scaling, "desiredSize": desired, "minSize": min(scaling["minSize"], desired)}
    return (
        [
            ApiCall("eks", "TagResource", {"resourceArn": arn, "tags": {MARK_TAG: finding_id}}),
            ApiCall("eks", "UpdateNodegroupConfig", {**update, "scalingConfig": lower}),
        ],
        [
            ApiCall("eks", "UntagResource", {"resourceArn": arn, "tagKeys": [MARK_TAG]}),
            ApiCall(
                "eks", "UpdateNodegroupConfig", {**update, "scalingConfig": dict(scaling) if scaling else RESTORED}
            ),
        ],
    )


def asg_calls(finding_id: str, name: str, sizes: tuple[int, int] | None) -> tuple[list[ApiCall], list[ApiCall]]:
    """The calls that take one instance off an Auto Scaling group of ``sizes`` (minimum, desired): the desired
    capacity, and the minimum when above; and their undo (``sizes`` None: not read yet, shown in words)."""
    tag = {"ResourceId": name, "ResourceType": "auto-scaling-group", "Key": MARK_TAG}
    lower: dict[str, Any] = {"DesiredCapacity": UNREAD}
    restore: dict[str, Any] = {"DesiredCapacity": RESTORED}
    if sizes is not None:
        minimum, desired = sizes
        lower = {"MinSize": min(minimum, desired - 1), "DesiredCapacity": desired - 1}
        restore = {"MinSize": minimum, "DesiredCapacity": desired}
    mark = {**tag, "Value": finding_id, "PropagateAtLaunch": False}
    return (
        [
            ApiCall("autoscaling", "CreateOrUpdateTags", {"Tags": [mark]}),
            ApiCall("autoscaling", "UpdateAutoScalingGroup", {"AutoScalingGroupName": name, **lower}),
        ],
        [
            ApiCall("autoscaling", "DeleteTags", {"Tags": [tag]}),
            ApiCall("autoscaling", "UpdateAutoScalingGroup", {"AutoScalingGroupName": name, **restore}),
        ],
    )


def _plan_nodegroup(
    aws: AwsContext, finding: FindingFacts, group: InstanceGroup, instance_id: str, before: dict[str, Any]
) -> RemediationPlan:
    cluster = str(group.cluster)
    eks = aws.client("eks")
    found: dict[str, Any] = read_again(
        f"node group {cluster}/{group.name}",
        lambda: eks.describe_nodegroup(clusterName=cluster, nodegroupName=group.name)["nodegroup"],
    )
    resource = f"node group {cluster}/{group.name}"
    refuse_protected({str(k): str(v) for k, v in (found.get("tags") or {}).items()}, resource)
    status = str(found.get("status", ""))
    if status != "ACTIVE":
        raise GuardRefusal(f"{resource} is {status}, not ACTIVE: it is changing")
    raw = found.get("scalingConfig") or {}
    scaling = {key: int(raw.get(key) or 0) for key in ("minSize", "maxSize", "desiredSize")}
    if scaling["desiredSize"] < 1:
        raise GuardRefusal(f"{resource} wants 0 nodes already")
    calls, undo = nodegroup_calls(finding.finding_id, str(found["nodegroupArn"]), cluster, group.name, scaling)
    return RemediationPlan(
        action=NODEGROUP_DESIRED,
        resource=f"{resource} (node {instance_id})",
        calls=calls,
        undo=undo,
        before={**before, "cluster": cluster, "nodegroup": group.name, "scaling_config": scaling},
    )


def _plan_asg(
    aws: AwsContext, finding: FindingFacts, group: InstanceGroup, instance_id: str, before: dict[str, Any]
) -> RemediationPlan:
    resource = f"Auto Scaling group {group.name}"
    found = aws.client("autoscaling").describe_auto_scaling_groups(AutoScalingGroupNames=[group.name])
    groups = list(found.get("AutoScalingGroups") or [])
    if not groups:
        raise NotFound(f"{resource} no longer exists")
    asg: dict[str, Any] = dict(groups[0])
    refuse_protected({str(t["Key"]): str(t.get("Value", "")) for t in asg.get("Tags") or []}, resource)
    desired, minimum = int(asg.get("DesiredCapacity") or 0), int(asg.get("MinSize") or 0)
    if desired < 1:
        raise GuardRefusal(f"{resource} wants 0 instances already")
    calls, undo = asg_calls(finding.finding_id, group.name, (minimum, desired))
    return RemediationPlan(
        action=ASG_DESIRED,
        resource=f"{resource} (instance {instance_id})",
        calls=calls,
        undo=undo,
        before={**before, "auto_scaling_group": group.name, "desired": desired, "min_size": minimum},
    )
