"""The SageMaker steps: an idle inference component scaled to 0 copies, a variant's instance count lowered, an idle
endpoint deleted with its configuration kept, and an office-hours variant given scheduled scaling.

Before acting on an endpoint's load the re-check needs its instance metric (CPU, which a live endpoint publishes
every minute) since the scan: requests are counted from ``Invocations``, which SageMaker publishes only for requests
(absent means none), so they cannot tell a quiet endpoint from one whose metrics stopped.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, Final

from botocore.exceptions import ClientError

from chipwise.aws import AwsContext
from chipwise.collect.metric_specs import IC_CPU, SM_CPU, SM_INVOCATIONS, Dimensions, MetricSpec, MetricTarget
from chipwise.errors import InvalidInput, NotFound
from chipwise.models.resources import component_name_of
from chipwise.remediate.api_calls import ApiCall, FindingFacts, GuardRefusal, RemediationPlan, sagemaker_mark
from chipwise.remediate.ec2_steps import off_hours_crons
from chipwise.remediate.eligible import OFF_HOURS_CAPACITY
from chipwise.remediate.guards import fresh, hourly_since, is_gone, peak, read_again, refuse_protected, tags_of, total

Series = tuple[Dimensions, ...]  # the dimension sets of a metric's series (one per variant)
COMPONENT_COPIES, VARIANT_CAPACITY = "component_copies", "variant_capacity"
ENDPOINT_DELETE = "endpoint_delete"
VARIANT_SCHEDULE = "variant_schedule"
AAS_NAMESPACE: Final = "sagemaker"  # Application Auto Scaling's names for an endpoint variant's instance count
AAS_DIMENSION: Final = "sagemaker:variant:DesiredInstanceCount"


def endpoint_name(endpoint_arn: str) -> str:
    return endpoint_arn.split(":endpoint/", 1)[1]


def _requests_since(
    aws: AwsContext, finding: FindingFacts, now: datetime, *, resource: str, alive: MetricSpec, series: Series
) -> float | None:
    """The busiest hour's requests since the scan of ``series`` (their dimension sets), once ``alive`` (the
    instance metric) shows fresh datapoints."""
    arn = finding.resource_arn
    what = f"{alive.metric} ({alive.namespace})"
    fresh(aws, [MetricTarget(arn, alive, series)], finding.last_seen, now, resource=resource, what=what)
    return peak(hourly_since(aws, [MetricTarget(arn, SM_INVOCATIONS, series)], finding.last_seen, now), total)


def _refuse_if_served(
    aws: AwsContext, finding: FindingFacts, now: datetime, *, resource: str, alive: MetricSpec, series: Series
) -> None:
    """Refuse an idle step when ``resource`` served any request since the scan (or its metrics are not fresh)."""
    invoked = _requests_since(aws, finding, now, resource=resource, alive=alive, series=series)
    if invoked:
        raise GuardRefusal(f"{resource} served {invoked:.0f} requests in an hour since the scan")


def endpoint_tags(aws: AwsContext, endpoint_arn: str) -> dict[str, str]:
    return tags_of(aws.client("sagemaker").list_tags(ResourceArn=endpoint_arn).get("Tags"))


def plan_component_copies(aws: AwsContext, finding: FindingFacts, now: datetime) -> RemediationPlan:
    name = component_name_of(finding.resource_arn)
    sm = aws.client("sagemaker")
    described = read_again(
        f"inference component {name}", lambda: sm.describe_inference_component(InferenceComponentName=name)
    )
    endpoint_arn = str(described["EndpointArn"])  # the endpoint it is placed on (its tags hold the protection)
    refuse_protected(endpoint_tags(aws, endpoint_arn), f"endpoint {described.get('EndpointName')}")
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
    own = ((("InferenceComponentName", name),),)
    _refuse_if_served(aws, finding, now, resource=f"inference component {name}", alive=IC_CPU, series=own)
    calls, undo = component_calls(name, endpoint_arn, finding.finding_id, copies)
    before = {"inference_component": name, "status": status, "copies": copies}
    return RemediationPlan(COMPONENT_COPIES, f"inference component {name}", calls, undo, before)


def component_calls(name: str, endpoint_arn: str, finding_id: str, copies: int) -> tuple[list[ApiCall], list[ApiCall]]:
    """Mark the component's endpoint and scale the component to 0 copies; the undo restores ``copies``."""
    mark, unmark = sagemaker_mark(endpoint_arn, finding_id)

    def copy_count(count: int) -> ApiCall:
        return ApiCall(
            "sagemaker",
            "UpdateInferenceComponentRuntimeConfig",
            {"InferenceComponentName": name, "DesiredRuntimeConfig": {"CopyCount": count}},
        )

    return [mark, copy_count(0)], [unmark, copy_count(copies)]


def read_variant(aws: AwsContext, finding: FindingFacts) -> tuple[str, str, str, dict[str, Any]]:
    """The finding's endpoint variant read again: (endpoint, endpoint ARN, status, the variant). Refuses a protected
    endpoint; ``NotFound`` when the endpoint or the variant is gone."""
    endpoint_arn = finding.resource_arn
    endpoint = endpoint_name(endpoint_arn)
    sm = aws.client("sagemaker")
    described = read_again(f"endpoint {endpoint}", lambda: sm.describe_endpoint(EndpointName=endpoint))
    refuse_protected(endpoint_tags(aws, endpoint_arn), f"endpoint {endpoint}")
    variants = list(described.get("ProductionVariants") or [])
    wanted = finding.resource_variant or finding.evidence.get("variant_name")
    chosen = [v for v in variants if v.get("VariantName") == wanted] if wanted else variants[:1]
    if not chosen or (not wanted and len(variants) != 1):
        raise NotFound(f"endpoint {endpoint} no longer has the variant the scan saw ({wanted or 'its only one'})")
    return endpoint, endpoint_arn, str(described.get("EndpointStatus")), dict(chosen[0])


def plan_variant_capacity(aws: AwsContext, finding: FindingFacts, now: datetime) -> RemediationPlan:
    endpoint, endpoint_arn, status, variant = read_variant(aws, finding)
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
    own = ((("EndpointName", endpoint), ("VariantName", name)),)
    busiest = _requests_since(aws, finding, now, resource=f"variant {endpoint}/{name}", alive=SM_CPU, series=own)
    limit = float(allowed) if isinstance(allowed, int | float) else 0.0
    if busiest is not None and busiest > limit:
        raise GuardRefusal(
            f"variant {endpoint}/{name} became busier since the scan: {busiest:.0f} requests in an hour "
            f"(the scan's peak was {limit:.0f})"
        )
    calls, undo = capacity_calls(endpoint, endpoint_arn, name, finding.finding_id, target_count, count)
    before = {"endpoint": endpoint, "variant": name, "status": status, "instance_count": count}
    return RemediationPlan(VARIANT_CAPACITY, f"variant {endpoint}/{name}", calls, undo, before)


def capacity_calls(
    endpoint: str, endpoint_arn: str, variant: str, finding_id: str, target: int, count: int
) -> tuple[list[ApiCall], list[ApiCall]]:
    """Mark the endpoint and set the variant's instance count to ``target``; the undo restores ``count``."""
    mark, unmark = sagemaker_mark(endpoint_arn, finding_id)

    def capacity(instances: int) -> ApiCall:
        return ApiCall(
            "sagemaker",
            "UpdateEndpointWeightsAndCapacities",
            {
                "EndpointName": endpoint,
                "DesiredWeightsAndCapacities": [{"VariantName": variant, "DesiredInstanceCount": instances}],
            },
        )

    return [mark, capacity(target)], [unmark, capacity(count)]


def plan_endpoint_delete(aws: AwsContext, finding: FindingFacts, now: datetime) -> RemediationPlan:
    """An idle endpoint is deleted only with its configuration kept (its endpoint config, which DeleteEndpoint leaves,
    and a copy of it in the audit row): the rollback creates the endpoint again from it, the config too if it is gone
    by then."""
    endpoint_arn = finding.resource_arn
    endpoint = endpoint_name(endpoint_arn)
    sm = aws.client("sagemaker")
    described = read_again(f"endpoint {endpoint}", lambda: sm.describe_endpoint(EndpointName=endpoint))
    tags = endpoint_tags(aws, endpoint_arn)
    refuse_protected(tags, f"endpoint {endpoint}")
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
    _refuse_if_served(aws, finding, now, resource=f"endpoint {endpoint}", alive=SM_CPU, series=dims)
    recreate: dict[str, Any] = {"EndpointName": endpoint, "EndpointConfigName": config_name}
    if tags:
        recreate["Tags"] = [{"Key": k, "Value": v} for k, v in tags.items()]
    calls, undo = delete_calls(endpoint, endpoint_arn, finding.finding_id, recreate)
    before = {"endpoint": endpoint, "status": status, "instance_count": count, "endpoint_config": kept}
    return RemediationPlan(ENDPOINT_DELETE, f"endpoint {endpoint}", calls, undo, before)


def delete_calls(
    endpoint: str, endpoint_arn: str, finding_id: str, recreate: dict[str, Any]
) -> tuple[list[ApiCall], list[ApiCall]]:
    """Mark and delete the endpoint; the undo creates it again (``recreate``: its name, config and tags)."""
    mark, unmark = sagemaker_mark(endpoint_arn, finding_id)
    return (
        [mark, ApiCall("sagemaker", "DeleteEndpoint", {"EndpointName": endpoint})],
        [unmark, ApiCall("sagemaker", "CreateEndpoint", recreate)],
    )


def plan_variant_schedule(aws: AwsContext, finding: FindingFacts) -> RemediationPlan:
    """An endpoint variant that works office hours: registered as an Application Auto Scaling scalable target (its
    MinCapacity/MaxCapacity kept if it already was one), with a scheduled action per off stretch that scales it to
    :data:`OFF_HOURS_CAPACITY` at the stretch's start and one that scales it back to its current count at its end
    (cron, UTC, as the finding's pattern was read). Rollback deletes the actions and restores (or deregisters) the
    target. A variant keeps one instance: scaling to zero needs inference components, which a person sets up."""
    crons = off_hours_crons(str(finding.evidence.get("off_stretches") or ""))
    if not crons:
        raise InvalidInput(f"finding {finding.finding_id[:8]} names no off stretch to schedule")
    endpoint, endpoint_arn, status, variant = read_variant(aws, finding)
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
    autoscaling = aws.client("application-autoscaling")
    registered = autoscaling.describe_scalable_targets(
        ServiceNamespace=AAS_NAMESPACE, ResourceIds=[resource_id], ScalableDimension=AAS_DIMENSION
    ).get("ScalableTargets", [])
    names = {n for pair in action_names(finding.finding_id, len(crons)) for n in pair}
    existing = {
        str(a["ScheduledActionName"])
        for a in autoscaling.describe_scheduled_actions(
            ServiceNamespace=AAS_NAMESPACE, ResourceId=resource_id, ScalableDimension=AAS_DIMENSION
        ).get("ScheduledActions", [])
    }
    if clash := sorted(existing & names):
        raise GuardRefusal(f"{resource} already has the scheduled action {clash[0]}: Chipwise would overwrite it")
    previous: dict[str, Any] | None = None
    if registered:
        kept = registered[0]
        previous = {"MinCapacity": int(kept["MinCapacity"]), "MaxCapacity": int(kept["MaxCapacity"])}
        if kept.get("SuspendedState"):
            previous["SuspendedState"] = dict(kept["SuspendedState"])
    calls, undo = variant_schedule_calls(finding, endpoint_arn, resource_id, crons, count, previous)
    before = {
        "endpoint": endpoint,
        "variant": name,
        "instance_count": count,
        "scalable_target": previous,
        "schedule": finding.evidence.get("schedule"),
        "crons": crons,
    }
    return RemediationPlan(VARIANT_SCHEDULE, resource, calls, undo, before)


def action_names(finding_id: str, stretches: int) -> list[tuple[str, str]]:
    """The (off, on) scheduled action names of each off stretch."""
    return [
        (f"chipwise-{finding_id[:8]}-{i}-off", f"chipwise-{finding_id[:8]}-{i}-on") for i in range(1, stretches + 1)
    ]


def variant_schedule_calls(
    finding: FindingFacts,
    endpoint_arn: str,
    resource_id: str,
    crons: list[tuple[str, str]],
    count: int,
    previous: dict[str, Any] | None,
) -> tuple[list[ApiCall], list[ApiCall]]:
    """Mark the endpoint, register the variant as a scalable target (as ``previous`` was registered, else at
    ``count``) and put an off and an on action per stretch; the undo deletes them and restores the target."""
    target_id = {"ServiceNamespace": AAS_NAMESPACE, "ResourceId": resource_id, "ScalableDimension": AAS_DIMENSION}
    low, high = (previous["MinCapacity"], previous["MaxCapacity"]) if previous else (count, count)
    mark, unmark = sagemaker_mark(endpoint_arn, finding.finding_id)
    calls = [
        mark,
        ApiCall(
            "application-autoscaling", "RegisterScalableTarget", {**target_id, "MinCapacity": low, "MaxCapacity": high}
        ),
    ]
    undo = [
        unmark,
        ApiCall("application-autoscaling", "RegisterScalableTarget", {**target_id, **previous})
        if previous
        else ApiCall("application-autoscaling", "DeregisterScalableTarget", dict(target_id)),
    ]
    names = action_names(finding.finding_id, len(crons))
    for (off_cron, on_cron), (off_name, on_name) in zip(crons, names, strict=True):
        for action_name, cron, capacity in (
            (off_name, off_cron, {"MinCapacity": OFF_HOURS_CAPACITY, "MaxCapacity": OFF_HOURS_CAPACITY}),
            (on_name, on_cron, {"MinCapacity": count, "MaxCapacity": max(high, count)}),
        ):
            scheduled = {**target_id, "ScheduledActionName": action_name}
            calls.append(
                ApiCall(
                    "application-autoscaling",
                    "PutScheduledAction",
                    {**scheduled, "Schedule": cron, "Timezone": "UTC", "ScalableTargetAction": capacity},
                )
            )
            undo.append(ApiCall("application-autoscaling", "DeleteScheduledAction", scheduled))
    return calls, undo


def restore_kept_config(aws: AwsContext, before: dict[str, Any]) -> None:
    """Before a deleted endpoint is created again: its endpoint config, from the kept copy, if it is gone."""
    kept = before.get("endpoint_config")
    if not isinstance(kept, dict) or not kept.get("EndpointConfigName"):
        return
    sm = aws.client("sagemaker")
    try:
        sm.describe_endpoint_config(EndpointConfigName=str(kept["EndpointConfigName"]))
    except ClientError as exc:
        if not is_gone(exc):
            raise
        sm.create_endpoint_config(**kept)
