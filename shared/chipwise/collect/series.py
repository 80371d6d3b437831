"""Which CloudWatch series exist for a resource when their dimensions cannot be known in advance: one ListMetrics
listing per metric name (not per resource) for the CloudWatch agent's per-GPU series and Container Insights' node
series, and the agent's series matched to an instance by ``InstanceId``, else by ``host`` (see
:mod:`chipwise.collect.metrics`)."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence

from chipwise.aws import AwsContext
from chipwise.collect.metric_specs import (
    CWAGENT_GPU,
    EKS_GPU,
    EKS_GPU_DEVICE_DIMENSIONS,
    EKS_NEURONCORE,
    EKS_NODE_DIMENSIONS,
    Dimensions,
    Discovered,
    MetricSpec,
)
from chipwise.models.records import CollectedResource
from chipwise.models.resources import InstanceDetails


def _eks_node(resource: CollectedResource) -> bool:
    return isinstance(resource.details, InstanceDetails) and bool(resource.details.eks_cluster)


def needs_discovery(resources: Iterable[CollectedResource]) -> tuple[bool, bool]:
    """(GPU instances to find CloudWatch-agent series for, EKS Neuron nodes to find Container Insights series for)."""
    gpu = eks = False
    for r in resources:
        if r.kind == "ec2_instance":
            gpu = gpu or r.platform == "nvidia"
            eks = eks or (is_neuron(r) and _eks_node(r))
    return gpu, eks


def needs_eks_gpu_discovery(resources: Iterable[CollectedResource]) -> bool:
    """Whether an EKS node has NVIDIA GPUs (its Container Insights node_gpu_* series are to be found)."""
    return any(r.kind == "ec2_instance" and r.platform == "nvidia" and _eks_node(r) for r in resources)


def discover_series(aws: AwsContext, resources: Sequence[CollectedResource]) -> Discovered:
    """ListMetrics once per metric name whose dimensions are not known in advance (pages of 500 series)."""
    want_gpu, want_eks = needs_discovery(resources)
    found = Discovered()
    if want_gpu:
        found.gpu_series, found.gpu_series_by_host = _list_agent_series(aws, CWAGENT_GPU)
    if want_eks:
        found.eks_series = _list_series(aws, EKS_NEURONCORE, lambda dims: {k for k, _ in dims} == EKS_NODE_DIMENSIONS)
    if needs_eks_gpu_discovery(resources):
        found.eks_gpu_series = eks_gpu_series(_list_series(aws, EKS_GPU, _eks_gpu_dimensions))
    return found


def _eks_gpu_dimensions(dims: Dimensions) -> bool:
    return {k for k, _ in dims} in (EKS_NODE_DIMENSIONS, EKS_GPU_DEVICE_DIMENSIONS)


def eks_gpu_series(listed: Mapping[str, list[Dimensions]]) -> dict[str, list[Dimensions]]:
    """Per instance, its per-GPU series (``GpuDevice``) when Container Insights lists them, else its node series."""
    chosen: dict[str, list[Dimensions]] = {}
    for instance, series in listed.items():
        per_gpu = [dims for dims in series if "GpuDevice" in dict(dims)]
        chosen[instance] = per_gpu or list(series)
    return chosen


def _list_series(aws: AwsContext, spec: MetricSpec, keep: Callable[[Dimensions], bool]) -> dict[str, list[Dimensions]]:
    by_instance: dict[str, set[Dimensions]] = {}
    pages = (
        aws.client("cloudwatch")
        .get_paginator("list_metrics")
        .paginate(Namespace=spec.namespace, MetricName=spec.metric, Dimensions=[{"Name": "InstanceId"}])
    )
    for page in pages:
        for metric in page.get("Metrics", []):
            dims = tuple(sorted((d["Name"], d["Value"]) for d in metric.get("Dimensions", [])))
            instance = dict(dims).get("InstanceId")
            if instance and keep(dims):
                by_instance.setdefault(instance, set()).add(dims)  # moto lists a series once per datapoint
    return {instance: sorted(series) for instance, series in by_instance.items()}


def _list_agent_series(
    aws: AwsContext, spec: MetricSpec
) -> tuple[dict[str, list[Dimensions]], dict[str, list[Dimensions]]]:
    """Every series of an agent metric: those with ``InstanceId`` by instance, the others by ``host``."""
    by_instance: dict[str, set[Dimensions]] = {}
    by_host: dict[str, set[Dimensions]] = {}
    pages = (
        aws.client("cloudwatch")
        .get_paginator("list_metrics")
        .paginate(Namespace=spec.namespace, MetricName=spec.metric)
    )
    for page in pages:
        for metric in page.get("Metrics", []):
            dims = tuple(sorted((d["Name"], d["Value"]) for d in metric.get("Dimensions", [])))
            named = dict(dims)
            if named.get("InstanceId"):
                by_instance.setdefault(named["InstanceId"], set()).add(dims)
            elif named.get("host"):
                by_host.setdefault(named["host"].lower(), set()).add(dims)
    return (
        {k: sorted(v) for k, v in by_instance.items()},
        {k: sorted(v) for k, v in by_host.items()},
    )


def host_names(private_dns_name: str | None) -> tuple[str, ...]:
    """The ``host`` values the agent may publish for an instance: its private DNS name and that name's first label
    (``ip-10-0-1-5.ec2.internal`` and ``ip-10-0-1-5``)."""
    if not private_dns_name:
        return ()
    full = private_dns_name.strip().lower()
    short = full.split(".", 1)[0]
    return (full,) if short == full else (full, short)


def agent_series_for(
    resource: CollectedResource, discovered: Discovered, host_owners: dict[str, int] | None = None
) -> tuple[tuple[Dimensions, ...], str | None]:
    """The agent GPU series of an EC2 instance and how they were matched (``InstanceId``, ``host``, or None)."""
    if not isinstance(resource.details, InstanceDetails):
        return (), None
    details = resource.details
    by_id = discovered.gpu_series.get(details.instance_id, [])
    if by_id:
        return tuple(by_id), "InstanceId"
    found: list[Dimensions] = []
    for host in host_names(details.private_dns_name):
        if host_owners is not None and host_owners.get(host, 0) > 1:
            continue  # two instances answer to this host name: no attribution
        for dims in discovered.gpu_series_by_host.get(host, []):
            named = dict(dims)
            if named.get("ImageId") and details.image_id and named["ImageId"] != details.image_id:
                continue
            if named.get("InstanceType") and resource.instance_type and named["InstanceType"] != resource.instance_type:
                continue
            found.append(dims)
    return (tuple(sorted(set(found))), "host") if found else ((), None)


def agent_match_counts(resources: Sequence[CollectedResource], discovered: Discovered) -> dict[str, int]:
    """How many GPU instances the agent's series were matched to, by what (``InstanceId``, ``host``, ``none``)."""
    owners = _host_owners(resources)
    counts: dict[str, int] = {}
    for resource in resources:
        if resource.kind == "ec2_instance" and resource.platform == "nvidia":
            _, basis = agent_series_for(resource, discovered, owners)
            counts[basis or "none"] = counts.get(basis or "none", 0) + 1
    return counts


def _host_owners(resources: Iterable[CollectedResource]) -> dict[str, int]:
    owners: dict[str, int] = {}
    for resource in resources:
        if resource.kind == "ec2_instance" and isinstance(resource.details, InstanceDetails):
            for host in host_names(resource.details.private_dns_name):
                owners[host] = owners.get(host, 0) + 1
    return owners


def is_neuron(resource: CollectedResource) -> bool:
    return resource.platform in ("inferentia", "trainium")
