"""CloudWatch: hourly rollups for every resource with GetMetricData queries packed across resources.

A daily scan reads only what is new (:func:`read_starts`): each (resource, metric) from the hour its last read
ended, minus a small overlap for late datapoints; only resources never read get the whole window.

Peer tools call CloudWatch once per resource and metric. Here every (resource, series, statistic) becomes one
``MetricDataQuery`` and the queries are packed into as few calls as the API allows: up to 500 queries per call,
and no more than fit in one call's 100,800 datapoints (so no call needs a second page). For R resources with
M queries each that is ``ceil(R x M / min(500, 100_800 // hours))`` calls. GetMetricStatistics is never used.

Series whose dimensions cannot be known in advance (the CloudWatch agent's per-GPU ``index``/``name``, Container
Insights' ``NodeName``) are found with one ListMetrics listing per metric name, not per resource
(:mod:`chipwise.collect.series`). The agent
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
from typing import TYPE_CHECKING, Any

from chipwise.aws import AwsContext, lean_client
from chipwise.collect.metric_specs import (
    _COLUMN,
    BEDROCK_INVOCATIONS,
    COMPONENT_GPU_SPECS,
    COMPONENT_SPECS,
    CWAGENT_GPU,
    CWAGENT_GPU_MEMORY,
    EC2_CPU,
    EKS_GPU,
    EKS_GPU_NODE_SPECS,
    EKS_GPU_SPECS,
    EKS_NEURONCORE,
    EKS_NODE_DIMENSIONS,
    ENDPOINT_INSTANCE_SPECS,
    ENDPOINT_SPECS,
    MAX_DATAPOINTS_PER_CALL,
    MAX_QUERIES_PER_CALL,
    NEURON_CORE,
    NEURON_NAMESPACE,
    NEURON_SPECS,
    PERIOD_SECONDS,
    SERVING_NAMESPACE,
    SERVING_TOKENS,
    SM_CPU,
    SM_GPU,
    SM_GPU_MEMORY,
    SM_INVOCATIONS,
    TRAINING_CPU,
    TRAINING_GPU,
    Combine,
    Dimensions,
    Discovered,
    HourKey,
    MetricSpec,
    MetricTarget,
    Stat,
    _dims,
)
from chipwise.collect.series import (
    _host_owners,
    agent_match_counts,
    agent_series_for,
    discover_series,
    eks_gpu_series,
    host_names,
    is_neuron,
    needs_discovery,
    needs_eks_gpu_discovery,
)
from chipwise.economics import parse_utc
from chipwise.models.records import CollectedResource, HourlyRollup, SeriesCoverage
from chipwise.models.resources import EndpointDetails, InferenceComponentDetails, InstanceDetails, TrainingJobDetails

if TYPE_CHECKING:
    from mypy_boto3_cloudwatch import CloudWatchClient

__all__ = [
    "CWAGENT_GPU",
    "EC2_CPU",
    "EKS_GPU",
    "EKS_NEURONCORE",
    "NEURON_CORE",
    "SERVING_TOKENS",
    "SM_CPU",
    "SM_INVOCATIONS",
    "AgentListing",
    "Discovered",
    "MetricSpec",
    "MetricTarget",
    "MetricsResult",
    "agent_match_counts",
    "agent_series_for",
    "collect_metrics",
    "combine_series",
    "discover_series",
    "eks_gpu_series",
    "expected_calls",
    "host_names",
    "metric_window",
    "needs_discovery",
    "needs_eks_gpu_discovery",
    "only_listed",
    "plan_targets",
    "queries_per_call",
    "query_count",
    "read_starts",
]


@dataclass
class MetricsResult:
    calls: int = 0
    queries: int = 0
    datapoints: int = 0
    rollups: int = 0


RollupSink = Callable[[list[HourlyRollup], list[SeriesCoverage]], None]


# --- which metrics for which resource ---------------------------------------------------------------------------


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
    if is_neuron(resource):
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
    if is_neuron(resource):
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
                stamps, points = item.get("Timestamps", []), item.get("Values", [])
                into.update(zip(hours_of(stamps), map(float, points), strict=False))
                result.datapoints += min(len(stamps), len(points))
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


def hours_of(timestamps: Sequence[Any]) -> list[int]:
    """:func:`hour_of` of each timestamp, in order: a page of epoch seconds (what the lean client leaves) without a
    call and a type test per datapoint (81,000 on a next-day scan of 1,000 instances)."""
    if all(isinstance(t, int | float) for t in timestamps):
        return [int(s // PERIOD_SECONDS * PERIOD_SECONDS) for s in map(float, timestamps)]
    return [hour_of(t) for t in timestamps]


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
    if len(series) == 1:
        return _one_series(target, next(iter(series.values())), hours)
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


def _one_series(
    target: MetricTarget, stats: dict[Stat, dict[HourKey, float]], hours: list[HourKey]
) -> list[HourlyRollup]:
    """:func:`combine_series` of a target with one series (most: an instance's own metric), each hour's value taken
    as :func:`_combine` would return it alone: the value for a maximum, else its one-term sum (``v + 0.0``: what
    ``math.fsum([v])`` returns, -0.0 made 0.0) without building a list per hour and statistic."""
    columns = []
    for stat in target.spec.stats:
        if points := stats.get(stat):
            as_is = target.spec.combine == "max" or stat == "Maximum"
            columns.append((_COLUMN[stat], points, as_is))
    namespace, metric, key = target.spec.namespace, target.spec.metric, target.resource_key
    rows = []
    for hour in hours:
        found: dict[str, float | None] = {"average": None, "maximum": None, "sum": None, "sample_count": None}
        for column, points, as_is in columns:
            value = points.get(hour)
            if value is not None:
                found[column] = value if as_is else value + 0.0
        rows.append(
            HourlyRollup(
                key,
                namespace,
                metric,
                _as_datetime(hour),
                average=found["average"],
                maximum=found["maximum"],
                sum=found["sum"],
                sample_count=found["sample_count"],
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
