"""A dry run from the store alone: the calls a finding's apply would make, built from what the scan saw (no AWS
call, no credentials). The apply itself reads the resource and its metrics again and may refuse, or plan other
numbers if the resource changed since the scan; the preview says so."""

from __future__ import annotations

from typing import Any

from chipwise.errors import InvalidInput
from chipwise.models.resources import component_name_of
from chipwise.remediate.api_calls import FindingFacts, RemediationPlan
from chipwise.remediate.ec2_steps import (
    EC2_SCHEDULE,
    EC2_STOP,
    ec2_schedule_calls,
    ec2_stop_calls,
    instance_id_of,
    off_hours_crons,
)
from chipwise.remediate.node_groups import ASG_DESIRED, NODEGROUP_DESIRED, asg_calls, instance_group, nodegroup_calls
from chipwise.remediate.sagemaker_steps import (
    COMPONENT_COPIES,
    ENDPOINT_DELETE,
    VARIANT_CAPACITY,
    VARIANT_SCHEDULE,
    capacity_calls,
    component_calls,
    delete_calls,
    endpoint_name,
    variant_schedule_calls,
)
from chipwise.remediate.steps import mechanical_action, not_mechanical

LIVE = "<read at apply>"  # a value only the live re-check reads


def preview(finding: FindingFacts, tags: dict[str, str], details: dict[str, Any]) -> RemediationPlan:
    """The plan as the scan saw the resource (``tags`` and ``details``: what the store holds of it)."""
    action = mechanical_action(finding)
    fid = finding.finding_id
    if action == EC2_STOP:
        instance_id = instance_id_of(finding)
        group = instance_group(tags)
        if group is not None and group.kind == "eks_nodegroup":
            arn = f"<node group {group.cluster}/{group.name}'s ARN>"
            calls, undo = nodegroup_calls(fid, arn, str(group.cluster), group.name, None)
            return RemediationPlan(NODEGROUP_DESIRED, f"node group {group.cluster}/{group.name}", calls, undo)
        if group is not None and group.kind == "autoscaling_group":
            calls, undo = asg_calls(fid, group.name, None)
            return RemediationPlan(ASG_DESIRED, f"Auto Scaling group {group.name}", calls, undo)
        calls, undo = ec2_stop_calls(instance_id, fid)
        return RemediationPlan(EC2_STOP, f"instance {instance_id}", calls, undo)
    if action == EC2_SCHEDULE:
        calls, undo = ec2_schedule_calls(finding, instance_id_of(finding))
        return RemediationPlan(EC2_SCHEDULE, f"instance {instance_id_of(finding)}", calls, undo)
    if action == COMPONENT_COPIES:
        name = component_name_of(finding.resource_arn)
        endpoint_arn = str(details.get("endpoint_arn") or "<its endpoint's ARN>")
        calls, undo = component_calls(name, endpoint_arn, fid, finding.instance_count)
        return RemediationPlan(COMPONENT_COPIES, f"inference component {name}", calls, undo)
    endpoint = endpoint_name(finding.resource_arn) if ":endpoint/" in finding.resource_arn else LIVE
    variants = [v.get("variant_name") for v in details.get("variants") or [] if isinstance(v, dict)]
    only = str(variants[0]) if len(variants) == 1 and variants[0] else "<its only variant>"
    variant = finding.resource_variant or str(finding.evidence.get("variant_name") or only)
    if action == VARIANT_CAPACITY:
        target = int(finding.recommendation["target_count"])
        calls, undo = capacity_calls(endpoint, finding.resource_arn, variant, fid, target, finding.instance_count)
        return RemediationPlan(VARIANT_CAPACITY, f"variant {endpoint}/{variant}", calls, undo)
    if action == ENDPOINT_DELETE:
        recreate = {"EndpointName": endpoint, "EndpointConfigName": str(details.get("endpoint_config_name") or LIVE)}
        calls, undo = delete_calls(endpoint, finding.resource_arn, fid, recreate)
        return RemediationPlan(ENDPOINT_DELETE, f"endpoint {endpoint}", calls, undo)
    if action == VARIANT_SCHEDULE:
        crons = off_hours_crons(str(finding.evidence.get("off_stretches") or ""))
        if not crons:
            raise InvalidInput(f"finding {fid[:8]} names no off stretch to schedule")
        resource_id = f"endpoint/{endpoint}/variant/{variant}"
        calls, undo = variant_schedule_calls(
            finding, finding.resource_arn, resource_id, crons, finding.instance_count, None
        )
        return RemediationPlan(VARIANT_SCHEDULE, f"variant {endpoint}/{variant}", calls, undo)
    raise InvalidInput(not_mechanical(finding))
