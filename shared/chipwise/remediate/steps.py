"""A finding's mechanical next step: which resource, what to re-read, what to check, which calls, and their undo.

These steps are mechanical (the others need a person: a migration, a rightsizing to another type):

- ``ec2_stop``: an idle GPU or Inferentia EC2 instance (``gpu_idle`` / ``inferentia_idle``, action ``stop``) is
  stopped (``StopInstances``; undone by ``StartInstances``). An instance in a group is never stopped: its EKS
  managed node group's desired size (``nodegroup_desired``) or its Auto Scaling group's desired capacity
  (``asg_desired``) is lowered by one instead (:mod:`chipwise.remediate.node_groups`).
- ``component_copies``: an idle inference component is scaled to zero copies (``UpdateInferenceComponentRuntimeConfig``
  with ``CopyCount`` 0; undone by restoring the copies it had).
- ``variant_capacity``: an endpoint variant recommended fewer instances of the same type has its instance count
  lowered (``UpdateEndpointWeightsAndCapacities``; undone by restoring the count).
- ``endpoint_delete``: an idle whole endpoint is deleted with its configuration kept (undone by recreating it).
- ``ec2_schedule`` / ``variant_schedule``: an office-hours instance or endpoint variant (``accelerator_off_hours``,
  action ``schedule``) gets EventBridge Scheduler stop/start schedules, or Application Auto Scaling scheduled actions
  on the variant's ``DesiredInstanceCount`` (undone by deleting them and restoring the scalable target). A variant
  keeps at least one instance: one that runs a single instance has no schedule step.

Before any of them the resource is marked with the ``chipwise:remediation`` tag (the finding's id): the opt-in
remediation role only allows the change on a resource carrying it, and a person looking at the resource sees who
changed it. The mark is removed by the rollback.

An EC2 instance an AWS Batch compute environment launched (as the latest scan read the environment's ECS cluster) is
refused before any of them: Batch would replace it, and the environment is what is judged and changed
(:func:`chipwise.remediate.runner.refuse_batch_launched`).

The guards (:mod:`chipwise.remediate.guards`) read the resource again (it must still exist, be in the state the scan
saw, and not carry the protect tag) and require fresh metrics since the scan that still say idle; a schedule is not
checked for load (its off hours are scheduled, not happening now).
"""

from __future__ import annotations

from datetime import datetime

from chipwise.aws import AwsContext
from chipwise.errors import InvalidInput
from chipwise.models.steps import IDLE_RULES as IDLE_RULES
from chipwise.models.steps import OFF_HOURS_RULE, mechanical_step
from chipwise.remediate.api_calls import FindingFacts, RemediationPlan
from chipwise.remediate.ec2_steps import EC2_SCHEDULE, EC2_STOP, plan_ec2_schedule, plan_ec2_stop
from chipwise.remediate.eligible import OFF_HOURS_CAPACITY
from chipwise.remediate.sagemaker_steps import (
    COMPONENT_COPIES,
    ENDPOINT_DELETE,
    VARIANT_CAPACITY,
    VARIANT_SCHEDULE,
    plan_component_copies,
    plan_endpoint_delete,
    plan_variant_capacity,
    plan_variant_schedule,
)
from chipwise.rules.base import copied

__all__ = ["FindingFacts", "mechanical_action", "plan_step"]
# The finding's fields the mechanical step is decided on (besides its variant), named alike on both sides.
STEP_FROM_FINDING = ("rule_id", "resource_kind", "instance_type", "instance_count", "recommendation")


def mechanical_action(finding: FindingFacts) -> str | None:
    """The mechanical step of a finding, or None when its next step needs a person
    (:func:`chipwise.models.steps.mechanical_step`, which the ledger's quick wins read too)."""
    return mechanical_step(variant=finding.resource_variant, **copied(finding, STEP_FROM_FINDING))


def plan_step(aws: AwsContext, finding: FindingFacts, now: datetime) -> RemediationPlan:
    """Read the resource again, check it is as the scan saw it and still idle, and return the calls to make.
    Raises :class:`~chipwise.remediate.api_calls.GuardRefusal` (with the reason), ``NotFound`` (the resource is
    gone) or ``InvalidInput``."""
    action = mechanical_action(finding)
    if action == EC2_STOP:
        return plan_ec2_stop(aws, finding, now)
    if action == COMPONENT_COPIES:
        return plan_component_copies(aws, finding, now)
    if action == VARIANT_CAPACITY:
        return plan_variant_capacity(aws, finding, now)
    if action == ENDPOINT_DELETE:
        return plan_endpoint_delete(aws, finding, now)
    if action == EC2_SCHEDULE:
        return plan_ec2_schedule(aws, finding)
    if action == VARIANT_SCHEDULE:
        return plan_variant_schedule(aws, finding)
    raise InvalidInput(not_mechanical(finding))


def not_mechanical(finding: FindingFacts) -> str:
    step = finding.recommendation.get("action", "?")
    if finding.rule_id == OFF_HOURS_RULE and finding.resource_kind == "sagemaker_endpoint":
        return (
            f"finding {finding.finding_id[:8]}'s variant runs {finding.instance_count} instance: a variant keeps at "
            f"least {OFF_HOURS_CAPACITY}, so its off hours need inference components (scale to zero), which a "
            "person sets up (see `chipwise findings show`)"
        )
    return (
        f"finding {finding.finding_id[:8]}'s next step ({step} on a {finding.resource_kind}) is not mechanical: "
        "it needs a person (see `chipwise findings show`)"
    )
