"""CloudWatch: hourly rollups for every resource with GetMetricData queries packed across resources.

A daily scan reads only what is new (:func:`read_starts`): each (resource, metric) from the hour its last read
ended, minus a small overlap for late datapoints; only resources never read get the whole window.

Peer tools call CloudWatch once per resource and metric. Here every (resource, series, statistic) becomes one
``MetricDataQuery`` and the queries are packed into as few calls as the API allows: up to 500 queries per call,
and no more than fit in one call's 100,800 datapoints (so no call needs a second page). For R resources with
M queries each that is ``ceil(R x M / min(500, 100_800 // hours))`` calls. GetMetricStatistics is never used.

Series whose dimensions cannot be known in advance (the CloudWatch agent's per-GPU ``index``/``name``, Container
Insights' ``NodeName``) are found with one ListMetrics listing per metric name, not per resource. The agent
publishes ``nvidia_smi_*`` with ``index``, ``name`` and ``host`` by default and ``InstanceId`` only with
``append_dimensions``: a series is matched to an instance by ``InstanceId``, else by ``host`` (the instance's private
DNS name, or its first label as the OS hostname shows it) where ``ImageId`` and ``InstanceType``, when the series has
them, agree; a host two instances share matches neither (the datapoints would be attributed by guess).

Several series of one resource are combined into one hourly row: the maximum across GPUs (a job that keeps one
GPU busy is busy), and across endpoint variants or training hosts sums add, averages average and maxima max.

SeriesCoverage tells "no datapoints" from "no metric": AWS/SageMaker omits hours without invocations, so for that
namespace an absent hour means zero and the metric always exists; any other metric exists only when it has
datapoints in the window (or ListMetrics lists it): otherwise the telemetry is missing, which is never "idle".
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from functools import lru_cache
from typing import TYPE_CHECKING, Any, Literal

from chipwise.aws import AwsContext, lean_client
from chipwise.economics import parse_utc
from chipwise.models.records import CollectedResource, HourlyRollup, SeriesCoverage
from chipwise.models.resources import EndpointDetails, InferenceComponentDetails, InstanceDetails, TrainingJobDetails

if TYPE_CHECKING:
    from mypy_boto3_cloudwatch import CloudWatchClient

MAX_QUERIES_PER_CALL = 500
MAX_DATAPOINTS_PER_CALL = 100_800
PERIOD_SECONDS = 3600

Stat = Literal["Average", "Maximum", "Sum", "SampleCount"]
Combine = Literal["max", "spread"]
GAUGE: tuple[Stat, ...] = ("Average", "Maximum", "SampleCount")
_COLUMN: dict[str, str] = {"Average": "average", "Maximum": "maximum", "Sum": "sum", "SampleCount": "sample_count"}


@dataclass(frozen=True, slots=True)
class MetricSpec:
    """One CloudWatch metric Chipwise reads, the statistics it needs, and how a resource's series combine."""

    namespace: str
    metric: str
    stats: tuple[Stat, ...] = GAUGE
    combine: Combine = "spread"
    zero_when_absent: bool = False  # AWS omits the datapoint when the value is zero (SageMaker invocations)


# SageMaker endpoints, per EndpointName + VariantName.
SM_INVOCATIONS = MetricSpec("AWS/SageMaker", "Invocations", ("Sum",), zero_when_absent=True)
SM_INVOCATIONS_PER_INSTANCE = MetricSpec("AWS/SageMaker", "InvocationsPerInstance", ("Sum",), zero_when_absent=True)
SM_MODEL_LATENCY = MetricSpec("AWS/SageMaker", "ModelLatency", ("Average", "Maximum"), zero_when_absent=True)
SM_CPU = MetricSpec("/aws/sagemaker/Endpoints", "CPUUtilization")
SM_MEMORY = MetricSpec("/aws/sagemaker/Endpoints", "MemoryUtilization")
SM_GPU = MetricSpec("/aws/sagemaker/Endpoints", "GPUUtilization")
SM_GPU_MEMORY = MetricSpec("/aws/sagemaker/Endpoints", "GPUMemoryUtilization")
# Inference components, per InferenceComponentName: invocations in AWS/SageMaker (the specs above), utilisation in
# their own namespace, 0-100 % of what the component reserved (NumberOfAcceleratorDevicesRequired and so on).
IC_NAMESPACE = "/aws/sagemaker/InferenceComponents"
IC_GPU = MetricSpec(IC_NAMESPACE, "GPUUtilizationNormalized")
IC_GPU_MEMORY = MetricSpec(IC_NAMESPACE, "GPUMemoryUtilizationNormalized")
IC_CPU = MetricSpec(IC_NAMESPACE, "CPUUtilizationNormalized")
# EC2, per InstanceId; the CloudWatch agent's nvidia_gpu measurements per GPU index.
EC2_CPU = MetricSpec("AWS/EC2", "CPUUtilization")
CWAGENT_GPU = MetricSpec("CWAgent", "nvidia_smi_utilization_gpu", combine="max")
CWAGENT_GPU_MEMORY = MetricSpec("CWAgent", "nvidia_smi_utilization_memory", combine="max")
# Neuron: Chipwise's agent (by InstanceId, or EndpointName + VariantName inside SageMaker) and EKS Container Insights.
NEURON_NAMESPACE = "Chipwise/Neuron"
NEURON_CORE = MetricSpec(NEURON_NAMESPACE, "NeuronCoreUtilization")
NEURON_CORE_AVG = MetricSpec(NEURON_NAMESPACE, "NeuronCoreUtilizationAvg", ("Average",))
NEURON_DEVICE_MEMORY = MetricSpec(NEURON_NAMESPACE, "NeuronDeviceMemoryUsed", ("Maximum",))
NEURON_EXECUTIONS = MetricSpec(NEURON_NAMESPACE, "ExecutionsCompleted", ("Sum",))
EKS_NEURONCORE = MetricSpec("ContainerInsights", "node_neuroncore_utilization", combine="max")
# NVIDIA GPUs of EKS nodes: Container Insights with enhanced observability (CloudWatch agent >= 1.300034.0, the
# CloudWatch Observability EKS add-on >= v1.3.0-eksbuild.1). Documented dimension sets of the node_gpu_* metrics:
# [ClusterName], [ClusterName, InstanceId, NodeName] and, per GPU, [ClusterName, InstanceId, InstanceType, NodeName,
# GpuDevice]. The per-GPU series are read when listed (the busiest GPU, as for the CloudWatch agent), else the node's.
# pod_gpu_* / container_gpu_* carry no InstanceId or NodeName (their sets are ClusterName, Namespace, PodName,
# FullPodName, ContainerName, GpuDevice), so a pod's series cannot be attributed to one node from CloudWatch alone.
EKS_GPU = MetricSpec("ContainerInsights", "node_gpu_utilization", combine="max")
EKS_GPU_MEMORY = MetricSpec("ContainerInsights", "node_gpu_memory_utilization", combine="max")
EKS_GPU_POWER = MetricSpec("ContainerInsights", "node_gpu_power_draw", combine="max")
EKS_GPU_SPECS = (EKS_GPU, EKS_GPU_MEMORY, EKS_GPU_POWER)
# The node's GPUs its running pods hold (Kubernetes requests) and the GPUs it has, by [ClusterName, InstanceId,
# NodeName] only: the share of the node its workloads hold (the pod series name no node, see above).
EKS_GPU_REQUESTED = MetricSpec("ContainerInsights", "node_gpu_usage_total", ("Average", "Maximum"))
EKS_GPU_LIMIT = MetricSpec("ContainerInsights", "node_gpu_limit", ("Maximum",))
EKS_GPU_NODE_SPECS = (EKS_GPU_REQUESTED, EKS_GPU_LIMIT)
# Tokens a serving endpoint generated per hour, per EndpointName + VariantName: published by whatever reads the
# server's own counters (vLLM ``vllm:generation_tokens_total``, TGI ``tgi_request_generated_tokens``, LMI) into
# CloudWatch; absent hours are unknown (never zero), so cost per token is only stated where it is published.
SERVING_NAMESPACE = "Chipwise/Serving"
SERVING_TOKENS = MetricSpec(SERVING_NAMESPACE, "GeneratedTokens", ("Sum",))
# Bedrock Provisioned Throughput, per ModelId = the provisioned model's ARN (hours without invocations publish none).
BEDROCK_INVOCATIONS = MetricSpec("AWS/Bedrock", "Invocations", ("Sum",), zero_when_absent=True)
# SageMaker training jobs, per Host = <job>/algo-<n>.
TRAINING_CPU = MetricSpec("/aws/sagemaker/TrainingJobs", "CPUUtilization")
TRAINING_GPU = MetricSpec("/aws/sagemaker/TrainingJobs", "GPUUtilization")

NEURON_SPECS = (NEURON_CORE, NEURON_CORE_AVG, NEURON_DEVICE_MEMORY, NEURON_EXECUTIONS)
ENDPOINT_SPECS = (SM_INVOCATIONS, SM_INVOCATIONS_PER_INSTANCE, SM_MODEL_LATENCY, SERVING_TOKENS)
ENDPOINT_INSTANCE_SPECS = (SM_CPU, SM_MEMORY)
COMPONENT_SPECS = (SM_INVOCATIONS, SM_MODEL_LATENCY, IC_CPU)
COMPONENT_GPU_SPECS = (IC_GPU, IC_GPU_MEMORY)
EKS_NODE_DIMENSIONS = frozenset({"ClusterName", "InstanceId", "NodeName"})
EKS_GPU_DEVICE_DIMENSIONS = frozenset({"ClusterName", "InstanceId", "InstanceType", "NodeName", "GpuDevice"})

Dimensions = tuple[tuple[str, str], ...]
HourKey = int | datetime  # epoch seconds of the hour (as read), or the hour itself


def _dims(**values: str) -> Dimensions:
    return tuple(values.items())


@dataclass(frozen=True, slots=True)
class MetricTarget:
    """One metric of one resource: the series to read (one per variant, host or GPU) and how they combine."""

    resource_key: str
    spec: MetricSpec
    series: tuple[Dimensions, ...]
    listed: bool = False  # ListMetrics listed these series: the metric exists even without datapoints


@dataclass
class Discovered:
    """Series found with ListMetrics: by InstanceId, and GPU agent series without one by their ``host``."""

    gpu_series: dict[str, list[Dimensions]] = field(default_factory=dict)
    eks_series: dict[str, list[Dimensions]] = field(default_factory=dict)
    gpu_series_by_host: dict[str, list[Dimensions]] = field(default_factory=dict)
    eks_gpu_series: dict[str, list[Dimensions]] = field(default_factory=dict)  # Container Insights node_gpu_*


@dataclass
class MetricsResult:
    calls: int = 0
    queries: int = 0
    datapoints: int = 0
    rollups: int = 0


RollupSink = Callable[[list[HourlyRollup], list[SeriesCoverage]], None]


# --- which metrics for which resource ---------------------------------------------------------------------------


def _eks_node(resource: CollectedResource) -> bool:
    return isinstance(resource.details, InstanceDetails) and bool(resource.details.eks_cluster)


def needs_discovery(resources: Iterable[CollectedResource]) -> tuple[bool, bool]:
    """(GPU instances to find CloudWatch-agent series for, EKS Neuron nodes to find Container Insights series for)."""
    gpu = eks = False
    for r in resources:
        if r.kind == "ec2_instance":
            gpu = gpu or r.platform == "nvidia"
            eks = eks or (_is_neuron(r) and _eks_node(r))
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


def _is_neuron(resource: CollectedResource) -> bool:
    return resource.platform in ("inferentia", "trainium")


def plan_targets(resources: Iterable[CollectedResource], discovered: Discovered) -> list[MetricTarget]:
    """Every metric to read, resource by resource (a resource's targets are contiguous)."""
    targets: list[MetricTarget] = []
    resources = list(resources)
    owners = _host_owners(resources)
    for resource in resources:
        if resource.kind == "sagemaker_endpoint":
            targets.extend(_endpoint_targets(resource))
        elif resource.kind == "sagemaker_inference_component":
            targets.extend(_component_targets(resource))
        elif resource.kind == "ec2_instance":
            targets.extend(_instance_targets(resource, discovered, owners))
        elif resource.kind == "sagemaker_training_job":
            targets.extend(_training_targets(resource))
        elif resource.kind == "bedrock_provisioned_throughput":
            targets.append(MetricTarget(resource.key, BEDROCK_INVOCATIONS, (_dims(ModelId=resource.arn),)))
    return targets


def _endpoint_targets(resource: CollectedResource) -> Iterator[MetricTarget]:
    details = resource.details if isinstance(resource.details, EndpointDetails) else None
    variants = details.variants if details else []
    endpoint = (details.endpoint_name if details else None) or resource.name  # a variant resource: its endpoint
    every = tuple(_dims(EndpointName=endpoint, VariantName=v.variant_name) for v in variants)
    provisioned = tuple(_dims(EndpointName=endpoint, VariantName=v.variant_name) for v in variants if v.instance_type)
    for spec in ENDPOINT_SPECS:
        yield MetricTarget(resource.key, spec, every)
    if not provisioned:
        return  # serverless: no instance metrics
    specs: tuple[MetricSpec, ...] = ENDPOINT_INSTANCE_SPECS
    if resource.platform == "nvidia":
        specs += (SM_GPU, SM_GPU_MEMORY)
    if _is_neuron(resource):
        specs += NEURON_SPECS
    for spec in specs:
        yield MetricTarget(resource.key, spec, provisioned)


def _component_targets(resource: CollectedResource) -> Iterator[MetricTarget]:
    """An inference component's own series: invocations and latency in AWS/SageMaker and its utilisation in
    /aws/sagemaker/InferenceComponents, all by ``InferenceComponentName`` (its variant's series stay the variant's)."""
    if not isinstance(resource.details, InferenceComponentDetails):
        return
    own = (_dims(InferenceComponentName=resource.details.component.name),)
    specs: tuple[MetricSpec, ...] = COMPONENT_SPECS
    if resource.platform == "nvidia":
        specs += COMPONENT_GPU_SPECS
    for spec in specs:
        yield MetricTarget(resource.key, spec, own)


def _instance_targets(
    resource: CollectedResource, discovered: Discovered, owners: dict[str, int] | None = None
) -> Iterator[MetricTarget]:
    if not isinstance(resource.details, InstanceDetails):
        return
    instance_id = resource.details.instance_id
    eks_cluster = resource.details.eks_cluster
    own = (_dims(InstanceId=instance_id),)
    yield MetricTarget(resource.key, EC2_CPU, own)
    if resource.platform == "nvidia":
        gpus, _ = agent_series_for(resource, discovered, owners)
        yield MetricTarget(resource.key, CWAGENT_GPU, gpus, listed=bool(gpus))
        yield MetricTarget(resource.key, CWAGENT_GPU_MEMORY, gpus)  # the same agent block publishes both
    if _is_neuron(resource):
        for spec in NEURON_SPECS:
            yield MetricTarget(resource.key, spec, own)
        if eks_cluster:
            nodes = tuple(discovered.eks_series.get(instance_id, []))
            yield MetricTarget(resource.key, EKS_NEURONCORE, nodes, listed=bool(nodes))
    if resource.platform == "nvidia" and eks_cluster:
        # the same series (dimension sets) carry node_gpu_utilization, _memory_utilization and _power_draw
        gpus = tuple(discovered.eks_gpu_series.get(instance_id, []))
        for spec in EKS_GPU_SPECS:
            yield MetricTarget(resource.key, spec, gpus, listed=bool(gpus) and spec is EKS_GPU)
        nodes = tuple(sorted({node_dimensions(dims) for dims in gpus}))
        for spec in EKS_GPU_NODE_SPECS:
            yield MetricTarget(resource.key, spec, nodes)


def node_dimensions(dims: Dimensions) -> Dimensions:
    """The node-level dimension set ([ClusterName, InstanceId, NodeName]) of a Container Insights node series."""
    return tuple((k, v) for k, v in dims if k in EKS_NODE_DIMENSIONS)


def _training_targets(resource: CollectedResource) -> Iterator[MetricTarget]:
    names = resource.details.hosts if isinstance(resource.details, TrainingJobDetails) else []
    hosts = tuple(_dims(Host=h) for h in names)
    yield MetricTarget(resource.key, TRAINING_CPU, hosts)
    if resource.platform == "nvidia":
        yield MetricTarget(resource.key, TRAINING_GPU, hosts)


# --- optional agents' series: query only what ListMetrics lists -------------------------------------------------

# Namespaces only an optional agent publishes (Chipwise's neuron-monitor agent, a serving-token publisher): most
# resources have no series there, and a query for a series that does not exist still costs a metric requested.
AGENT_NAMESPACES = (NEURON_NAMESPACE, SERVING_NAMESPACE)
# ListMetrics lists the series with datapoints in the past two weeks (up to 15 minutes after the first one): its
# silence is trusted for reads that start within this horizon (a day's margin), never for an older window.
LISTING_HORIZON = timedelta(days=13)


@dataclass
class AgentListing:
    """The series ListMetrics lists in :data:`AGENT_NAMESPACES`, read on first use (one listing per namespace, pages
    of 500), as (metric, dimension set) pairs."""

    aws: AwsContext
    _listed: dict[str, frozenset[tuple[str, frozenset[tuple[str, str]]]]] = field(default_factory=dict)

    def listed(self, namespace: str) -> frozenset[tuple[str, frozenset[tuple[str, str]]]]:
        if namespace not in self._listed:
            pages = self.aws.client("cloudwatch").get_paginator("list_metrics").paginate(Namespace=namespace)
            self._listed[namespace] = frozenset(
                (str(m["MetricName"]), frozenset((d["Name"], d["Value"]) for d in m.get("Dimensions", [])))
                for page in pages
                for m in page.get("Metrics", [])
            )
        return self._listed[namespace]


def only_listed(
    targets: Sequence[MetricTarget], listing: AgentListing, start: datetime, end: datetime
) -> list[MetricTarget]:
    """The targets with their agent-namespace series cut to those ListMetrics lists, for a read starting within
    :data:`LISTING_HORIZON` of ``end`` (any other read keeps every series). A target left with no series reads
    nothing and records the metric as absent, as a read that found no datapoints would; one with listed series is
    marked ``listed`` (the metric exists even if the read finds no datapoint)."""
    if start < end - LISTING_HORIZON:
        return list(targets)
    kept_targets = []
    for target in targets:
        if target.spec.namespace not in AGENT_NAMESPACES or not target.series:
            kept_targets.append(target)
            continue
        listed = listing.listed(target.spec.namespace)
        kept = tuple(dims for dims in target.series if listed and (target.spec.metric, frozenset(dims)) in listed)
        kept_targets.append(MetricTarget(target.resource_key, target.spec, kept, listed=bool(kept)))
    return kept_targets


# --- packing and reading --------------------------------------------------------------------------------------


def queries_per_call(hours: int) -> int:
    """As many queries as one call takes without a second page: 500, or fewer when 100,800 datapoints bind."""
    return max(1, min(MAX_QUERIES_PER_CALL, MAX_DATAPOINTS_PER_CALL // max(1, hours)))


def expected_calls(query_count: int, hours: int) -> int:
    """The GetMetricData call floor for ``query_count`` queries over ``hours`` hourly periods."""
    return math.ceil(query_count / queries_per_call(hours)) if query_count else 0


def query_count(targets: Iterable[MetricTarget]) -> int:
    return sum(len(t.series) * len(t.spec.stats) for t in targets)


@dataclass(slots=True)
class _Slot:
    target: int
    series: int
    stat: Stat


def collect_metrics(
    aws: AwsContext, targets: Sequence[MetricTarget], start: datetime, end: datetime, sink: RollupSink
) -> MetricsResult:
    """Read every target over ``[start, end)`` (whole hours) and hand each finished resource's rows to ``sink``."""
    hours = int((end - start).total_seconds() // PERIOD_SECONDS)
    per_call = queries_per_call(hours)
    slots = [
        _Slot(t, s, stat)
        for t, target in enumerate(targets)
        for s in range(len(target.series))
        for stat in target.spec.stats
    ]
    result = MetricsResult(queries=len(slots))
    values: dict[int, dict[int, dict[Stat, dict[HourKey, float]]]] = {}
    finished = 0  # targets before this index have been handed to the sink
    cloudwatch = metric_data_client(aws)
    for offset in range(0, len(slots), per_call):
        batch = slots[offset : offset + per_call]
        queries: list[Any] = [_query(f"q{offset + i}", targets[slot.target], slot) for i, slot in enumerate(batch)]
        pages = cloudwatch.get_paginator("get_metric_data").paginate(
            MetricDataQueries=queries,
            StartTime=start,
            EndTime=end,
            ScanBy="TimestampAscending",
        )
        for page in pages:
            result.calls += 1
            for item in page.get("MetricDataResults", []):
                slot = slots[int(item["Id"][1:])]
                into = values.setdefault(slot.target, {}).setdefault(slot.series, {}).setdefault(slot.stat, {})
                for ts, value in zip(item.get("Timestamps", []), item.get("Values", []), strict=False):
                    into[hour_of(ts)] = float(value)
                    result.datapoints += 1
        done_before = batch[-1].target if offset + per_call < len(slots) else len(targets)
        finished = _flush(targets, values, finished, done_before, sink, result)
    _flush(targets, values, finished, len(targets), sink, result)
    return result


def _query(query_id: str, target: MetricTarget, slot: _Slot) -> dict[str, Any]:
    dims = [{"Name": k, "Value": v} for k, v in target.series[slot.series]]
    metric = {"Namespace": target.spec.namespace, "MetricName": target.spec.metric, "Dimensions": dims}
    return {"Id": query_id, "MetricStat": {"Metric": metric, "Period": PERIOD_SECONDS, "Stat": slot.stat}}


def hour_of(timestamp: Any) -> int:
    """The epoch second starting the UTC hour of a datapoint (epoch seconds, ISO string or datetime)."""
    if isinstance(timestamp, int | float):
        seconds = float(timestamp)
    elif isinstance(timestamp, datetime):
        seconds = timestamp.timestamp()
    else:
        seconds = parse_utc(str(timestamp)).timestamp()
    return int(seconds // PERIOD_SECONDS * PERIOD_SECONDS)


def metric_data_client(aws: AwsContext) -> CloudWatchClient:
    """A CloudWatch client (same credentials, region, retries and call counter) that leaves datapoint timestamps
    as the wire sent them (epoch seconds): botocore otherwise turns every one of the hundreds of thousands of
    timestamps into a datetime, half of the scan's CPU time. The queries are built here from typed targets, so
    botocore's parameter validation (a third of the request's CPU for 500 queries) is skipped for this client."""
    client: CloudWatchClient = lean_client(aws, "cloudwatch", timestamps_as_sent=True, validate=False)
    return client


def _flush(
    targets: Sequence[MetricTarget],
    values: dict[int, dict[int, dict[Stat, dict[HourKey, float]]]],
    start: int,
    stop: int,
    sink: RollupSink,
    result: MetricsResult,
) -> int:
    """Combine and hand over targets ``[start, stop)``; a resource's rows leave memory as soon as they are read."""
    rollups: list[HourlyRollup] = []
    coverage: list[SeriesCoverage] = []
    for index in range(start, stop):
        target = targets[index]
        rows = combine_series(target, values.pop(index, {}))
        rollups.extend(rows)
        exists = bool(rows) or target.listed or target.spec.zero_when_absent
        coverage.append(
            SeriesCoverage(target.resource_key, target.spec.namespace, target.spec.metric, exists, len(rows))
        )
    if coverage:
        result.rollups += len(rollups)
        sink(rollups, coverage)
    return max(start, stop)


def combine_series(target: MetricTarget, series: dict[int, dict[Stat, dict[HourKey, float]]]) -> list[HourlyRollup]:
    """One row per hour with data, the target's series combined (max across GPUs; sum/mean/max otherwise)."""
    hours = sorted({h for stats in series.values() for points in stats.values() for h in points})
    rows = []
    for hour in hours:
        columns: dict[str, float | None] = dict.fromkeys(_COLUMN.values())
        for stat in target.spec.stats:
            found = [points[hour] for stats in series.values() if (points := stats.get(stat)) and hour in points]
            if found:
                columns[_COLUMN[stat]] = _combine(stat, found, target.spec.combine)
        rows.append(
            HourlyRollup(
                target.resource_key,
                target.spec.namespace,
                target.spec.metric,
                _as_datetime(hour),
                average=columns["average"],
                maximum=columns["maximum"],
                sum=columns["sum"],
                sample_count=columns["sample_count"],
            )
        )
    return rows


@lru_cache(maxsize=4096)
def _epoch_hour(seconds: int) -> datetime:
    return datetime.fromtimestamp(seconds, UTC)


def _as_datetime(hour: HourKey) -> datetime:
    return hour if isinstance(hour, datetime) else _epoch_hour(hour)


def _combine(stat: Stat, values: list[float], how: Combine) -> float:
    if how == "max" or stat == "Maximum":
        return max(values)
    if stat in ("Sum", "SampleCount"):
        return math.fsum(values)
    return math.fsum(values) / len(values)


def read_starts(
    targets: Sequence[MetricTarget],
    last_read: Mapping[int, datetime],
    start: datetime,
    end: datetime,
    overlap: timedelta,
) -> list[tuple[datetime, list[MetricTarget]]]:
    """The targets grouped by where their read starts (oldest first): the window's start for a target never read,
    else the hour it was last read up to minus ``overlap`` (never before ``start``, at least the last hour).
    ``last_read`` is keyed by the target's index. GetMetricData takes one start per call, so each group is one
    packed read; a daily scan has two groups at most (new resources, and everything else)."""
    groups: dict[datetime, list[MetricTarget]] = {}
    begins: dict[datetime | None, datetime] = {None: start}  # the targets share a few last reads
    for index, target in enumerate(targets):
        last = last_read.get(index)
        begin = begins.get(last)
        if begin is None and last is not None:
            begin = max(start, min(last, end) - overlap).replace(minute=0, second=0, microsecond=0)
            begin = max(min(begin, end - timedelta(hours=1)), start)
            begins[last] = begin
        groups.setdefault(begin or start, []).append(target)
    return sorted(groups.items(), key=lambda item: item[0])


def metric_window(now: datetime, lookback_days: int) -> tuple[datetime, datetime]:
    """``[start, end)`` on whole hours, ending at the last complete hour."""
    end = now.astimezone(UTC).replace(minute=0, second=0, microsecond=0)
    return end - timedelta(days=lookback_days), end
