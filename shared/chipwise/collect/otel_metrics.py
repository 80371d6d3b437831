"""OTel Container Insights: the open-source GPU and Neuron metrics EKS clusters publish with the CloudWatch
Observability add-on in its OpenTelemetry configuration, read beside the classic Container Insights ones.

Classic ("enhanced observability") Container Insights publishes ``node_gpu_utilization``,
``node_neuroncore_utilization``... to the ``ContainerInsights`` namespace, which GetMetricData reads
(:mod:`chipwise.collect.metrics`). The OTel configuration (add-on v6.0.1-eksbuild.1 or later) instead sends the
sources' own metric names over OTLP -- NVIDIA DCGM exporter's ``DCGM_FI_DEV_GPU_UTIL``, ``DCGM_FI_DEV_FB_USED``,
``DCGM_FI_DEV_FB_FREE``, ``DCGM_FI_DEV_POWER_USAGE`` and neuron-monitor's ``neuroncore_utilization_ratio`` -- and
CloudWatch serves those through its Prometheus-compatible query API only (``QueryMetrics``:
``POST https://monitoring.<region>.amazonaws.com/api/v1/query_range``, SigV4 service ``monitoring``, permissions
``cloudwatch:GetMetricData`` and ``cloudwatch:ListMetrics``, at most 500 series per answer). Not GetMetricData.

Only EKS nodes without classic series are asked about (a node publishes one or the other). The agent's OTel
pipelines (amazon-cloudwatch-agent ``translator/translate/otel/pipeline/opentelemetry/containerinsights/dcgm.yaml``
and ``neuron.yaml``) drop DCGM's ``Hostname`` label and name the node with resource attributes instead:
``k8s.node.name`` (the Kubernetes node name: the private DNS name, or the instance id on EKS Auto Mode) and, from
the EC2 resource detector, ``host.id`` (the instance id); PromQL sees them as ``@resource.k8s.node.name`` and
``@resource.host.id``. neuron-monitor's own ``instance_id`` label stays. A query selects a batch of nodes by either
resource attribute (``... or ...``). The same pipeline's ``awsneuron`` processor already scales
``neuroncore_utilization_ratio`` to 0-100 (its README: "matching the Container Insights V1 convention"), so the
value is a percentage despite its name. Hourly rows are stored under the classic names in the namespace
:data:`OTEL_NAMESPACE`, in the classic units: GPU and NeuronCore utilisation in percent, frame buffer used in
percent of ``FB_USED + FB_FREE`` (both MiB), power in watts. Several GPUs or NeuronCores of a node combine as the
classic rows do: the busiest one.

Where the query API is not there (a region without it, or an emulator) the read is skipped and said so; a refusal
(403) or a failed query is an error the scan reports.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any, Literal, Protocol
from urllib.parse import urlencode

from chipwise.collect.metric_specs import Discovered
from chipwise.collect.series import host_names, is_neuron
from chipwise.errors import UpstreamError
from chipwise.models.records import CollectedResource, HourlyRollup, SeriesCoverage
from chipwise.models.resources import InstanceDetails

if TYPE_CHECKING:
    import httpx

    from chipwise.aws import AwsContext

__all__ = [
    "OTEL_NAMESPACE",
    "CloudWatchPromQL",
    "OTelNode",
    "OTelRead",
    "PromQL",
    "PromQLUnavailable",
    "collect_otel_metrics",
    "otel_nodes",
    "read_otel_metrics",
]

OTEL_NAMESPACE = "ContainerInsights/OTel"
QUERY_RANGE_PATH = "/api/v1/query_range"
MAX_SERIES = 500  # QueryMetrics returns at most 500 series
HOUR = 3600
MAX_GPUS_PER_NODE = 16
MAX_NEURONCORES_PER_NODE = 128  # trn2.48xlarge at LNC 1

GPU_UTIL = "DCGM_FI_DEV_GPU_UTIL"  # percent
FB_USED = "DCGM_FI_DEV_FB_USED"  # MiB
FB_FREE = "DCGM_FI_DEV_FB_FREE"  # MiB
GPU_POWER = "DCGM_FI_DEV_POWER_USAGE"  # watts
NEURONCORE_RATIO = "neuroncore_utilization_ratio"  # 0-100 after the agent's awsneuron processor

# Labels naming the node's instance, or its node or host name, as the agent's OTel pipeline and the exporters
# write them (resource attributes as PromQL shows them, then the same as plain labels).
INSTANCE_LABELS = ("@resource.host.id", "host.id", "instance_id")
HOST_LABELS = ("@resource.k8s.node.name", "k8s.node.name", "Hostname", "@resource.host.name", "host.name")
# What a query selects a batch of nodes by: the instance id, or else the Kubernetes node name.
BY_INSTANCE, BY_NODE_NAME = "@resource.host.id", "@resource.k8s.node.name"

Kind = Literal["gpu", "neuron"]
Series = tuple[Mapping[str, str], dict[int, float]]  # labels, value by hour start (epoch seconds)


class PromQLUnavailable(Exception):
    """The Prometheus-compatible query API is not there (not in this region, or not emulated)."""


class PromQL(Protocol):
    def query_range(self, query: str, start: datetime, end: datetime, step_seconds: int) -> list[dict[str, Any]]:
        """The ``data.result`` of a ``matrix`` answer: ``[{"metric": {labels}, "values": [[ts, "v"], ...]}]``."""
        ...


@dataclass(frozen=True, slots=True)
class OTelNode:
    """An EKS node whose accelerator metrics are looked for in the OTel metrics."""

    resource_key: str
    instance_id: str
    hosts: tuple[str, ...]
    kind: Kind

    @property
    def node_names(self) -> tuple[str, ...]:
        """What its Kubernetes node may be called: its host names, or its instance id (EKS Auto Mode)."""
        return (*self.hosts, self.instance_id)


@dataclass
class OTelRead:
    rollups: list[HourlyRollup]
    coverage: list[SeriesCoverage]
    queries: int = 0


def otel_nodes(resources: Iterable[CollectedResource], discovered: Discovered) -> list[OTelNode]:
    """EKS GPU and Neuron nodes that classic Container Insights lists no series for."""
    nodes = []
    for resource in resources:
        details = resource.details
        if resource.kind != "ec2_instance" or not isinstance(details, InstanceDetails) or not details.eks_cluster:
            continue
        instance = details.instance_id
        hosts = host_names(details.private_dns_name)
        if resource.platform == "nvidia" and not discovered.eks_gpu_series.get(instance):
            nodes.append(OTelNode(resource.key, instance, hosts, "gpu"))
        elif is_neuron(resource) and not discovered.eks_series.get(instance):
            nodes.append(OTelNode(resource.key, instance, hosts, "neuron"))
    return nodes


# --- the query API --------------------------------------------------------------------------------------------


class CloudWatchPromQL:
    """QueryMetrics (``/api/v1/query_range``) on the CloudWatch endpoint of the scan's region, signed with the
    scan's credentials (SigV4, service ``monitoring``). Each request is counted as ``cloudwatch.QueryMetrics``."""

    def __init__(self, aws: AwsContext, http: httpx.Client | None = None) -> None:
        import httpx

        self._aws = aws
        self._endpoint = str(aws.client("cloudwatch").meta.endpoint_url).rstrip("/")
        self._http = http or httpx.Client(timeout=httpx.Timeout(30.0), follow_redirects=False)
        self.requests = 0

    def query_range(self, query: str, start: datetime, end: datetime, step_seconds: int) -> list[dict[str, Any]]:
        import httpx
        from botocore.auth import SigV4Auth
        from botocore.awsrequest import AWSRequest

        body = urlencode(
            {
                "query": query,
                "start": str(int(start.timestamp())),
                "end": str(int(end.timestamp())),
                "step": f"{step_seconds}s",
                "limit": str(MAX_SERIES),
            }
        )
        url = self._endpoint + QUERY_RANGE_PATH
        request = AWSRequest(
            method="POST", url=url, data=body, headers={"Content-Type": "application/x-www-form-urlencoded"}
        )
        credentials = self._aws.session.get_credentials()
        if credentials is None:
            raise UpstreamError("CloudWatch PromQL query: no AWS credentials to sign it with")
        SigV4Auth(credentials.get_frozen_credentials(), "monitoring", self._aws.region).add_auth(request)
        self.requests += 1
        self._aws.counter.count("cloudwatch.QueryMetrics")
        try:
            response = self._http.post(url, content=body.encode(), headers=dict(request.headers.items()))
        except httpx.HTTPError as exc:
            raise UpstreamError(f"CloudWatch PromQL query: {type(exc).__name__}: {exc}"[:300]) from exc
        return parse_query_response(response.status_code, response.text)


def parse_query_response(status: int, text: str) -> list[dict[str, Any]]:
    """The series of a QueryMetrics answer (the Prometheus HTTP API's JSON); :class:`PromQLUnavailable` when the
    endpoint does not serve that API; :class:`UpstreamError` (one line) when it refuses or the query fails."""
    import json

    if status == 404:
        raise PromQLUnavailable(f"HTTP {status}")
    try:
        payload = json.loads(text)
    except ValueError:
        payload = None
    if not isinstance(payload, dict) or payload.get("status") not in ("success", "error"):
        if status in (401, 403):
            raise UpstreamError(f"CloudWatch PromQL query refused (HTTP {status}): allow cloudwatch:GetMetricData")
        raise PromQLUnavailable(f"HTTP {status}, not a Prometheus API answer")
    if status >= 400 or payload.get("status") != "success":
        kind, error = payload.get("errorType", "error"), str(payload.get("error", ""))[:300]
        raise UpstreamError(f"CloudWatch PromQL query failed (HTTP {status}): {kind}: {error}")
    data = payload.get("data") or {}
    if data.get("resultType") != "matrix" or not isinstance(data.get("result"), list):
        raise UpstreamError(f"CloudWatch PromQL query answered {data.get('resultType')!r}, not a matrix")
    return [item for item in data["result"] if isinstance(item, dict)]


# --- reading --------------------------------------------------------------------------------------------------


def collect_otel_metrics(
    aws: AwsContext,
    resources: Sequence[CollectedResource],
    discovered: Discovered,
    start: datetime,
    end: datetime,
    sink: Callable[[list[HourlyRollup], list[SeriesCoverage]], None],
) -> dict[str, Any] | None:
    """Read the OTel metrics of the EKS nodes classic Container Insights has no series for and hand the rows to
    ``sink``; what was done, for the scan document. Raises :class:`UpstreamError` when a query is refused or fails;
    an endpoint without the query API is not an error (``unavailable`` says why nothing was read). None: no such
    node (nothing asked)."""
    nodes = otel_nodes(resources, discovered)
    if not nodes:
        return None
    promql = CloudWatchPromQL(aws)
    try:
        read = read_otel_metrics(promql, nodes, start, end)
    except PromQLUnavailable as exc:
        return {"nodes": len(nodes), "queries": promql.requests, "unavailable": str(exc)}
    sink(read.rollups, read.coverage)
    found = {c.resource_key for c in read.coverage if c.exists}
    return {"nodes": len(nodes), "queries": read.queries, "nodes_with_data": len(found), "rollups": len(read.rollups)}


def read_otel_metrics(promql: PromQL, nodes: Sequence[OTelNode], start: datetime, end: datetime) -> OTelRead:
    """Hourly rows over ``[start, end)`` (whole hours) for every node, and whether each metric exists for it."""
    read = OTelRead([], [])
    for kind, per_node, specs in (
        ("gpu", MAX_GPUS_PER_NODE, ("node_gpu_utilization", "node_gpu_memory_utilization", "node_gpu_power_draw")),
        ("neuron", MAX_NEURONCORES_PER_NODE, ("node_neuroncore_utilization",)),
    ):
        group = [n for n in nodes if n.kind == kind]
        size = max(1, MAX_SERIES // per_node)
        for offset in range(0, len(group), size):
            batch = group[offset : offset + size]
            rows = _read_batch(promql, batch, start, end, read)
            for node in batch:
                for metric in specs:
                    hours = rows.get((node.resource_key, metric), {})
                    read.rollups.extend(_rollups(node.resource_key, metric, hours))
                    read.coverage.append(
                        SeriesCoverage(node.resource_key, OTEL_NAMESPACE, metric, bool(hours), len(hours))
                    )
    return read


Columns = dict[str, float]  # average, maximum, sample_count of one hour


def _read_batch(
    promql: PromQL, batch: Sequence[OTelNode], start: datetime, end: datetime, read: OTelRead
) -> dict[tuple[str, str], dict[int, Columns]]:
    kind = batch[0].kind

    def query(function: str, metric: str) -> list[Series]:
        read.queries += 1
        ids = _selector(metric, BY_INSTANCE, [n.instance_id for n in batch])
        names = _selector(metric, BY_NODE_NAME, [name for n in batch for name in n.node_names])
        expression = f"{function}({ids}[1h]) or {function}({names}[1h])"  # a series matching both is kept once
        # evaluated at the end of each hour: the value at t covers (t - 1h, t]
        return list(_series(promql.query_range(expression, start + timedelta(hours=1), end, HOUR)))

    found: dict[tuple[str, str], dict[int, Columns]] = {}
    if kind == "neuron":
        _combine_into(found, batch, "node_neuroncore_utilization", _stats(query, NEURONCORE_RATIO))
        return found
    _combine_into(found, batch, "node_gpu_utilization", _stats(query, GPU_UTIL))
    _combine_into(found, batch, "node_gpu_power_draw", _stats(query, GPU_POWER))
    used, free = _stats(query, FB_USED), query("avg_over_time", FB_FREE)
    _combine_into(found, batch, "node_gpu_memory_utilization", _frame_buffer_percent(used, free))
    return found


def _stats(query: Any, metric: str) -> dict[str, list[Series]]:
    return {
        "average": query("avg_over_time", metric),
        "maximum": query("max_over_time", metric),
        "sample_count": query("count_over_time", metric),
    }


def _frame_buffer_percent(used: dict[str, list[Series]], free: list[Series]) -> dict[str, list[Series]]:
    """Per GPU and hour: used / (used + free) x 100, the average from the averages and the maximum from the most
    used (the frame buffer's size does not change)."""
    totals: dict[tuple[tuple[str, str], ...], dict[int, float]] = {}
    averages = {_gpu_key(labels): values for labels, values in used["average"]}
    for labels, values in free:
        key = _gpu_key(labels)
        for hour, value in values.items():
            if (average := averages.get(key, {}).get(hour)) is not None and average + value > 0:
                totals.setdefault(key, {})[hour] = average + value
    out: dict[str, list[Series]] = {"sample_count": used["sample_count"]}
    for column in ("average", "maximum"):
        out[column] = [
            (labels, {h: 100.0 * v / total for h, v in values.items() if (total := totals.get(key, {}).get(h))})
            for labels, values in used[column]
            if (key := _gpu_key(labels)) in totals
        ]
    return out


def _gpu_key(labels: Mapping[str, str]) -> tuple[tuple[str, str], ...]:
    """A GPU's identity: its labels without the metric's own name."""
    return tuple(sorted((k, v) for k, v in labels.items() if k not in ("__name__", "@datapoint.@name")))


def _combine_into(
    found: dict[tuple[str, str], dict[int, Columns]],
    batch: Sequence[OTelNode],
    metric: str,
    stats: dict[str, list[Series]],
) -> None:
    """Each series to its node; per node and hour the busiest GPU or core (max of averages, max of maxima, max
    of sample counts, as the classic rows combine)."""
    owners = _owners(batch)
    for column, series in stats.items():
        for labels, values in series:
            node = _owner(labels, owners)
            if node is None:
                continue
            hours = found.setdefault((node, metric), {})
            for hour, value in values.items():
                columns = hours.setdefault(hour, {})
                columns[column] = max(columns.get(column, -math.inf), value)


def _owners(batch: Sequence[OTelNode]) -> dict[str, str]:
    owners: dict[str, str] = {}
    for node in batch:
        owners[node.instance_id] = node.resource_key
        for host in node.hosts:
            owners[host] = node.resource_key
    return owners


def _owner(labels: Mapping[str, str], owners: Mapping[str, str]) -> str | None:
    for label in (*INSTANCE_LABELS, *HOST_LABELS):
        value = labels.get(label)
        if value and (owner := owners.get(value.strip().lower() if label in HOST_LABELS else value.strip())):
            return owner
    return None


def _selector(metric: str, label: str, values: Iterable[str]) -> str:
    pattern = "|".join(_regex_escape(v) for v in sorted(set(values)))
    return '{"' + metric + '", "' + label + '"=~"' + pattern + '"}'


def _regex_escape(value: str) -> str:
    """A host name or instance id as a literal in a PromQL regular expression inside a double-quoted string."""
    out = []
    for char in value:
        if char.isalnum() or char in "-_":
            out.append(char)
        else:
            out.append("\\\\" + char)  # the backslash itself escaped for the string literal
    return "".join(out)


def _series(result: Iterable[Mapping[str, Any]]) -> Iterator[Series]:
    for item in result:
        labels = {str(k): str(v) for k, v in (item.get("metric") or {}).items()}
        values: dict[int, float] = {}
        for point in item.get("values") or []:
            try:
                stamp, raw = float(point[0]), float(point[1])
            except (TypeError, ValueError, IndexError):
                continue
            if math.isfinite(raw):
                values[int(stamp) // HOUR * HOUR - HOUR] = raw  # the hour the value covers
        if values:
            yield labels, values


def _rollups(resource_key: str, metric: str, hours: Mapping[int, Columns]) -> Iterator[HourlyRollup]:
    for hour in sorted(hours):
        columns = hours[hour]
        yield HourlyRollup(
            resource_key,
            OTEL_NAMESPACE,
            metric,
            datetime.fromtimestamp(hour, UTC),
            average=columns.get("average"),
            maximum=columns.get("maximum"),
            sum=None,
            sample_count=columns.get("sample_count"),
        )
