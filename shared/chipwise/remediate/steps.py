"""A finding's mechanical next step: which resource, what to re-read, what to check, which calls, and their undo.

These steps are mechanical (the others need a person: a migration, a rightsizing to another type):

- ``ec2_stop``: an idle GPU or Inferentia EC2 instance (``gpu_idle`` / ``inferentia_idle``, action ``stop``) is
  stopped (``StopInstances``; undone by ``StartInstances``).
- ``component_copies``: an idle inference component is scaled to zero copies (``UpdateInferenceComponentRuntimeConfig``
  with ``CopyCount`` 0; undone by restoring the copies it had).
- ``variant_capacity``: an endpoint variant recommended fewer instances of the same type has its instance count
  lowered (``UpdateEndpointWeightsAndCapacities``; undone by restoring the count).
- ``endpoint_delete``: an idle whole endpoint is deleted with its configuration kept (undone by recreating it).
- ``ec2_schedule`` / ``variant_schedule``: an office-hours instance or endpoint variant (``accelerator_off_hours``,
  action ``schedule``) gets EventBridge Scheduler stop/start schedules, or Application Auto Scaling scheduled actions
  on the variant's ``DesiredInstanceCount`` (undone by deleting them and restoring the scalable target).

Before any of them the resource is marked with the ``chipwise:remediation`` tag (the finding's id): the opt-in
remediation role only allows the change on a resource carrying it, and a person looking at the resource sees who
changed it. The mark is removed by the rollback.

The guards read the resource again (it must still exist, be in the state the scan saw, and not carry
``chipwise:protect=true``) and its metrics since the scan (:func:`busy_reason`); a schedule is not checked for load
(its off hours are scheduled, not happening now).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any, Final, TypeVar

from botocore.exceptions import ClientError

from chipwise.aws import AwsContext
from chipwise.collect.inventory import ec2_resource
from chipwise.collect.metrics import (
    CWAGENT_GPU,
    EKS_NEURONCORE,
    NEURON_CORE,
    SM_INVOCATIONS,
    MetricTarget,
    collect_metrics,
    discover_series,
    plan_targets,
)
from chipwise.errors import InvalidInput, NotFound
from chipwise.models.records import HourlyRollup, SeriesCoverage
from chipwise.models.resources import component_name_of
from chipwise.models.steps import (
    COMPONENT_COPIES,
    EC2_SCHEDULE,
    EC2_STOP,
    ENDPOINT_DELETE,
    VARIANT_CAPACITY,
    VARIANT_SCHEDULE,
    mechanical_step,
)
from chipwise.rules.builtin.gpu_idle import GpuIdleParams
from chipwise.rules.builtin.inferentia_idle import InferentiaIdleParams
from chipwise.settings import get_settings

MARK_TAG = "chipwise:remediation"
PROTECT_TAG = "chipwise:protect"
AAS_NAMESPACE: Final = "sagemaker"  # Application Auto Scaling's names for an endpoint variant's instance count
AAS_DIMENSION: Final = "sagemaker:variant:DesiredInstanceCount"
OFF_HOURS_CAPACITY = 1  # a variant without inference components keeps at least one instance (zero needs components)
_STRETCH = re.compile(r"(Mon|Tue|Wed|Thu|Fri|Sat|Sun) (\d\d):00 → (Mon|Tue|Wed|Thu|Fri|Sat|Sun) (\d\d):00")


@dataclass(frozen=True)
class ApiCall:
    """One AWS call, as made and as stored: ``ec2.StopInstances(InstanceIds=['i-0abc'])``."""

    service: str  # ec2 | sagemaker | scheduler | application-autoscaling
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


# --- which step -----------------------------------------------------------------------------------------------


def mechanical_action(finding: FindingFacts) -> str | None:
    """The mechanical step of a finding, or None when its next step needs a person
    (:func:`chipwise.models.steps.mechanical_step`, which the ledger's quick wins read too)."""
    return mechanical_step(
        rule_id=finding.rule_id,
        resource_kind=finding.resource_kind,
        variant=finding.resource_variant,
        instance_type=finding.instance_type,
        instance_count=finding.instance_count,
        recommendation=finding.recommendation,
    )


def _endpoint_name(endpoint_arn: str) -> str:
    return endpoint_arn.split(":endpoint/", 1)[1]


def _tags(items: Sequence[Any] | None) -> dict[str, str]:
    return {str(t["Key"]): str(t.get("Value", "")) for t in items or []}


R = TypeVar("R")


def _read_again(what: str, read: Callable[[], R]) -> R:
    """A resource read again before acting: ``NotFound`` (``<what> no longer exists``) when AWS says it is gone."""
    try:
        return read()
    except ClientError as exc:
        if _gone(exc):
            raise NotFound(f"{what} no longer exists") from exc
        raise


def _gone(exc: ClientError) -> bool:
    error = exc.response.get("Error", {})
    code, message = str(error.get("Code", "")), str(error.get("Message", ""))
    return code in {"InvalidInstanceID.NotFound", "InvalidInstanceID.Malformed", "ResourceNotFound"} or (
        code == "ValidationException" and "Could not find" in message
    )


def _protected(tags: dict[str, str], resource: str) -> None:
    if tags.get(PROTECT_TAG, "").strip().lower() == "true":
        raise GuardRefusal(f"{resource} is tagged {PROTECT_TAG}=true: Chipwise never changes it")


# --- planning (reads only) ------------------------------------------------------------------------------------


def plan_step(aws: AwsContext, finding: FindingFacts, now: datetime) -> RemediationPlan:
    """Read the resource again, check it is as the scan saw it and still idle, and return the calls to make.
    Raises :class:`GuardRefusal` (with the reason), ``NotFound`` (the resource is gone) or ``InvalidInput``."""
    action = mechanical_action(finding)
    if action == EC2_STOP:
        return _plan_ec2_stop(aws, finding, now)
    if action == COMPONENT_COPIES:
        return _plan_component_copies(aws, finding, now)
    if action == VARIANT_CAPACITY:
        return _plan_variant_capacity(aws, finding, now)
    if action == ENDPOINT_DELETE:
        return _plan_endpoint_delete(aws, finding, now)
    if action == EC2_SCHEDULE:
        return _plan_ec2_schedule(aws, finding)
    if action == VARIANT_SCHEDULE:
        return _plan_variant_schedule(aws, finding)
    step = finding.recommendation.get("action", "?")
    raise InvalidInput(
        f"finding {finding.finding_id[:8]}'s next step ({step} on a {finding.resource_kind}) is not mechanical: "
        "it needs a person (see `chipwise findings show`)"
    )


def _plan_ec2_stop(aws: AwsContext, finding: FindingFacts, now: datetime) -> RemediationPlan:
    instance_id = finding.resource_arn.rsplit("/", 1)[-1]
    ec2 = aws.client("ec2")
    reservations = _read_again(
        f"instance {instance_id}", lambda: ec2.describe_instances(InstanceIds=[instance_id]).get("Reservations", [])
    )
    instances = [i for r in reservations for i in r.get("Instances", [])]
    if not instances or (instances[0].get("State") or {}).get("Name") in {"terminated", "shutting-down"}:
        raise NotFound(f"instance {instance_id} no longer exists")
    instance: dict[str, Any] = dict(instances[0])
    state = str((instance.get("State") or {}).get("Name"))
    tags = _tags(instance.get("Tags"))
    _protected(tags, f"instance {instance_id}")
    if state != "running":
        raise GuardRefusal(f"instance {instance_id} is {state} (it was running at the scan): nothing to stop")
    if finding.instance_type and instance.get("InstanceType") != finding.instance_type:
        raise GuardRefusal(
            f"instance {instance_id} is now a {instance.get('InstanceType')} (the scan saw a {finding.instance_type})"
        )
    owner = finding.resource_arn.split(":")[4]
    resource = ec2_resource(instance, owner, aws.region)
    targets = plan_targets([resource], discover_series(aws, [resource]))
    busy = [t for t in targets if t.spec in (CWAGENT_GPU, NEURON_CORE, EKS_NEURONCORE)]
    limit = (
        GpuIdleParams().max_gpu_utilization_pct
        if finding.rule_id == "gpu_idle"
        else InferentiaIdleParams().max_neuroncore_utilization_pct
    )
    peak = _peak(aws, busy, finding.last_seen, now, lambda row: row.maximum)
    if peak is not None and peak >= limit:
        raise GuardRefusal(
            f"instance {instance_id} became busy since the scan: accelerator utilisation peaked at {peak:.1f} % "
            f"(idle means under {limit:g} %)"
        )
    mark = [{"Key": MARK_TAG, "Value": finding.finding_id}]
    return RemediationPlan(
        action=EC2_STOP,
        resource=f"instance {instance_id}",
        calls=[
            ApiCall("ec2", "CreateTags", {"Resources": [instance_id], "Tags": mark}),
            ApiCall("ec2", "StopInstances", {"InstanceIds": [instance_id]}),
        ],
        undo=[
            ApiCall("ec2", "DeleteTags", {"Resources": [instance_id], "Tags": [{"Key": MARK_TAG}]}),
            ApiCall("ec2", "StartInstances", {"InstanceIds": [instance_id]}),
        ],
        before={"instance_id": instance_id, "state": state, "instance_type": instance.get("InstanceType")},
    )


def _endpoint_tags(aws: AwsContext, endpoint_arn: str) -> dict[str, str]:
    return _tags(aws.client("sagemaker").list_tags(ResourceArn=endpoint_arn).get("Tags"))


def _plan_component_copies(aws: AwsContext, finding: FindingFacts, now: datetime) -> RemediationPlan:
    name = component_name_of(finding.resource_arn)
    sm = aws.client("sagemaker")
    described = _read_again(
        f"inference component {name}", lambda: sm.describe_inference_component(InferenceComponentName=name)
    )
    endpoint_arn = str(described["EndpointArn"])  # the endpoint it is placed on (its tags hold the protection)
    _protected(_endpoint_tags(aws, endpoint_arn), f"endpoint {described.get('EndpointName')}")
    status = str(described.get("InferenceComponentStatus"))
    copies = int((described.get("RuntimeConfig") or {}).get("CurrentCopyCount") or 0)
    if status != "InService":
        raise GuardRefusal(f"inference component {name} is {status}, not InService: it is changing")
    if copies == 0:
        raise GuardRefusal(f"inference component {name} already has 0 copies")
    if copies != finding.instance_count:
        raise GuardRefusal(
            f"inference component {name} has {copies} copies now (the scan saw {finding.instance_count})"
        )
    target = MetricTarget(finding.resource_arn, SM_INVOCATIONS, ((("InferenceComponentName", name),),))
    invoked = _peak(aws, [target], finding.last_seen, now, lambda row: row.sum)
    if invoked:
        raise GuardRefusal(f"inference component {name} served {invoked:.0f} requests in an hour since the scan")
    mark = [{"Key": MARK_TAG, "Value": finding.finding_id}]
    return RemediationPlan(
        action=COMPONENT_COPIES,
        resource=f"inference component {name}",
        calls=[
            ApiCall("sagemaker", "AddTags", {"ResourceArn": endpoint_arn, "Tags": mark}),
            ApiCall(
                "sagemaker",
                "UpdateInferenceComponentRuntimeConfig",
                {"InferenceComponentName": name, "DesiredRuntimeConfig": {"CopyCount": 0}},
            ),
        ],
        undo=[
            ApiCall("sagemaker", "DeleteTags", {"ResourceArn": endpoint_arn, "TagKeys": [MARK_TAG]}),
            ApiCall(
                "sagemaker",
                "UpdateInferenceComponentRuntimeConfig",
                {"InferenceComponentName": name, "DesiredRuntimeConfig": {"CopyCount": copies}},
            ),
        ],
        before={"inference_component": name, "status": status, "copies": copies},
    )


def _read_variant(aws: AwsContext, finding: FindingFacts) -> tuple[str, str, str, dict[str, Any]]:
    """The finding's endpoint variant read again: (endpoint, endpoint ARN, status, the variant). Refuses a protected
    endpoint; ``NotFound`` when the endpoint or the variant is gone."""
    endpoint_arn = finding.resource_arn
    endpoint = _endpoint_name(endpoint_arn)
    sm = aws.client("sagemaker")
    described = _read_again(f"endpoint {endpoint}", lambda: sm.describe_endpoint(EndpointName=endpoint))
    _protected(_endpoint_tags(aws, endpoint_arn), f"endpoint {endpoint}")
    variants = list(described.get("ProductionVariants") or [])
    wanted = finding.resource_variant or finding.evidence.get("variant_name")
    chosen = [v for v in variants if v.get("VariantName") == wanted] if wanted else variants[:1]
    if not chosen or (not wanted and len(variants) != 1):
        raise NotFound(f"endpoint {endpoint} no longer has the variant the scan saw ({wanted or 'its only one'})")
    return endpoint, endpoint_arn, str(described.get("EndpointStatus")), dict(chosen[0])


def _plan_variant_capacity(aws: AwsContext, finding: FindingFacts, now: datetime) -> RemediationPlan:
    endpoint, endpoint_arn, status, variant = _read_variant(aws, finding)
    name = str(variant["VariantName"])
    count = int(variant.get("CurrentInstanceCount") or 0)
    if status != "InService":
        raise GuardRefusal(f"endpoint {endpoint} is {status}, not InService: it is changing")
    if count != finding.instance_count:
        raise GuardRefusal(
            f"variant {endpoint}/{name} runs {count} instances now (the scan saw {finding.instance_count})"
        )
    target_count = int(finding.recommendation["target_count"])
    allowed = finding.evidence.get("peak_requests_per_hour")
    target = MetricTarget(finding.resource_arn, SM_INVOCATIONS, ((("EndpointName", endpoint), ("VariantName", name)),))
    peak = _peak(aws, [target], finding.last_seen, now, lambda row: row.sum)
    limit = float(allowed) if isinstance(allowed, int | float) else 0.0
    if peak is not None and peak > limit:
        raise GuardRefusal(
            f"variant {endpoint}/{name} became busier since the scan: {peak:.0f} requests in an hour "
            f"(the scan's peak was {limit:.0f})"
        )
    mark = [{"Key": MARK_TAG, "Value": finding.finding_id}]

    def capacity(instances: int) -> ApiCall:
        return ApiCall(
            "sagemaker",
            "UpdateEndpointWeightsAndCapacities",
            {
                "EndpointName": endpoint,
                "DesiredWeightsAndCapacities": [{"VariantName": name, "DesiredInstanceCount": instances}],
            },
        )

    return RemediationPlan(
        action=VARIANT_CAPACITY,
        resource=f"variant {endpoint}/{name}",
        calls=[ApiCall("sagemaker", "AddTags", {"ResourceArn": endpoint_arn, "Tags": mark}), capacity(target_count)],
        undo=[
            ApiCall("sagemaker", "DeleteTags", {"ResourceArn": endpoint_arn, "TagKeys": [MARK_TAG]}),
            capacity(count),
        ],
        before={"endpoint": endpoint, "variant": name, "status": status, "instance_count": count},
    )


def _plan_endpoint_delete(aws: AwsContext, finding: FindingFacts, now: datetime) -> RemediationPlan:
    """An idle endpoint is deleted only with its configuration kept (its endpoint config, which DeleteEndpoint leaves,
    and a copy of it in the audit row): the rollback creates the endpoint again from it, the config too if it is gone
    by then."""
    endpoint_arn = finding.resource_arn
    endpoint = _endpoint_name(endpoint_arn)
    sm = aws.client("sagemaker")
    described = _read_again(f"endpoint {endpoint}", lambda: sm.describe_endpoint(EndpointName=endpoint))
    tags = _endpoint_tags(aws, endpoint_arn)
    _protected(tags, f"endpoint {endpoint}")
    status = str(described.get("EndpointStatus"))
    if status != "InService":
        raise GuardRefusal(f"endpoint {endpoint} is {status}, not InService: it is changing")
    variants = list(described.get("ProductionVariants") or [])
    count = sum(int(v.get("CurrentInstanceCount") or 0) for v in variants)
    if count != finding.instance_count:
        raise GuardRefusal(f"endpoint {endpoint} runs {count} instances now (the scan saw {finding.instance_count})")
    if sm.list_inference_components(EndpointNameEquals=endpoint).get("InferenceComponents"):
        raise GuardRefusal(f"endpoint {endpoint} hosts inference components: scale them to 0 copies instead")
    config_name = str(described["EndpointConfigName"])
    config = dict(sm.describe_endpoint_config(EndpointConfigName=config_name))
    kept = {
        key: config[key]
        for key in ("EndpointConfigName", "ProductionVariants", "DataCaptureConfig", "KmsKeyId", "AsyncInferenceConfig")
        if config.get(key)
    }
    dims = tuple((("EndpointName", endpoint), ("VariantName", str(v["VariantName"]))) for v in variants)
    invoked = _peak(aws, [MetricTarget(finding.resource_arn, SM_INVOCATIONS, dims)], finding.last_seen, now, _sum)
    if invoked:
        raise GuardRefusal(f"endpoint {endpoint} served {invoked:.0f} requests in an hour since the scan")
    mark = [{"Key": MARK_TAG, "Value": finding.finding_id}]
    recreate: dict[str, Any] = {"EndpointName": endpoint, "EndpointConfigName": config_name}
    if tags:
        recreate["Tags"] = [{"Key": k, "Value": v} for k, v in tags.items()]
    return RemediationPlan(
        action=ENDPOINT_DELETE,
        resource=f"endpoint {endpoint}",
        calls=[
            ApiCall("sagemaker", "AddTags", {"ResourceArn": endpoint_arn, "Tags": mark}),
            ApiCall("sagemaker", "DeleteEndpoint", {"EndpointName": endpoint}),
        ],
        undo=[
            ApiCall("sagemaker", "DeleteTags", {"ResourceArn": endpoint_arn, "TagKeys": [MARK_TAG]}),
            ApiCall("sagemaker", "CreateEndpoint", recreate),
        ],
        before={"endpoint": endpoint, "status": status, "instance_count": count, "endpoint_config": kept},
    )


def off_hours_crons(stretches: str) -> list[tuple[str, str]]:
    """The finding's off stretches (``Mon 19:00 → Tue 09:00; …``, UTC) as (stop, start) EventBridge Scheduler cron
    expressions: ``cron(0 19 ? * MON *)``, ``cron(0 9 ? * TUE *)``."""
    found = _STRETCH.findall(stretches)
    return [
        (f"cron(0 {int(stop_hour)} ? * {stop_day.upper()} *)", f"cron(0 {int(start_hour)} ? * {start_day.upper()} *)")
        for stop_day, stop_hour, start_day, start_hour in found
    ]


def _plan_ec2_schedule(aws: AwsContext, finding: FindingFacts) -> RemediationPlan:
    """An instance that works office hours: one EventBridge Scheduler schedule stops it at the start of each off
    stretch, another starts it at the end (UTC, as the finding's pattern was read). Rollback deletes them."""
    role = get_settings().remediation_scheduler_role_arn
    if not role:
        raise InvalidInput("an off-hours schedule needs remediation_scheduler_role_arn (the role Scheduler assumes)")
    crons = off_hours_crons(str(finding.evidence.get("off_stretches") or ""))
    if not crons:
        raise InvalidInput(f"finding {finding.finding_id[:8]} names no off stretch to schedule")
    instance_id = finding.resource_arn.rsplit("/", 1)[-1]
    reservations = _read_again(
        f"instance {instance_id}",
        lambda: aws.client("ec2").describe_instances(InstanceIds=[instance_id]).get("Reservations", []),
    )
    instances = [i for r in reservations for i in r.get("Instances", [])]
    if not instances or (instances[0].get("State") or {}).get("Name") in {"terminated", "shutting-down"}:
        raise NotFound(f"instance {instance_id} no longer exists")
    instance: dict[str, Any] = dict(instances[0])
    _protected(_tags(instance.get("Tags")), f"instance {instance_id}")
    if finding.instance_type and instance.get("InstanceType") != finding.instance_type:
        raise GuardRefusal(
            f"instance {instance_id} is now a {instance.get('InstanceType')} (the scan saw a {finding.instance_type})"
        )
    payload = json.dumps({"InstanceIds": [instance_id]})
    calls: list[ApiCall] = [
        ApiCall(
            "ec2", "CreateTags", {"Resources": [instance_id], "Tags": [{"Key": MARK_TAG, "Value": finding.finding_id}]}
        )
    ]
    undo: list[ApiCall] = [ApiCall("ec2", "DeleteTags", {"Resources": [instance_id], "Tags": [{"Key": MARK_TAG}]})]
    for index, (stop, start) in enumerate(crons, 1):
        for verb, cron in (("stop", stop), ("start", start)):
            name = f"chipwise-{finding.finding_id[:8]}-{index}-{verb}"
            calls.append(
                ApiCall(
                    "scheduler",
                    "CreateSchedule",
                    {
                        "Name": name,
                        "ScheduleExpression": cron,
                        "ScheduleExpressionTimezone": "UTC",
                        "FlexibleTimeWindow": {"Mode": "OFF"},
                        "Description": f"Chipwise off-hours {verb} of {instance_id} (finding {finding.finding_id})",
                        "Target": {
                            "Arn": f"arn:aws:scheduler:::aws-sdk:ec2:{verb}Instances",
                            "RoleArn": role,
                            "Input": payload,
                        },
                    },
                )
            )
            undo.append(ApiCall("scheduler", "DeleteSchedule", {"Name": name}))
    return RemediationPlan(
        action=EC2_SCHEDULE,
        resource=f"instance {instance_id}",
        calls=calls,
        undo=undo,
        before={"instance_id": instance_id, "schedule": finding.evidence.get("schedule"), "crons": crons},
    )


def _plan_variant_schedule(aws: AwsContext, finding: FindingFacts) -> RemediationPlan:
    """An endpoint variant that works office hours: registered as an Application Auto Scaling scalable target (its
    MinCapacity/MaxCapacity kept if it already was one), with a scheduled action per off stretch that scales it to
    :data:`OFF_HOURS_CAPACITY` at the stretch's start and one that scales it back to its current count at its end
    (cron, UTC, as the finding's pattern was read). Rollback deletes the actions and restores (or deregisters) the
    target. A variant keeps one instance: scaling to zero needs inference components, which a person sets up."""
    crons = off_hours_crons(str(finding.evidence.get("off_stretches") or ""))
    if not crons:
        raise InvalidInput(f"finding {finding.finding_id[:8]} names no off stretch to schedule")
    endpoint, endpoint_arn, status, variant = _read_variant(aws, finding)
    name = str(variant["VariantName"])
    count = int(variant.get("CurrentInstanceCount") or 0)
    resource = f"variant {endpoint}/{name}"
    if status != "InService":
        raise GuardRefusal(f"endpoint {endpoint} is {status}, not InService: it is changing")
    if count != finding.instance_count:
        raise GuardRefusal(f"{resource} runs {count} instances now (the scan saw {finding.instance_count})")
    kind = (variant.get("CurrentInstanceType") or variant.get("InstanceType")) or finding.instance_type
    if finding.instance_type and kind != finding.instance_type:
        raise GuardRefusal(f"{resource} is now {kind} (the scan saw {finding.instance_type})")
    if count <= OFF_HOURS_CAPACITY:
        raise GuardRefusal(
            f"{resource} runs {count} instance: a variant keeps at least {OFF_HOURS_CAPACITY} "
            "(scaling to zero needs inference components: a person sets that up)"
        )
    resource_id = f"endpoint/{endpoint}/variant/{name}"
    target_id = {"ServiceNamespace": AAS_NAMESPACE, "ResourceId": resource_id, "ScalableDimension": AAS_DIMENSION}
    autoscaling = aws.client("application-autoscaling")
    registered = autoscaling.describe_scalable_targets(
        ServiceNamespace=AAS_NAMESPACE, ResourceIds=[resource_id], ScalableDimension=AAS_DIMENSION
    ).get("ScalableTargets", [])
    names = [
        (f"chipwise-{finding.finding_id[:8]}-{i}-off", f"chipwise-{finding.finding_id[:8]}-{i}-on")
        for i in range(1, len(crons) + 1)
    ]
    existing = {
        str(a["ScheduledActionName"])
        for a in autoscaling.describe_scheduled_actions(
            ServiceNamespace=AAS_NAMESPACE, ResourceId=resource_id, ScalableDimension=AAS_DIMENSION
        ).get("ScheduledActions", [])
    }
    if clash := sorted(existing & {n for pair in names for n in pair}):
        raise GuardRefusal(f"{resource} already has the scheduled action {clash[0]}: Chipwise would overwrite it")
    previous: dict[str, Any] | None = None
    if registered:
        kept = registered[0]
        previous = {"MinCapacity": int(kept["MinCapacity"]), "MaxCapacity": int(kept["MaxCapacity"])}
        if kept.get("SuspendedState"):
            previous["SuspendedState"] = dict(kept["SuspendedState"])
    low, high = (previous["MinCapacity"], previous["MaxCapacity"]) if previous else (count, count)
    on_max = max(high, count)
    mark = [{"Key": MARK_TAG, "Value": finding.finding_id}]
    calls = [
        ApiCall("sagemaker", "AddTags", {"ResourceArn": endpoint_arn, "Tags": mark}),
        ApiCall(
            "application-autoscaling",
            "RegisterScalableTarget",
            {**target_id, "MinCapacity": low, "MaxCapacity": high},
        ),
    ]
    undo = [
        ApiCall("sagemaker", "DeleteTags", {"ResourceArn": endpoint_arn, "TagKeys": [MARK_TAG]}),
        ApiCall("application-autoscaling", "RegisterScalableTarget", {**target_id, **previous})
        if previous
        else ApiCall("application-autoscaling", "DeregisterScalableTarget", dict(target_id)),
    ]
    for (off_cron, on_cron), (off_name, on_name) in zip(crons, names, strict=True):
        for action_name, cron, capacity in (
            (off_name, off_cron, {"MinCapacity": OFF_HOURS_CAPACITY, "MaxCapacity": OFF_HOURS_CAPACITY}),
            (on_name, on_cron, {"MinCapacity": count, "MaxCapacity": on_max}),
        ):
            calls.append(
                ApiCall(
                    "application-autoscaling",
                    "PutScheduledAction",
                    {
                        **target_id,
                        "ScheduledActionName": action_name,
                        "Schedule": cron,
                        "Timezone": "UTC",
                        "ScalableTargetAction": capacity,
                    },
                )
            )
            undo.append(
                ApiCall(
                    "application-autoscaling",
                    "DeleteScheduledAction",
                    {**target_id, "ScheduledActionName": action_name},
                )
            )
    return RemediationPlan(
        action=VARIANT_SCHEDULE,
        resource=resource,
        calls=calls,
        undo=undo,
        before={
            "endpoint": endpoint,
            "variant": name,
            "instance_count": count,
            "scalable_target": previous,
            "schedule": finding.evidence.get("schedule"),
            "crons": crons,
        },
    )


def _sum(row: HourlyRollup) -> float | None:
    return row.sum


def restore_kept_config(aws: AwsContext, before: dict[str, Any]) -> None:
    """Before a deleted endpoint is created again: its endpoint config, from the kept copy, if it is gone."""
    kept = before.get("endpoint_config")
    if not isinstance(kept, dict) or not kept.get("EndpointConfigName"):
        return
    sm = aws.client("sagemaker")
    try:
        sm.describe_endpoint_config(EndpointConfigName=str(kept["EndpointConfigName"]))
    except ClientError as exc:
        if not _gone(exc):
            raise
        sm.create_endpoint_config(**kept)


def _peak(
    aws: AwsContext,
    targets: Sequence[MetricTarget],
    since: datetime,
    now: datetime,
    value: Callable[[HourlyRollup], float | None],
) -> float | None:
    """The largest hourly value of ``targets`` from the scan's hour to now (None: no datapoint)."""
    if not targets:
        return None
    start = since.replace(minute=0, second=0, microsecond=0)
    end = now.replace(minute=0, second=0, microsecond=0) + timedelta(hours=1)
    rows: list[HourlyRollup] = []

    def sink(rollups: list[HourlyRollup], _coverage: list[SeriesCoverage]) -> None:
        rows.extend(rollups)

    collect_metrics(aws, targets, start, end, sink)
    values = [v for row in rows if (v := value(row)) is not None]
    return max(values) if values else None


# --- running ---------------------------------------------------------------------------------------------------


def call(aws: AwsContext, api: ApiCall) -> None:
    """Make one call through the cached factory's clients (only the services remediation touches)."""
    clients: dict[str, Callable[[], Any]] = {
        "ec2": lambda: aws.client("ec2"),
        "sagemaker": lambda: aws.client("sagemaker"),
        "scheduler": lambda: aws.client("scheduler"),
        "application-autoscaling": lambda: aws.client("application-autoscaling"),
    }
    if api.service not in clients:
        raise ValueError(f"remediation makes no {api.service} calls")
    client: Any = clients[api.service]()
    operation = client.meta.method_to_api_mapping  # {"stop_instances": "StopInstances", ...}
    method = next(name for name, op in operation.items() if op == api.operation)
    getattr(client, method)(**api.params)
