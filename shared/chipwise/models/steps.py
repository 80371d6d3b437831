"""Which mechanical step (what ``chipwise findings apply`` can do) a finding's recommendation maps to, or none.

Pure, on the finding's own fields: the ledger calls a finding a quick win only when it has one (issue 35: a quick
win is a step apply can do, anything else is a project), and :mod:`chipwise.remediate.steps` plans and guards the
same step. One decision, two readers.
"""

from __future__ import annotations

from typing import Any

EC2_STOP, COMPONENT_COPIES, VARIANT_CAPACITY = "ec2_stop", "component_copies", "variant_capacity"
ENDPOINT_DELETE = "endpoint_delete"
EC2_SCHEDULE = "ec2_schedule"
VARIANT_SCHEDULE = "variant_schedule"
OFF_HOURS_RULE = "accelerator_off_hours"
IDLE_RULES = ("gpu_idle", "inferentia_idle")
OFF_HOURS_CAPACITY = 1  # as remediate.eligible: a variant keeps one instance, so one of 1 has no schedule step


def mechanical_step(
    *,
    rule_id: str,
    resource_kind: str,
    variant: str | None,
    instance_type: str | None,
    instance_count: int,
    recommendation: dict[str, Any],
) -> str | None:
    """The mechanical step of a finding, or None when its next step needs a person."""
    action = recommendation.get("action")
    if resource_kind == "ec2_instance" and action == "stop" and rule_id in IDLE_RULES:
        return EC2_STOP
    if resource_kind == "sagemaker_inference_component" and action == "delete":
        return COMPONENT_COPIES
    if resource_kind == "ec2_instance" and action == "schedule" and rule_id == OFF_HOURS_RULE:
        return EC2_SCHEDULE
    if resource_kind == "sagemaker_endpoint" and action == "schedule" and rule_id == OFF_HOURS_RULE:
        return VARIANT_SCHEDULE if instance_count > OFF_HOURS_CAPACITY else None
    if resource_kind == "sagemaker_endpoint" and action == "delete" and rule_id in IDLE_RULES and not variant:
        return ENDPOINT_DELETE
    target_count = recommendation.get("target_count")
    target_type = recommendation.get("target_instance_type")
    if (
        resource_kind == "sagemaker_endpoint"
        and action == "rightsize"
        and isinstance(target_count, int)
        and 0 < target_count < instance_count
        and target_type in (None, instance_type)
    ):
        return VARIANT_CAPACITY
    return None
