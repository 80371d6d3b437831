"""SageMaker inference components: read for an endpoint whose variants host them, each a resource of its own whose
cost is the share of its variant's instances it reserves (the variant then pays only for what no component
reserves, so a dollar is never counted on both)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from decimal import Decimal
from typing import Any

from chipwise.aws import AwsContext
from chipwise.collect.hints import workload_hints
from chipwise.collect.inventory.instance_types import TypeFacts
from chipwise.models.common import Platform
from chipwise.models.records import CollectedResource
from chipwise.models.resources import (
    EndpointDetails,
    InferenceComponent,
    InferenceComponentDetails,
    component_arn,
)


def hosts_components(config: Mapping[str, Any]) -> bool:
    """An endpoint for inference components: its provisioned variants name no model (the components do)."""
    variants = config.get("ProductionVariants") or []
    return any(v.get("InstanceType") and not v.get("ModelName") for v in variants)


def read_inference_components(aws: AwsContext, endpoint_name: str) -> list[InferenceComponent]:
    """Every inference component of an endpoint (ListInferenceComponents, then DescribeInferenceComponent each)."""
    sm = aws.client("sagemaker")
    found: list[InferenceComponent] = []
    pages = sm.get_paginator("list_inference_components").paginate(EndpointNameEquals=endpoint_name)
    for page in pages:
        for summary in page.get("InferenceComponents", []):
            described = sm.describe_inference_component(InferenceComponentName=summary["InferenceComponentName"])
            found.append(inference_component(dict(described)))
    return found


def inference_component(described: Mapping[str, Any]) -> InferenceComponent:
    """One DescribeInferenceComponent answer as stored details."""
    spec = described.get("Specification") or {}
    container = spec.get("Container") or {}
    compute = spec.get("ComputeResourceRequirements") or {}
    runtime = described.get("RuntimeConfig") or {}
    copies = runtime.get("CurrentCopyCount", runtime.get("DesiredCopyCount"))
    accelerators = compute.get("NumberOfAcceleratorDevicesRequired")
    return InferenceComponent(
        name=str(described["InferenceComponentName"]),
        arn=described.get("InferenceComponentArn"),
        variant_name=described.get("VariantName"),
        status=described.get("InferenceComponentStatus"),
        model_name=spec.get("ModelName"),
        image=container.get("Image") or container.get("DeployedImage", {}).get("SpecifiedImage"),
        artifact_url=container.get("ArtifactUrl"),
        environment={str(k): str(v) for k, v in (container.get("Environment") or {}).items()},
        accelerators_required=None if accelerators is None else Decimal(str(accelerators)),
        copies=None if copies is None else int(copies),
        created_at=described.get("CreationTime"),
    )


def component_reservation(
    component: InferenceComponent, instance_type: str | None, platform: Platform, accelerators_per_instance: int
) -> tuple[Decimal | None, str]:
    """The share of its variant's instances an inference component reserves, in instance-equivalents: copies x
    ``NumberOfAcceleratorDevicesRequired`` / the instance type's GPUs, with the basis (or why it is unknown).

    Only for GPU instances: SageMaker documents the field as "accelerators (GPUs and AWS Inferentia)" without
    saying whether a Neuron instance counts devices or NeuronCores, so a Neuron share is left unknown rather than
    guessed (a wrong share would move dollars between resources)."""
    from chipwise.presentation import plural  # wording: only inference components' shares need it

    label = f"inference component {component.name}"
    if not instance_type:
        return None, f"{label}: serverless variant, no instances to share"
    if platform != "nvidia":
        return None, (
            f"{label}: share of {instance_type} unknown (NumberOfAcceleratorDevicesRequired is not documented as "
            "devices or NeuronCores on this platform)"
        )
    if component.copies is None or component.accelerators_required is None or accelerators_per_instance < 1:
        return None, f"{label}: share of {instance_type} unknown (no copy count or accelerators required)"
    reserved = Decimal(component.copies) * component.accelerators_required / Decimal(accelerators_per_instance)
    basis = (
        f"{label}: {component.copies} cop{'y' if component.copies == 1 else 'ies'} x "
        f"{plural(component.accelerators_required, 'GPU')} / "
        f"{accelerators_per_instance} GPUs per {instance_type} = {plural(reserved, 'instance')} reserved"
    )
    return reserved, basis


def with_reservations(
    components: Sequence[InferenceComponent], instance_type: str | None, typ: TypeFacts
) -> list[InferenceComponent]:
    per_instance = int(typ.facts.get("accelerator_count") or 0)
    placed = []
    for component in components:
        reserved, basis = component_reservation(component, instance_type, typ.platform, per_instance)
        placed.append(component.model_copy(update={"instances_reserved": reserved, "cost_basis": basis}))
    return placed


def within_variant(
    components: list[InferenceComponent], count: int, instance_type: str | None
) -> list[InferenceComponent]:
    """The components' shares, unless together they reserve more than the variant runs (copies waiting for
    capacity, or a count read mid-scaling): then no share can be told from the bill and every one is unknown."""
    from chipwise.presentation import plural

    reserved = sum((c.instances_reserved for c in components if c.instances_reserved is not None), Decimal(0))
    if reserved <= count:
        return components
    reason = (
        f"share unknown: the inference components reserve {plural(reserved, 'instance')} but the variant "
        f"runs {count} x {instance_type} (copies waiting for capacity)"
    )
    return [
        c.model_copy(update={"instances_reserved": None, "cost_basis": f"inference component {c.name}: {reason}"})
        for c in components
    ]


def unreserved_capacity(
    count: int, instance_type: str | None, components: Sequence[InferenceComponent]
) -> tuple[Decimal | None, str | None]:
    """The instance-equivalents of a variant no inference component reserves, with the basis; ``(None, None)``
    when no component's share is known (the variant keeps its whole cost and the components have none). A
    component whose share is unknown leaves its capacity with the variant (said in the basis), so that the
    variant's and the components' dollars add up to the variant's bill and never exceed it."""
    from chipwise.presentation import plural

    known = [c for c in components if c.instances_reserved is not None]
    if not instance_type or not known:
        return None, None
    reserved = sum((c.instances_reserved for c in known if c.instances_reserved is not None), Decimal(0))
    remaining = Decimal(count) - reserved
    names = ", ".join(c.name for c in known)
    basis = (
        f"inference components ({names}) reserve {reserved.normalize():f} of {count} x {instance_type}: this "
        f"resource's cost is the {plural(remaining, 'instance')} no component reserves"
    )
    unknown = [c.name for c in components if c.instances_reserved is None]
    if unknown:
        basis += f"; the share of {', '.join(unknown)} is unknown and stays with this resource"
    return remaining, basis


def component_resource(
    endpoint: Mapping[str, Any], tags: dict[str, str], variant: CollectedResource, component: InferenceComponent
) -> CollectedResource:
    """An inference component as its own resource, on the instance type of the variant it is placed on."""
    endpoint_name = str(endpoint["EndpointName"])
    details = variant.details if isinstance(variant.details, EndpointDetails) else None
    variant_name = component.variant_name or (
        details.variants[0].variant_name if details and details.variants else None
    )
    hints = workload_hints(
        tags=tags,
        kind="sagemaker_inference_component",
        image=component.image,
        environment=component.environment,
        model_data_url=component.artifact_url,
    )
    endpoint_arn = str(endpoint["EndpointArn"])
    return CollectedResource(
        arn=component.arn or component_arn(endpoint_arn, component.name),
        parent_arn=endpoint_arn,
        kind="sagemaker_inference_component",
        name=f"{endpoint_name}/{component.name}",
        instance_type=variant.instance_type,
        instance_count=component.copies or 0,
        platform=variant.platform,
        state=component.status,
        unknown_instance_type=variant.unknown_instance_type,
        launched_at=component.created_at or endpoint.get("CreationTime"),
        tags=tags,
        hints=hints,
        details=InferenceComponentDetails(
            component=component,
            endpoint_name=endpoint_name,
            endpoint_arn=endpoint_arn,
            variant_name=variant_name,
            catalog=details.catalog if details else {},
        ),
    )
