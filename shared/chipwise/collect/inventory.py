"""Inventory: accelerator EC2 instances (EKS nodes included), SageMaker endpoints and training jobs, AWS Batch
compute environments (with their job queues and recent jobs).

Each collector returns :class:`CollectedResource` records with the catalog's facts, every tag, workload hints
and the details the metric collector and the rules need (endpoint variants, training hosts, EKS cluster).
An instance type the catalog does not know is kept and flagged (``unknown_instance_type``), never dropped.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from decimal import Decimal
from typing import Any

from botocore.exceptions import ClientError

from chipwise.aws import AwsContext, Projection, lean_client
from chipwise.catalog import get_catalog
from chipwise.catalog.ec2_facts import facts_from_ec2, platform_from_ec2
from chipwise.collect.hints import ModelPlace, workload_hints
from chipwise.models.common import Platform
from chipwise.models.records import CollectedResource, Inventory, ResourceProblem
from chipwise.models.resources import (
    BatchEnvironmentDetails,
    BatchJobQueue,
    CapacityReservationDetails,
    EndpointDetails,
    EndpointVariant,
    HyperPodClusterDetails,
    HyperPodInstanceGroup,
    InferenceComponent,
    InferenceComponentDetails,
    InstanceDetails,
    NotebookInstanceDetails,
    ProvisionedThroughputDetails,
    StudioAppDetails,
    TrainingJobDetails,
    component_arn,
)

# How long a SageMaker training job may run (its MaxRuntimeInSeconds ceiling): older jobs cannot overlap.
MAX_TRAINING_DAYS = 28
_EC2_LIVE_STATES = ["pending", "running", "stopping", "stopped"]
# What the inventory reads of DescribeInstances: the rest of an instance (~60 members, network interfaces, block
# devices, ...) is never parsed, the listing's largest CPU cost. A member added to _ec2_resource must be added here.
EC2_LISTING: Projection = (
    ("DescribeInstancesResult", ("Reservations", "NextToken")),
    ("Reservation", ("OwnerId", "Instances")),
    (
        "Instance",
        (
            "InstanceId",
            "InstanceType",
            "Tags",
            "ImageId",
            "Placement",
            "PrivateDnsName",
            "InstanceLifecycle",
            "State",
            "LaunchTime",
        ),
    ),
)
_EKS_CLUSTER_TAGS = ("eks:cluster-name", "aws:eks:cluster-name", "alpha.eksctl.io/cluster-name")
_K8S_CLUSTER_TAG = re.compile(r"^kubernetes\.io/cluster/(?P<name>.+)$")
MAX_RECENT_BATCH_JOBS = 50
DESCRIBE_TYPES_PAGE = 100  # DescribeInstanceTypes takes up to 100 names per call


@dataclass(frozen=True)
class TypeFacts:
    """What the catalog (or EC2 itself) says about an instance type, and whether the catalog lacks it."""

    platform: Platform
    unknown: bool
    facts: dict[str, Any]


def type_facts(instance_type: str | None, described: Mapping[str, Mapping[str, Any]] | None = None) -> TypeFacts:
    """Platform and facts: the catalog's row; else EC2's own DescribeInstanceTypes answer (``described``, by EC2
    name) with no price; else the platform the catalog records for the family; else ``other`` (an accelerator may
    hide behind a name nobody knows: it is kept, flagged, never guessed from its prefix)."""
    if not instance_type:
        return TypeFacts("cpu", False, {})
    catalog = get_catalog()
    found = catalog.get(instance_type)
    if found is not None:
        facts = {
            "accelerator": found.accelerator,
            "accelerator_count": found.accelerator_count,
            "neuron_cores": found.neuron_cores,
            "neuron_devices": found.neuron_devices,
            "accelerator_memory_gib": str(found.accelerator_memory_gib),
            "vcpu": found.vcpu,
            "memory_gib": str(found.memory_gib),
            "price_usd_per_hour": None if found.price_usd_per_hour is None else str(found.price_usd_per_hour),
            "price_source": found.price_source,
        }
        if found.accelerator_fraction is not None:
            facts["accelerator_fraction"] = str(found.accelerator_fraction)
        return TypeFacts(found.platform, False, facts)
    ec2_name = instance_type.strip().lower().removeprefix("ml.")
    info = (described or {}).get(ec2_name)
    if info is not None:
        return TypeFacts(platform_from_ec2(info), True, facts_from_ec2(info))
    known: Platform | None = catalog.platform_of_family(ec2_name.split(".", 1)[0])
    return TypeFacts(known or "other", True, {})


class TypeFactsReader:
    """DescribeInstanceTypes for the types the catalog lacks, asked once per type and collector. A type EC2 does
    not know (a SageMaker-only name, a typo) or a refused call leaves the type to :func:`type_facts`' fallbacks.
    A refused call (denied, throttled past the retries: any error but ``InvalidInstanceType``) is not silent: it is
    kept in :attr:`problems` (name ``describe_instance_types``, the code, the types asked), which the collector's
    :class:`Inventory` carries to the scan document (the scan ends ``partial``; the inventory goes on)."""

    PROBLEM_NAME = "describe_instance_types"

    def __init__(self, aws: AwsContext | None) -> None:
        self._aws = aws
        self.described: dict[str, dict[str, Any]] = {}
        self._asked: set[str] = set()
        self.problems: list[ResourceProblem] = []

    def prefetch(self, names: Iterable[str | None]) -> None:
        catalog = get_catalog()
        unknown = {n.strip().lower().removeprefix("ml.") for n in names if n and "." in n and catalog.get(n) is None}
        wanted = sorted(unknown - self._asked)
        if not wanted or self._aws is None:
            return
        self._asked.update(wanted)
        for start in range(0, len(wanted), DESCRIBE_TYPES_PAGE):
            self._describe(wanted[start : start + DESCRIBE_TYPES_PAGE])

    def _describe(self, names: list[str]) -> None:
        assert self._aws is not None
        try:
            answer = self._aws.client("ec2").describe_instance_types(InstanceTypes=names)  # type: ignore[arg-type]
        except ClientError as exc:
            code = _error_code(exc)
            if code == "InvalidInstanceType":
                if len(names) > 1:
                    for name in names:  # one unknown name fails the whole call: ask for each alone
                        self._describe([name])
                return  # EC2 does not know this one type: the family table or `other`, as documented
            message = (
                f"DescribeInstanceTypes refused for {', '.join(names)}: {_message(exc)}; "
                "these types fall back to the catalog's family table or 'other'"
            )
            self.problems.append(ResourceProblem("", self.PROBLEM_NAME, code, message, recorded=True))
            return
        for item in answer.get("InstanceTypes", []):
            self.described[str(item["InstanceType"])] = dict(item)

    def facts(self, instance_type: str | None) -> TypeFacts:
        self.prefetch([instance_type])
        return type_facts(instance_type, self.described)


def _tags(items: Iterable[Mapping[str, Any]] | None) -> dict[str, str]:
    return {str(t["Key"]): str(t.get("Value", "")) for t in items or [] if "Key" in t}


def _jsonable(value: Any) -> Any:
    """AWS response values as JSON (datetimes as ISO strings), for ``details``."""
    if isinstance(value, datetime):
        return value.isoformat()
    if isinstance(value, Decimal):
        return str(value)
    if isinstance(value, Mapping):
        return {str(k): _jsonable(v) for k, v in value.items() if k != "ResponseMetadata"}
    if isinstance(value, list | tuple):
        return [_jsonable(v) for v in value]
    return value


# --- EC2 -------------------------------------------------------------------------------------------------------


def eks_cluster(tags: Mapping[str, str]) -> str | None:
    """The EKS cluster an instance is a node of, from its tags."""
    for key in _EKS_CLUSTER_TAGS:
        if tags.get(key):
            return tags[key]
    for key in tags:
        match = _K8S_CLUSTER_TAG.match(key)
        if match:
            return match["name"]
    return None


def collect_ec2_instances(
    aws: AwsContext, account_id: str, types: TypeFactsReader | None = None
) -> list[CollectedResource]:
    """Live EC2 instances of accelerator types (CPU instances are not Chipwise's business). ``types`` (a reader
    the caller keeps) lets the caller see a refused DescribeInstanceTypes call in its ``problems``."""
    ec2 = lean_client(aws, "ec2", projection=EC2_LISTING)
    listed: list[tuple[dict[str, Any], str]] = []
    pages = ec2.get_paginator("describe_instances").paginate(
        Filters=[{"Name": "instance-state-name", "Values": _EC2_LIVE_STATES}], PaginationConfig={"PageSize": 1000}
    )
    for page in pages:
        for reservation in page.get("Reservations", []):
            owner = reservation.get("OwnerId") or account_id
            listed.extend((dict(instance), owner) for instance in reservation.get("Instances", []))
    types = types or TypeFactsReader(aws)
    types.prefetch(str(i.get("InstanceType", "")) for i, _ in listed)
    found: list[CollectedResource] = []
    for instance, owner in listed:
        resource = _ec2_resource(instance, owner, aws.region, types)
        if resource.platform != "cpu":
            found.append(resource)
    return found


def ec2_resource(
    instance: Mapping[str, Any], owner: str, region: str, types: TypeFactsReader | None = None
) -> CollectedResource:
    """One DescribeInstances instance as the scan records it (the remediation re-check reads it this way too)."""
    return _ec2_resource(dict(instance), owner, region, types)


def _ec2_resource(
    instance: dict[str, Any], owner: str, region: str, types: TypeFactsReader | None = None
) -> CollectedResource:
    instance_id = str(instance["InstanceId"])
    instance_type = str(instance.get("InstanceType", ""))
    tags = _tags(instance.get("Tags"))
    typ = (types or TypeFactsReader(None)).facts(instance_type)
    cluster = eks_cluster(tags)
    details = InstanceDetails(
        instance_id=instance_id,
        image_id=instance.get("ImageId"),
        availability_zone=(instance.get("Placement") or {}).get("AvailabilityZone"),
        private_dns_name=instance.get("PrivateDnsName") or None,
        lifecycle=instance.get("InstanceLifecycle", "on-demand"),
        eks_cluster=cluster,
        catalog=typ.facts,
    )
    return CollectedResource(
        arn=f"arn:aws:ec2:{region}:{owner}:instance/{instance_id}",
        kind="ec2_instance",
        name=tags.get("Name") or instance_id,
        instance_type=instance_type,
        instance_count=1,
        platform=typ.platform,
        state=(instance.get("State") or {}).get("Name"),
        unknown_instance_type=typ.unknown,
        launched_at=instance.get("LaunchTime"),
        tags=tags,
        hints=workload_hints(tags=tags, kind="ec2_instance"),
        details=details,
    )


# --- SageMaker endpoints ---------------------------------------------------------------------------------------


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


_UNKNOWN_CONTAINER: dict[str, Any] = {"image": None, "environment": {}, "model_data_url": None}
# What SageMaker answers for a name that no longer exists (it has no NotFound code of its own).
_GONE_CODES = frozenset({"ValidationException", "ResourceNotFound", "ResourceNotFoundException"})


def _error_code(exc: ClientError) -> str | None:
    code = exc.response.get("Error", {}).get("Code")
    return str(code) if code else None


def _gone(exc: ClientError) -> bool:
    """Deleted between the listing and the describe call (SageMaker says "Could not find ...")."""
    message = str(exc.response.get("Error", {}).get("Message", "")).lower()
    return _error_code(exc) in _GONE_CODES and ("could not find" in message or "not found" in message)


def collect_sagemaker_endpoints(aws: AwsContext) -> Inventory:
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
            result.listed_arns.add(arn)
            try:
                endpoint: dict[str, Any] = dict(sm.describe_endpoint(EndpointName=name))
                config: dict[str, Any] = dict(
                    sm.describe_endpoint_config(EndpointConfigName=endpoint["EndpointConfigName"])
                )
                tags = _tags(sm.list_tags(ResourceArn=endpoint["EndpointArn"]).get("Tags"))
            except ClientError as exc:
                if _gone(exc):
                    result.listed_arns.discard(arn)
                    continue
                result.problems.append(ResourceProblem(arn, name, _error_code(exc), _message(exc), recorded=False))
                continue
            components: list[InferenceComponent] = []
            components_read = True
            if _hosts_components(config):
                try:
                    components = _inference_components(aws, name)
                except ClientError as exc:
                    components_read = False
                    message = f"inference components: {_message(exc)} (the stored components are kept)"
                    result.problems.append(ResourceProblem(arn, name, _error_code(exc), message, recorded=True))
                    result.keep_children_of.add(arn)
            failed_before = set(models.failed)
            types.prefetch(v.get("InstanceType") for v in config.get("ProductionVariants") or [])
            resources = endpoint_resources(endpoint, config, tags, models, components, types, components_read)
            result.resources.extend(resources)
            if resources and all(r.key != arn for r in resources):
                result.listed_arns.discard(arn)  # described: its variants stand for it (and the endpoint is gone)
            for model_name in set(models.failed) - failed_before or _models_of(config) & set(models.failed):
                error = models.failed[model_name]
                message = f"model {model_name}: {_message(error)}"
                result.problems.append(ResourceProblem(arn, name, _error_code(error), message, recorded=True))
    result.problems.extend(types.problems)
    return result


def _hosts_components(config: Mapping[str, Any]) -> bool:
    """An endpoint for inference components: its provisioned variants name no model (the components do)."""
    variants = config.get("ProductionVariants") or []
    return any(v.get("InstanceType") and not v.get("ModelName") for v in variants)


def _inference_components(aws: AwsContext, endpoint_name: str) -> list[InferenceComponent]:
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


def _with_reservations(
    components: Sequence[InferenceComponent], instance_type: str | None, typ: TypeFacts
) -> list[InferenceComponent]:
    per_instance = int(typ.facts.get("accelerator_count") or 0)
    placed = []
    for component in components:
        reserved, basis = component_reservation(component, instance_type, typ.platform, per_instance)
        placed.append(component.model_copy(update={"instances_reserved": reserved, "cost_basis": basis}))
    return placed


def _models_of(config: Mapping[str, Any]) -> set[str]:
    return {str(v["ModelName"]) for v in config.get("ProductionVariants") or [] if v.get("ModelName")}


def _message(exc: ClientError) -> str:
    return str(exc.response.get("Error", {}).get("Message") or exc)[:500]


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
                serverless=_jsonable(serverless) if serverless else None,
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
    whose cost is its reserved share of its variant (:func:`component_reservation`); the variant then pays only for
    what no component reserves, so a dollar is never counted on both. When the components could not be read
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
        resources.extend(_component_resource(endpoint, tags, variant_resource, c) for c in placed)
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
    own = _within_variant(_with_reservations(own, instance_type, typ), count, instance_type)
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
    resource = CollectedResource(
        arn=arn,
        variant=primary.variant_name if split else None,
        parent_arn=arn if split else None,
        kind="sagemaker_endpoint",
        name=name,
        instance_type=instance_type,
        instance_count=count,
        platform=typ.platform,
        state=endpoint.get("EndpointStatus"),
        unknown_instance_type=typ.unknown,
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


def _within_variant(
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


def _component_resource(
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


# --- SageMaker training jobs -----------------------------------------------------------------------------------


def collect_training_jobs(aws: AwsContext, window_start: datetime) -> Inventory:
    """Training jobs that ran during the window (still running, or ended after it started); a job that cannot be
    described is a problem of its own, the others go on."""
    sm = aws.client("sagemaker")
    types = TypeFactsReader(aws)
    oldest = window_start - timedelta(days=MAX_TRAINING_DAYS)
    result = Inventory()
    found = result.resources
    pages = sm.get_paginator("list_training_jobs").paginate(SortBy="CreationTime", SortOrder="Descending")
    for page in pages:
        summaries = page.get("TrainingJobSummaries", [])
        for summary in summaries:
            if summary["CreationTime"] < oldest:
                result.problems.extend(types.problems)
                return result
            ended = summary.get("TrainingEndTime")
            if summary.get("TrainingJobStatus") != "InProgress" and ended is not None and ended < window_start:
                continue
            name, arn = str(summary["TrainingJobName"]), str(summary.get("TrainingJobArn") or "")
            try:
                job: dict[str, Any] = dict(sm.describe_training_job(TrainingJobName=name))
                tags = _tags(sm.list_tags(ResourceArn=job["TrainingJobArn"]).get("Tags"))
            except ClientError as exc:
                if not _gone(exc):
                    result.problems.append(ResourceProblem(arn, name, _error_code(exc), _message(exc), recorded=False))
                continue
            found.append(_training_resource(job, tags, types))
    result.problems.extend(types.problems)
    return result


def training_hosts(job_name: str, count: int) -> list[str]:
    """The ``Host`` dimension values SageMaker publishes training metrics under."""
    return [f"{job_name}/algo-{n}" for n in range(1, max(1, count) + 1)]


def _training_resource(
    job: dict[str, Any], tags: dict[str, str], types: TypeFactsReader | None = None
) -> CollectedResource:
    config = job.get("ResourceConfig") or {}
    groups = config.get("InstanceGroups") or []
    instance_type = config.get("InstanceType") or (groups[0].get("InstanceType") if groups else None)
    count = int(config.get("InstanceCount") or sum(int(g.get("InstanceCount", 0)) for g in groups) or 1)
    image = (job.get("AlgorithmSpecification") or {}).get("TrainingImage")
    environment = dict(job.get("Environment") or {})
    hyperparameters = {str(k): str(v) for k, v in (job.get("HyperParameters") or {}).items()}
    typ = (types or TypeFactsReader(None)).facts(instance_type)
    name = str(job["TrainingJobName"])
    details = TrainingJobDetails(
        status=job.get("TrainingJobStatus"),
        hosts=list(training_hosts(name, count)),
        training_start=job.get("TrainingStartTime"),
        training_end=job.get("TrainingEndTime"),
        billable_seconds=job.get("BillableTimeInSeconds"),
        training_seconds=job.get("TrainingTimeInSeconds"),
        max_runtime_seconds=(job.get("StoppingCondition") or {}).get("MaxRuntimeInSeconds"),
        spot=bool(job.get("EnableManagedSpotTraining")),
        image=image,
        environment=environment,
        hyperparameters=hyperparameters,
        catalog=typ.facts,
    )
    return CollectedResource(
        arn=str(job["TrainingJobArn"]),
        kind="sagemaker_training_job",
        name=name,
        instance_type=instance_type,
        instance_count=count,
        platform=typ.platform,
        state=job.get("TrainingJobStatus"),
        unknown_instance_type=typ.unknown,
        launched_at=job.get("TrainingStartTime") or job.get("CreationTime"),
        ended_at=job.get("TrainingEndTime"),
        tags=tags,
        hints=workload_hints(
            tags=tags,
            kind="sagemaker_training_job",
            image=image,
            environment=environment,
            model_data_url=_training_model_input(job),
            hyperparameters=hyperparameters,
        ),
        details=details,
    )


def _training_model_input(job: Mapping[str, Any]) -> str | None:
    """The S3 URI of a training channel named ``model`` (JumpStart fine-tunes read the base model from it)."""
    for channel in job.get("InputDataConfig") or []:
        if str(channel.get("ChannelName", "")).lower() == "model":
            return ((channel.get("DataSource") or {}).get("S3DataSource") or {}).get("S3Uri")
    return None


# --- AWS Batch -------------------------------------------------------------------------------------------------


def collect_batch(
    aws: AwsContext, window_start: datetime, types: TypeFactsReader | None = None
) -> list[CollectedResource]:
    """Compute environments, each with the job queues that feed it and their jobs created in the window (``types``
    as for :func:`collect_ec2_instances`)."""
    batch = aws.client("batch")
    queues: dict[str, list[dict[str, Any]]] = {}
    for queue_page in batch.get_paginator("describe_job_queues").paginate():
        for queue in queue_page.get("jobQueues", []):
            recent = _recent_jobs(aws, queue["jobQueueArn"], window_start)
            entry = {"name": queue["jobQueueName"], "arn": queue["jobQueueArn"], "state": queue.get("state")}
            entry |= recent
            for order in queue.get("computeEnvironmentOrder", []):
                queues.setdefault(order["computeEnvironment"], []).append(entry)
    environments: list[dict[str, Any]] = []
    for page in batch.get_paginator("describe_compute_environments").paginate():
        environments.extend(dict(e) for e in page.get("computeEnvironments", []))
    types = types or TypeFactsReader(aws)
    types.prefetch(t for e in environments for t in (e.get("computeResources") or {}).get("instanceTypes") or [])
    found: list[CollectedResource] = []
    for env in environments:
        attached = queues.get(env["computeEnvironmentArn"], []) + queues.get(env["computeEnvironmentName"], [])
        found.append(_batch_resource(env, attached, types))
    return found


def _recent_jobs(aws: AwsContext, queue_arn: str, window_start: datetime) -> dict[str, Any]:
    after = str(int(window_start.timestamp() * 1000))
    jobs: list[dict[str, Any]] = []
    pages = (
        aws.client("batch")
        .get_paginator("list_jobs")
        .paginate(jobQueue=queue_arn, filters=[{"name": "AFTER_CREATED_AT", "values": [after]}])
    )
    for page in pages:
        jobs.extend(dict(j) for j in page.get("jobSummaryList", []))
    by_status: dict[str, int] = {}
    for job in jobs:
        status = str(job.get("status", "UNKNOWN"))
        by_status[status] = by_status.get(status, 0) + 1
    recent = sorted(jobs, key=lambda j: j.get("createdAt", 0), reverse=True)[:MAX_RECENT_BATCH_JOBS]
    return {
        "jobs_in_window": len(jobs),
        "jobs_by_status": by_status,
        "recent_jobs": [
            {"job_id": j.get("jobId"), "name": j.get("jobName"), "status": j.get("status")} for j in recent
        ],
    }


def _batch_resource(
    env: dict[str, Any], queues: list[dict[str, Any]], reader: TypeFactsReader | None = None
) -> CollectedResource:
    compute = env.get("computeResources") or {}
    types = [str(t) for t in compute.get("instanceTypes") or []]
    typed = [(t, _batch_type_facts(t, reader)) for t in types]
    accelerated = [(t, f) for t, f in typed if f.platform != "cpu"]
    chosen: list[tuple[str | None, TypeFacts]] = [*accelerated, *typed, (None, TypeFacts("cpu", False, {}))]
    instance_type, typ = chosen[0]
    vcpu = typ.facts.get("vcpu") if typ.facts else None
    desired = int(compute.get("desiredvCpus") or 0)
    tags = {str(k): str(v) for k, v in (env.get("tags") or {}).items()}
    details = BatchEnvironmentDetails(
        instance_types=types,
        type=env.get("type"),
        compute_type=compute.get("type"),
        min_vcpus=compute.get("minvCpus"),
        max_vcpus=compute.get("maxvCpus"),
        desired_vcpus=desired,
        status=env.get("status"),
        job_queues=[BatchJobQueue.model_validate(q) for q in queues],
        catalog=typ.facts,
    )
    return CollectedResource(
        arn=str(env["computeEnvironmentArn"]),
        kind="batch_compute_environment",
        name=str(env["computeEnvironmentName"]),
        instance_type=instance_type,
        instance_count=desired // int(vcpu) if vcpu else 0,
        platform=typ.platform,
        state=env.get("state"),
        unknown_instance_type=typ.unknown,
        tags=tags,
        hints=workload_hints(tags=tags, kind="batch_compute_environment"),
        details=details,
    )


def _batch_type_facts(name: str, reader: TypeFactsReader | None = None) -> TypeFacts:
    """Batch accepts whole families (``inf2``) and ``optimal`` beside exact types."""
    if "." in name:
        return (reader or TypeFactsReader(None)).facts(name)
    platform = get_catalog().platform_of_family(name)
    return TypeFacts(platform or "cpu", platform is None and name != "optimal", {})


# --- SageMaker notebook instances, HyperPod clusters; EC2 capacity reservations (issue 25) ------------------------


def collect_notebook_instances(aws: AwsContext, types: TypeFactsReader | None = None) -> list[CollectedResource]:
    """Notebook instances on accelerator types (ListNotebookInstances; its summary has everything Chipwise reads).
    SageMaker publishes no activity metric for a notebook instance; a stopped one bills only its volume."""
    sm = aws.client("sagemaker")
    summaries: list[dict[str, Any]] = []
    for page in sm.get_paginator("list_notebook_instances").paginate():
        summaries.extend(dict(n) for n in page.get("NotebookInstances", []))
    types = types or TypeFactsReader(aws)
    types.prefetch(str(n.get("InstanceType") or "") for n in summaries)
    found: list[CollectedResource] = []
    for summary in summaries:
        instance_type = str(summary.get("InstanceType") or "")
        typ = types.facts(instance_type)
        if typ.platform == "cpu":
            continue
        name = str(summary["NotebookInstanceName"])
        details = NotebookInstanceDetails(
            status=summary.get("NotebookInstanceStatus"),
            lifecycle_config=summary.get("NotebookInstanceLifecycleConfigName"),
            catalog=typ.facts,
        )
        found.append(
            CollectedResource(
                arn=str(summary["NotebookInstanceArn"]),
                kind="sagemaker_notebook_instance",
                name=name,
                instance_type=instance_type,
                instance_count=1,
                platform=typ.platform,
                state=summary.get("NotebookInstanceStatus"),
                unknown_instance_type=typ.unknown,
                launched_at=summary.get("CreationTime"),
                hints=workload_hints(tags={}, kind="sagemaker_notebook_instance"),
                details=details,
            )
        )
    return found


def collect_hyperpod_clusters(aws: AwsContext, types: TypeFactsReader | None = None) -> Inventory:
    """HyperPod clusters (ListClusters, DescribeCluster) with their instance groups; a cluster that cannot be
    described is a problem of its own, the others go on. The resource's type and count are its accelerated
    groups' (the first accelerated group's type; the count summed over the groups of that type)."""
    sm = aws.client("sagemaker")
    types = types or TypeFactsReader(aws)
    result = Inventory()
    for page in sm.get_paginator("list_clusters").paginate():
        for summary in page.get("ClusterSummaries", []):
            name, arn = str(summary["ClusterName"]), str(summary.get("ClusterArn") or "")
            result.listed_arns.add(arn)
            try:
                cluster: dict[str, Any] = dict(sm.describe_cluster(ClusterName=name))
            except ClientError as exc:
                if _gone(exc):
                    result.listed_arns.discard(arn)
                    continue
                result.problems.append(ResourceProblem(arn, name, _error_code(exc), _message(exc), recorded=False))
                continue
            result.resources.append(_hyperpod_resource(cluster, types))
    result.problems.extend(types.problems)
    return result


def _hyperpod_resource(cluster: Mapping[str, Any], types: TypeFactsReader) -> CollectedResource:
    groups = [
        HyperPodInstanceGroup(
            name=str(g.get("InstanceGroupName", "")),
            instance_type=g.get("InstanceType"),
            current_count=int(g.get("CurrentCount") or 0),
            target_count=int(g.get("TargetCount") or 0),
        )
        for g in cluster.get("InstanceGroups") or []
    ]
    types.prefetch(g.instance_type for g in groups)
    accelerated = [g for g in groups if g.instance_type and types.facts(g.instance_type).platform != "cpu"]
    instance_type = accelerated[0].instance_type if accelerated else (groups[0].instance_type if groups else None)
    typ = types.facts(instance_type)
    count = sum(g.current_count for g in groups if g.instance_type == instance_type)
    orchestrator = cluster.get("Orchestrator") or {}
    return CollectedResource(
        arn=str(cluster["ClusterArn"]),
        kind="sagemaker_hyperpod_cluster",
        name=str(cluster["ClusterName"]),
        instance_type=instance_type,
        instance_count=count,
        platform=typ.platform,
        state=cluster.get("ClusterStatus"),
        unknown_instance_type=typ.unknown,
        launched_at=cluster.get("CreationTime"),
        hints=workload_hints(tags={}, kind="sagemaker_hyperpod_cluster"),
        details=HyperPodClusterDetails(
            status=cluster.get("ClusterStatus"),
            orchestrator="eks" if orchestrator.get("Eks") else "slurm",
            instance_groups=groups,
            catalog=typ.facts,
        ),
    )


CAPACITY_RESERVATION_STATES = ("active",)  # the state that bills (scheduled blocks have not started)


def collect_capacity_reservations(
    aws: AwsContext, account_id: str, types: TypeFactsReader | None = None
) -> list[CollectedResource]:
    """Active On-Demand Capacity Reservations and Capacity Blocks of accelerator types
    (DescribeCapacityReservations, ``ReservationType`` ``default`` or ``capacity-block``)."""
    ec2 = aws.client("ec2")
    listed: list[dict[str, Any]] = []
    pages = ec2.get_paginator("describe_capacity_reservations").paginate(
        Filters=[{"Name": "state", "Values": list(CAPACITY_RESERVATION_STATES)}]
    )
    for page in pages:
        listed.extend(dict(r) for r in page.get("CapacityReservations", []))
    types = types or TypeFactsReader(aws)
    types.prefetch(str(r.get("InstanceType") or "") for r in listed)
    found: list[CollectedResource] = []
    for reservation in listed:
        if reservation.get("State") not in CAPACITY_RESERVATION_STATES:
            continue
        instance_type = str(reservation.get("InstanceType") or "")
        typ = types.facts(instance_type)
        if typ.platform == "cpu":
            continue
        reservation_id = str(reservation["CapacityReservationId"])
        owner = str(reservation.get("OwnerId") or account_id)
        tags = _tags(reservation.get("Tags"))
        details = CapacityReservationDetails(
            reservation_id=reservation_id,
            reservation_type=str(reservation.get("ReservationType") or "default"),
            total_instances=int(reservation.get("TotalInstanceCount") or 0),
            available_instances=int(reservation.get("AvailableInstanceCount") or 0),
            start_date=reservation.get("StartDate"),
            end_date=reservation.get("EndDate"),
            end_date_type=reservation.get("EndDateType"),
            instance_match_criteria=reservation.get("InstanceMatchCriteria"),
            catalog=typ.facts,
        )
        found.append(
            CollectedResource(
                arn=str(
                    reservation.get("CapacityReservationArn")
                    or f"arn:aws:ec2:{aws.region}:{owner}:capacity-reservation/{reservation_id}"
                ),
                kind="ec2_capacity_reservation",
                name=tags.get("Name") or reservation_id,
                instance_type=instance_type,
                instance_count=details.total_instances,
                platform=typ.platform,
                state=reservation.get("State"),
                unknown_instance_type=typ.unknown,
                launched_at=reservation.get("StartDate") or reservation.get("CreateDate"),
                tags=tags,
                hints=workload_hints(tags=tags, kind="ec2_capacity_reservation"),
                details=details,
            )
        )
    return found


def collect_provisioned_throughputs(aws: AwsContext) -> list[CollectedResource]:
    """Amazon Bedrock Provisioned Throughput (ListProvisionedModelThroughputs; its summary has every field read)."""
    bedrock = aws.client("bedrock")
    summaries: list[dict[str, Any]] = []
    for page in bedrock.get_paginator("list_provisioned_model_throughputs").paginate():
        summaries.extend(dict(summary) for summary in page.get("provisionedModelSummaries", []))
    found: list[CollectedResource] = []
    for summary in summaries:
        details = ProvisionedThroughputDetails(
            model_arn=summary.get("modelArn"),
            foundation_model_arn=summary.get("foundationModelArn"),
            model_units=int(summary.get("modelUnits") or 0),
            desired_model_units=summary.get("desiredModelUnits"),
            status=summary.get("status"),
            commitment_duration=summary.get("commitmentDuration"),
            commitment_expiration=summary.get("commitmentExpirationTime"),
        )
        found.append(
            CollectedResource(
                arn=str(summary["provisionedModelArn"]),
                kind="bedrock_provisioned_throughput",
                name=str(summary.get("provisionedModelName") or summary["provisionedModelArn"]),
                instance_type=None,
                instance_count=details.model_units,
                platform="other",
                state=summary.get("status"),
                unknown_instance_type=False,
                launched_at=summary.get("creationTime"),
                hints=workload_hints(tags={}, kind="bedrock_provisioned_throughput"),
                details=details,
            )
        )
    return found


def collect_studio_apps(aws: AwsContext, types: TypeFactsReader | None = None) -> Inventory:
    """Studio apps (ListApps) on accelerator types that are InService, each described for its ARN and the user
    activity Studio records (DescribeApp ``LastUserActivityTimestamp``); an app that cannot be described is a
    problem of its own, the others go on."""
    sm = aws.client("sagemaker")
    listed: list[dict[str, Any]] = []
    for page in sm.get_paginator("list_apps").paginate():
        listed.extend(dict(a) for a in page.get("Apps", []))
    types = types or TypeFactsReader(aws)
    wanted = [a for a in listed if a.get("Status") == "InService" and (a.get("ResourceSpec") or {}).get("InstanceType")]
    types.prefetch(str(a["ResourceSpec"]["InstanceType"]) for a in wanted)
    result = Inventory()
    for app in wanted:
        instance_type = str(app["ResourceSpec"]["InstanceType"])
        typ = types.facts(instance_type)
        if typ.platform == "cpu":
            continue
        owner = {"UserProfileName": app["UserProfileName"]} if app.get("UserProfileName") else {}
        if app.get("SpaceName"):
            owner = {"SpaceName": app["SpaceName"]}
        key = {"DomainId": app["DomainId"], "AppType": app["AppType"], "AppName": app["AppName"], **owner}
        name = f"{app['DomainId']}/{app.get('SpaceName') or app.get('UserProfileName')}/{app['AppName']}"
        try:
            described: dict[str, Any] = dict(sm.describe_app(**key))
        except ClientError as exc:
            if not _gone(exc):  # its ARN and activity are DescribeApp's: not recorded this scan
                result.problems.append(ResourceProblem("", name, _error_code(exc), _message(exc), recorded=False))
            continue
        arn = str(described["AppArn"])
        details = StudioAppDetails(
            domain_id=str(app["DomainId"]),
            user_profile=app.get("UserProfileName"),
            space_name=app.get("SpaceName"),
            app_type=app.get("AppType"),
            app_name=str(app["AppName"]),
            status=app.get("Status"),
            last_user_activity=described.get("LastUserActivityTimestamp"),
            lifecycle_config_arn=(app.get("ResourceSpec") or {}).get("LifecycleConfigArn"),
            catalog=typ.facts,
        )
        result.resources.append(
            CollectedResource(
                arn=arn,
                kind="sagemaker_studio_app",
                name=name,
                instance_type=instance_type,
                instance_count=1,
                platform=typ.platform,
                state=app.get("Status"),
                unknown_instance_type=typ.unknown,
                launched_at=app.get("CreationTime"),
                hints=workload_hints(tags={}, kind="sagemaker_studio_app"),
                details=details,
            )
        )
    result.problems.extend(types.problems)
    return result
