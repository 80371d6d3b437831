"""SageMaker endpoints: one resource per endpoint, or per production variant when it has several, and one per
inference component its variants host (:mod:`chipwise.collect.inventory.inference_components`)."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from botocore.exceptions import ClientError

from chipwise.aws import AwsContext
from chipwise.collect.hints import ModelPlace, workload_hints
from chipwise.collect.inventory.answers import CALL_ERRORS, jsonable, problem
from chipwise.collect.inventory.answers import tags as tag_map
from chipwise.collect.inventory.inference_components import (
    component_resource,
    hosts_components,
    read_inference_components,
    unreserved_capacity,
    with_reservations,
    within_variant,
)
from chipwise.collect.inventory.instance_types import TypeFactsReader, typed_resource
from chipwise.collect.inventory.listed import Listed, describe_listed
from chipwise.collect.inventory.registry import register
from chipwise.models.common import SERVING_KINDS
from chipwise.models.records import CollectedResource, Inventory
from chipwise.models.resources import EndpointDetails, EndpointVariant, InferenceComponent

_UNKNOWN_CONTAINER: dict[str, Any] = {"image": None, "environment": {}, "model_data_url": None}


@dataclass
class _ModelCache:
    """describe_model answers by name: endpoints often share a model. A model that cannot be described (SageMaker
    lets a model be deleted while its endpoint keeps serving) is remembered as unknown, with its error."""

    fetch: Callable[[str], dict[str, Any]]
    seen: dict[str, dict[str, Any]] = field(default_factory=dict)
    failed: dict[str, ClientError] = field(default_factory=dict)

    def get(self, name: str) -> dict[str, Any]:
        if name in self.failed:
            return dict(_UNKNOWN_CONTAINER)
        if name not in self.seen:
            try:
                self.seen[name] = self.fetch(name)
            except ClientError as exc:
                self.failed[name] = exc
                return dict(_UNKNOWN_CONTAINER)
        return self.seen[name]


@register(
    name="inventory.sagemaker_endpoints",
    kinds=SERVING_KINDS,
    listing_calls=("sagemaker.ListEndpoints",),
    detail_calls=(
        "sagemaker.DescribeEndpoint",
        "sagemaker.DescribeEndpointConfig",
        "sagemaker.ListTags",
        "sagemaker.DescribeModel",
        "sagemaker.ListInferenceComponents",
        "sagemaker.DescribeInferenceComponent",
    ),
)
def collect_sagemaker_endpoints(aws: AwsContext, _account_id: str, _window_start: datetime) -> Inventory:
    """Every endpoint with its variants (instance type and count or serverless config) and primary container.
    An endpoint with several production variants becomes one resource per variant (see :func:`endpoint_resources`);
    an endpoint whose variants host inference components gets them read (ListInferenceComponents).

    One endpoint never blinds the others: an endpoint deleted between the listing and the describe call is
    skipped; one whose model cannot be described (deleted while the endpoint serves) is recorded with what is
    known and a problem; one that cannot be described for another reason is a problem and is not marked gone.
    Only a failed listing fails the source."""
    sm = aws.client("sagemaker")
    models = _ModelCache(lambda name: _model_container(dict(sm.describe_model(ModelName=name))))
    types = TypeFactsReader(aws)
    result = Inventory()
    for page in sm.get_paginator("list_endpoints").paginate():
        for summary in page.get("Endpoints", []):
            name, arn = str(summary["EndpointName"]), str(summary.get("EndpointArn") or "")
            described = describe_listed(result, Listed("sagemaker_endpoint", name, arn), _describe, sm, name)
            if described is None:
                continue
            endpoint, config, tags = described
            components: list[InferenceComponent] = []
            components_read = True
            if hosts_components(config):
                try:
                    components = read_inference_components(aws, name)
                except CALL_ERRORS as exc:
                    components_read = False
                    kept = "the stored components are kept"
                    result.problems.append(
                        problem(arn, name, exc, recorded=True, what="inference components", note=kept)
                    )
                    result.keep_children_of.add(arn)
            failed_before = set(models.failed)
            types.prefetch(v.get("InstanceType") for v in config.get("ProductionVariants") or [])
            resources = endpoint_resources(endpoint, config, tags, models, components, types, components_read)
            result.resources.extend(resources)
            if resources and all(r.key != arn for r in resources):
                result.listed_arns.discard(arn)  # described: its variants stand for it (and the endpoint is gone)
            for model_name in set(models.failed) - failed_before or _models_of(config) & set(models.failed):
                error = models.failed[model_name]
                result.problems.append(problem(arn, name, error, recorded=True, what=f"model {model_name}"))
    result.problems.extend(types.problems)
    return result


def _describe(sm: Any, name: str) -> tuple[dict[str, Any], dict[str, Any], dict[str, str]]:
    """DescribeEndpoint, its DescribeEndpointConfig and its tags."""
    endpoint: dict[str, Any] = dict(sm.describe_endpoint(EndpointName=name))
    config: dict[str, Any] = dict(sm.describe_endpoint_config(EndpointConfigName=endpoint["EndpointConfigName"]))
    tags = tag_map(sm.list_tags(ResourceArn=endpoint["EndpointArn"]).get("Tags"))
    return endpoint, config, tags


def _models_of(config: Mapping[str, Any]) -> set[str]:
    return {str(v["ModelName"]) for v in config.get("ProductionVariants") or [] if v.get("ModelName")}


def _model_container(model: dict[str, Any]) -> dict[str, Any]:
    container: dict[str, Any] = model.get("PrimaryContainer") or next(iter(model.get("Containers") or []), {})
    source = ((container.get("ModelDataSource") or {}).get("S3DataSource") or {}).get("S3Uri")
    return {
        "image": container.get("Image"),
        "environment": dict(container.get("Environment") or {}),
        "model_data_url": container.get("ModelDataUrl") or source,
    }


def _endpoint_variants(endpoint: dict[str, Any], config: dict[str, Any], models: _ModelCache) -> list[EndpointVariant]:
    live = {v["VariantName"]: v for v in endpoint.get("ProductionVariants") or []}
    variants = []
    for variant in config.get("ProductionVariants") or []:
        now = live.get(variant["VariantName"], {})
        serverless = now.get("CurrentServerlessConfig") or variant.get("ServerlessConfig")
        count = now.get("CurrentInstanceCount", variant.get("InitialInstanceCount"))
        model_name = variant.get("ModelName")
        container: dict[str, Any] = models.get(model_name) if model_name else dict(_UNKNOWN_CONTAINER)
        variants.append(
            EndpointVariant(
                variant_name=variant["VariantName"],
                instance_type=variant.get("InstanceType"),
                instance_count=0 if serverless and not variant.get("InstanceType") else int(count or 0),
                serverless=jsonable(serverless) if serverless else None,
                model_name=model_name,
                image=container["image"],
                environment=container["environment"],
                weight=now.get("CurrentWeight", variant.get("InitialVariantWeight")),
                model_data_url=container.get("model_data_url"),
            )
        )
    return variants


def endpoint_resources(
    endpoint: dict[str, Any],
    config: dict[str, Any],
    tags: dict[str, str],
    models: _ModelCache,
    components: Sequence[InferenceComponent] = (),
    types: TypeFactsReader | None = None,
    components_read: bool = True,
) -> list[CollectedResource]:
    """The resources of one endpoint: the endpoint itself when it has one production variant; one resource per
    variant when it has several (an A/B test, a canary, a shadow), each with its own instance type, count, model
    and metrics (``EndpointName`` + ``VariantName``), named ``<endpoint>/<variant>``. SageMaker bills endpoint
    hours by usage type per instance type, so each variant's cost is its instance type's rate x its count x hours
    (``cost_basis``).

    Each inference component is a resource too (``<endpoint>/<component>``, metrics by ``InferenceComponentName``)
    whose cost is its reserved share of its variant
    (:func:`~chipwise.collect.inventory.inference_components.component_reservation`); the variant then pays only
    for what no component reserves, so a dollar is never counted on both. When the components could not be read
    (``components_read`` false) the variant's own share is unknown: it gets no figure this scan, and its stored
    components are kept with theirs."""
    variants = _endpoint_variants(endpoint, config, models)
    types = types or TypeFactsReader(None)
    split = len(variants) > 1
    groups = [[variant] for variant in variants] if split else [variants]
    resources: list[CollectedResource] = []
    for group in groups:
        variant_resource, placed = _endpoint_resource(
            endpoint, config, tags, group, components, types, split=split, components_read=components_read
        )
        resources.append(variant_resource)
        resources.extend(component_resource(endpoint, tags, variant_resource, c) for c in placed)
    return resources


def _endpoint_resource(
    endpoint: dict[str, Any],
    config: dict[str, Any],
    tags: dict[str, str],
    variants: list[EndpointVariant],
    components: Sequence[InferenceComponent],
    types: TypeFactsReader,
    *,
    split: bool,
    components_read: bool = True,
) -> tuple[CollectedResource, list[InferenceComponent]]:
    provisioned = [v for v in variants if v.instance_type]
    instance_type = provisioned[0].instance_type if provisioned else None
    count = sum(v.instance_count for v in provisioned if v.instance_type == instance_type)
    typ = types.facts(instance_type)
    primary = variants[0] if variants else EndpointVariant(variant_name="")
    names = {v.variant_name for v in variants}
    own = [c for c in components if c.variant_name is None or c.variant_name in names]
    own = within_variant(with_reservations(own, instance_type, typ), count, instance_type)
    endpoint_name = str(endpoint["EndpointName"])
    arn, name = str(endpoint["EndpointArn"]), endpoint_name
    basis = None
    if split:
        name = f"{endpoint_name}/{primary.variant_name}"
        basis = (
            f"variant {primary.variant_name} of {endpoint_name}: {count} x {instance_type} (SageMaker bills hosting "
            "per instance type; the variant's share is its type's hourly rate x its instance count x hours)"
            if instance_type
            else f"variant {primary.variant_name} of {endpoint_name}: serverless, billed per request"
        )
    billed, unreserved_basis = unreserved_capacity(count, instance_type, own)
    share_unknown = not components_read and bool(instance_type)
    if share_unknown:
        billed, unreserved_basis = (
            None,
            (
                "inference components could not be read this scan: the share no component reserves is unknown, so "
                "this resource has no figure (its stored components keep theirs)"
            ),
        )
    if unreserved_basis:
        basis = f"{basis}; {unreserved_basis}" if basis else unreserved_basis
    details = EndpointDetails(
        endpoint_config_name=endpoint.get("EndpointConfigName"),
        variants=variants,
        async_inference=bool(config.get("AsyncInferenceConfig")),
        catalog=typ.facts,
        endpoint_name=endpoint_name,
        variant_name=primary.variant_name if split else None,
        cost_basis=basis,
        inference_components=list(own),
        billed_instances=billed,
        billed_unknown=share_unknown,
    )
    # One component names the variant's model; several name one each (their resources say which), not the variant's
    alone = own if len(own) == 1 else []
    places = [ModelPlace(c.environment, c.artifact_url, label=f"inference_component:{c.name}") for c in alone]
    image = primary.image or next((c.image for c in alone if c.image), None)
    resource = typed_resource(
        typ,
        arn=arn,
        variant=primary.variant_name if split else None,
        parent_arn=arn if split else None,
        kind="sagemaker_endpoint",
        name=name,
        instance_type=instance_type,
        instance_count=count,
        state=endpoint.get("EndpointStatus"),
        launched_at=endpoint.get("CreationTime"),
        tags=tags,
        hints=workload_hints(
            tags=tags,
            kind="sagemaker_endpoint",
            image=image,
            environment=primary.environment,
            model_data_url=primary.model_data_url,
            components=places,
        ),
        details=details,
    )
    return resource, own
