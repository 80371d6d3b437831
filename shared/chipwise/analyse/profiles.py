"""Per-resource profiles: what a resource is, what it costs and how busy it was over the look-back window.

A profile is plain data (frozen dataclasses) so every rule is a pure function of profiles, testable without a
database. :func:`build_profiles` assembles them from a :class:`ProfileSource` (the store's
:class:`~chipwise.store.repositories.profile_inputs.ProfileInputRepository` reads it with a fixed number of SQL
statements whatever the number of resources; CloudWatch rollups come one series at a time, mostly packed into one
row each, and are summarised as they come, see :mod:`chipwise.analyse.series`). This module imports no database code.

Signals are named by what they mean, not where they came from: ``neuron_util`` is the NeuronCore utilisation of the
busiest core whichever source had it (neuron-monitor reports in S3, Chipwise's agent in CloudWatch, Container
Insights), ``gpu_util`` the busiest GPU (CloudWatch agent on EC2; SageMaker endpoints and training jobs publish the
sum across GPUs, which is below 5 % only when every GPU is). Missing telemetry is kept apart from idleness: a
signal is None when nothing was published, and ``neuron_telemetry`` says whether Neuron metrics exist at all.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, date, datetime
from decimal import Decimal
from typing import Any, Literal, Protocol

from chipwise.analyse.series import HOUR, SeriesStats, summarise
from chipwise.catalog import Catalog
from chipwise.economics import monthly_cost, parse_utc, utc
from chipwise.models.common import Action
from chipwise.models.resources import (
    BatchEnvironmentDetails,
    CapacityReservationDetails,
    EndpointDetails,
    HyperPodClusterDetails,
    InferenceComponentDetails,
    InstanceDetails,
    NotebookInstanceDetails,
    ProvisionedThroughputDetails,
    StudioAppDetails,
    TrainingJobDetails,
    WorkloadHints,
    parse_details,
    parse_hints,
    resource_key,
)

RATE_PLACES = Decimal("0.000001")
# A Savings Plan or reservation shows as amortized cost below unblended cost; below this share it is rounding.
COMMITMENT_MIN_SHARE = Decimal("0.01")

MetricKey = tuple[str, str]
NeuronTelemetry = Literal["present", "missing", "unknown"]
RateSource = Literal["bill", "cost_explorer", "catalog"]

# CloudWatch metrics the rules read, and which rollup column is the hour's value: sums for counters, the hour's
# maximum for gauges (conservative: an hour is idle only when even its busiest minute was).
INVOCATIONS: MetricKey = ("AWS/SageMaker", "Invocations")
MODEL_LATENCY: MetricKey = ("AWS/SageMaker", "ModelLatency")
SM_CPU: MetricKey = ("/aws/sagemaker/Endpoints", "CPUUtilization")
SM_GPU: MetricKey = ("/aws/sagemaker/Endpoints", "GPUUtilization")
SM_GPU_MEMORY: MetricKey = ("/aws/sagemaker/Endpoints", "GPUMemoryUtilization")
# Inference components: 0-100 % of what the component reserved, by InferenceComponentName.
IC_GPU: MetricKey = ("/aws/sagemaker/InferenceComponents", "GPUUtilizationNormalized")
IC_GPU_MEMORY: MetricKey = ("/aws/sagemaker/InferenceComponents", "GPUMemoryUtilizationNormalized")
IC_CPU: MetricKey = ("/aws/sagemaker/InferenceComponents", "CPUUtilizationNormalized")
EC2_CPU: MetricKey = ("AWS/EC2", "CPUUtilization")
CWAGENT_GPU: MetricKey = ("CWAgent", "nvidia_smi_utilization_gpu")
NEURON_CORE: MetricKey = ("Chipwise/Neuron", "NeuronCoreUtilization")
NEURON_CORE_AVG: MetricKey = ("Chipwise/Neuron", "NeuronCoreUtilizationAvg")
NEURON_MEMORY: MetricKey = ("Chipwise/Neuron", "NeuronDeviceMemoryUsed")
NEURON_EXECUTIONS: MetricKey = ("Chipwise/Neuron", "ExecutionsCompleted")
EKS_NEURONCORE: MetricKey = ("ContainerInsights", "node_neuroncore_utilization")
# NVIDIA GPUs of EKS nodes (Container Insights with enhanced observability): busiest GPU %, frame buffer used %,
# power in watts, and the GPUs the node's running pods hold (Kubernetes requests) out of the GPUs it has.
EKS_GPU: MetricKey = ("ContainerInsights", "node_gpu_utilization")
EKS_GPU_MEMORY: MetricKey = ("ContainerInsights", "node_gpu_memory_utilization")
EKS_GPU_POWER: MetricKey = ("ContainerInsights", "node_gpu_power_draw")
EKS_GPU_REQUESTED: MetricKey = ("ContainerInsights", "node_gpu_usage_total")
EKS_GPU_LIMIT: MetricKey = ("ContainerInsights", "node_gpu_limit")
# The same node signals from OTel Container Insights (DCGM exporter and neuron-monitor names, read with PromQL and
# stored under the classic names and units: chipwise.collect.otel_metrics).
OTEL_NAMESPACE = "ContainerInsights/OTel"
OTEL_NEURONCORE: MetricKey = (OTEL_NAMESPACE, "node_neuroncore_utilization")
OTEL_GPU: MetricKey = (OTEL_NAMESPACE, "node_gpu_utilization")
OTEL_GPU_MEMORY: MetricKey = (OTEL_NAMESPACE, "node_gpu_memory_utilization")
OTEL_GPU_POWER: MetricKey = (OTEL_NAMESPACE, "node_gpu_power_draw")
CONTAINER_INSIGHTS_SOURCES = frozenset({"ContainerInsights", OTEL_NAMESPACE})
TRAINING_CPU: MetricKey = ("/aws/sagemaker/TrainingJobs", "CPUUtilization")
TRAINING_GPU: MetricKey = ("/aws/sagemaker/TrainingJobs", "GPUUtilization")
NEURON_MONITOR: MetricKey = ("neuron-monitor", "neuroncore_utilization")  # coverage of the S3 reports
GENERATED_TOKENS: MetricKey = ("Chipwise/Serving", "GeneratedTokens")  # tokens generated per hour (serving)
BEDROCK_INVOCATIONS: MetricKey = ("AWS/Bedrock", "Invocations")  # Provisioned Throughput, by ModelId

SUM_METRICS: frozenset[MetricKey] = frozenset({INVOCATIONS, NEURON_EXECUTIONS, GENERATED_TOKENS, BEDROCK_INVOCATIONS})
AVERAGE_METRICS: frozenset[MetricKey] = frozenset({MODEL_LATENCY})
READ_METRICS: tuple[MetricKey, ...] = (
    INVOCATIONS,
    MODEL_LATENCY,
    SM_CPU,
    SM_GPU,
    SM_GPU_MEMORY,
    IC_GPU,
    IC_GPU_MEMORY,
    IC_CPU,
    EC2_CPU,
    CWAGENT_GPU,
    NEURON_CORE,
    NEURON_CORE_AVG,
    NEURON_MEMORY,
    NEURON_EXECUTIONS,
    EKS_NEURONCORE,
    EKS_GPU,
    EKS_GPU_MEMORY,
    EKS_GPU_POWER,
    EKS_GPU_REQUESTED,
    EKS_GPU_LIMIT,
    OTEL_NEURONCORE,
    OTEL_GPU,
    OTEL_GPU_MEMORY,
    OTEL_GPU_POWER,
    TRAINING_CPU,
    TRAINING_GPU,
    GENERATED_TOKENS,
    BEDROCK_INVOCATIONS,
)
# The activity series a weekly pattern is read from (accelerator_off_hours): their values are kept by hour of week.
WEEKLY_METRICS: frozenset[MetricKey] = frozenset(
    {INVOCATIONS, NEURON_CORE, EKS_NEURONCORE, OTEL_NEURONCORE, CWAGENT_GPU, EKS_GPU, OTEL_GPU, SM_GPU, IC_GPU}
)
# Where a signal comes from when several sources publish it: the first in this order that has data answers. One
# list for every signal (README "Metric sources"): Chipwise's own agent (neuron-monitor reports in S3, then
# ``chipwise neuron-agent`` in Chipwise/Neuron), the CloudWatch agent (CWAgent), Container Insights, then what
# SageMaker publishes itself; AWS/EC2 (CPU only) comes last.
METRIC_SOURCE_ORDER: tuple[str, ...] = (
    "neuron-monitor",
    "Chipwise/Neuron",
    "CWAgent",
    "ContainerInsights",
    OTEL_NAMESPACE,
    "/aws/sagemaker/Endpoints",
    "/aws/sagemaker/InferenceComponents",
    "/aws/sagemaker/TrainingJobs",
    "AWS/EC2",
)
NEURON_COVERAGE: frozenset[MetricKey] = frozenset({NEURON_CORE, EKS_NEURONCORE, OTEL_NEURONCORE, NEURON_MONITOR})
LIVE_STATES = frozenset(
    {"running", "InService", "Updating", "SystemUpdating", "UpdateRollbackFailed", "InProgress", "ENABLED", "active"}
)
NEURON_PLATFORMS = frozenset({"inferentia", "trainium"})


# --- the profile ------------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class CostFacts:
    """The hourly rate of one instance of the resource's type and where it came from."""

    hourly_rate: Decimal | None
    rate_source: RateSource | None
    catalog_rate: Decimal | None = None
    commitment_discount: Decimal = Decimal(0)  # 1 - amortized/unblended for the type's usage (Savings Plans, RIs)

    @property
    def commitment_covered(self) -> bool:
        return self.commitment_discount >= COMMITMENT_MIN_SHARE


@dataclass(frozen=True, slots=True)
class Coverage:
    exists: bool
    hours_with_data: int


@dataclass(frozen=True, slots=True)
class Signals:
    """The utilisation and traffic series the rules read (None: not published for this resource)."""

    neuron_util: SeriesStats | None = None  # busiest NeuronCore, %
    neuron_util_avg: SeriesStats | None = None  # mean over the cores in use, %
    neuron_memory_bytes: SeriesStats | None = None  # Neuron device memory used
    neuron_executions: SeriesStats | None = None  # completed executions per hour
    neuron_cores_in_use: int | None = None
    neuron_source: str | None = None
    gpu_util: SeriesStats | None = None
    gpu_memory_util: SeriesStats | None = None  # SageMaker endpoints: % of GPU memory, summed across GPUs
    gpu_source: str | None = None
    gpu_memory_source: str | None = None
    cpu_util: SeriesStats | None = None
    invocations: SeriesStats | None = None  # requests per hour (hours with none are absent)
    latency_us: SeriesStats | None = None
    cpu_source: str | None = None
    generated_tokens: SeriesStats | None = None  # tokens generated per hour, where the server publishes them
    gpu_power_watts: SeriesStats | None = None  # EKS nodes: busiest GPU's power draw (Container Insights)
    gpus_requested: SeriesStats | None = None  # EKS nodes: GPUs the running pods hold (node_gpu_usage_total)
    gpu_limit: SeriesStats | None = None  # EKS nodes: GPUs the node has (node_gpu_limit)
    bedrock_invocations: SeriesStats | None = None  # Provisioned Throughput: invocations per hour (AWS/Bedrock)

    @property
    def sources(self) -> dict[str, str]:
        """Which source answered for each signal that has data (CloudWatch namespace, Container Insights, the
        CloudWatch agent, neuron-monitor)."""
        found = {
            "neuron_util": self.neuron_source,
            "gpu_util": self.gpu_source,
            "cpu_util": self.cpu_source,
            "invocations": "AWS/SageMaker" if self.invocations is not None else None,
            "latency": "AWS/SageMaker" if self.latency_us is not None else None,
            "gpu_memory_util": self.gpu_memory_source if self.gpu_memory_util is not None else None,
            "gpus_requested": "ContainerInsights" if self.gpus_requested is not None else None,
        }
        return {k: v for k, v in found.items() if v}


@dataclass(frozen=True, slots=True)
class ResourceProfile:
    """One resource over ``[window_start, window_end)``."""

    resource_id: int
    arn: str  # an ARN AWS accepts: the endpoint's for one variant of a multi-variant endpoint (``variant``)
    kind: str
    name: str
    account_id: str
    region: str
    instance_type: str | None
    instance_count: int
    platform: str
    state: str | None
    window_start: datetime
    window_end: datetime
    active_since: datetime  # earliest sign of life inside the window (launch time or first datapoint)
    run_hours: float  # hours it ran inside the window (wall clock, per instance)
    cost: CostFacts
    hints: WorkloadHints = field(default_factory=WorkloadHints)
    signals: Signals = field(default_factory=Signals)
    coverage: Mapping[MetricKey, Coverage] = field(default_factory=dict)
    instance_id: str | None = None
    eks_cluster: str | None = None
    serverless: bool = False
    batch_jobs_in_window: int | None = None  # Batch compute environments: jobs its queues ran in the window
    tags: Mapping[str, str] = field(default_factory=dict)
    # One production variant of a multi-variant endpoint: its variant, endpoint, and how its cost was split.
    variant_name: str | None = None
    endpoint_name: str | None = None
    cost_basis: str | None = None
    # The instance-equivalents the cost covers when not the whole instance count: an inference component's share
    # of its variant (None: unknown, so no cost), or the capacity of a variant that no component reserves.
    billed_instances: Decimal | None = None
    component_name: str | None = None  # an inference component: its name (``name`` is ``<endpoint>/<component>``)
    billed_unknown: bool = False  # a variant whose components could not be read: its own share is unknown
    variant: str | None = None  # the production variant this resource is, when its endpoint has several
    # A kind whose activity AWS does not expose (a notebook instance): (reason, fix, action) for rule cannot_judge.
    activity_unknown: tuple[str, str, Action] | None = None
    # Capacity held whether used or not (issue 25): a capacity reservation's instances nothing runs in (Total -
    # used), whether it is a Capacity Block (fee paid up front) and when its term ends; a Batch compute
    # environment's minimum vCPUs and the vCPUs of one instance of its type.
    unused_instances: int | None = None
    capacity_block: bool = False
    commitment_ends: datetime | None = None
    min_vcpus: int | None = None
    vcpu_per_instance: int | None = None
    last_user_activity: datetime | None = None  # Studio apps: LastUserActivityTimestamp
    commitment_term: str | None = None  # Bedrock Provisioned Throughput: OneMonth / SixMonths (None: no commitment)
    # Read by every rule on every resource: worked out once, when the profile is made (or replaced).
    _key: str = field(init=False, repr=False, compare=False)
    _neuron_telemetry: NeuronTelemetry = field(init=False, repr=False, compare=False)
    _monthly_cost: Decimal | None = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "_key", resource_key(self.arn, self.variant))
        object.__setattr__(self, "_neuron_telemetry", self._telemetry())
        count = self.billed_count
        rate = self.cost.hourly_rate
        object.__setattr__(self, "_monthly_cost", None if rate is None or count is None else monthly_cost(rate, count))

    @property
    def key(self) -> str:
        """Chipwise's id of this resource (:func:`chipwise.models.resources.resource_key`)."""
        return self._key

    @property
    def window_hours(self) -> float:
        return (self.window_end - self.window_start) / HOUR

    @property
    def live(self) -> bool:
        """Capacity that bills now (a running instance, an in-service endpoint, a training job in progress)."""
        return self.state in LIVE_STATES

    @property
    def neuron(self) -> bool:
        return self.platform in NEURON_PLATFORMS

    @property
    def family(self) -> str | None:
        """The instance family without ``ml.`` (``inf2``)."""
        if not self.instance_type:
            return None
        name = self.instance_type.removeprefix("ml.")
        return name.split(".", 1)[0]

    @property
    def neuron_telemetry(self) -> NeuronTelemetry:
        """present: some Neuron source has data; missing: the sources were checked and none has; unknown: not
        checked (no coverage rows, e.g. the metrics stage failed)."""
        return self._neuron_telemetry

    def _telemetry(self) -> NeuronTelemetry:
        if self.signals.neuron_util is not None:
            return "present"
        checked = [c for key, c in self.coverage.items() if key in NEURON_COVERAGE]
        if any(c.exists and c.hours_with_data > 0 for c in checked):
            return "present"
        return "missing" if checked else "unknown"

    @property
    def shares_instances(self) -> bool:
        """An inference component, or a variant whose instances components share: whole-instance advice (resize,
        move, schedule) does not apply to its part of the bill."""
        return self.kind == "sagemaker_inference_component" or self.billed_instances is not None or self.billed_unknown

    @property
    def billed_count(self) -> Decimal | None:
        """The instance-equivalents its cost covers (None: unknown, an inference component without a known share)."""
        if self.kind == "sagemaker_inference_component" or self.billed_unknown:
            return self.billed_instances
        return Decimal(self.instance_count) if self.billed_instances is None else self.billed_instances

    @property
    def monthly_cost(self) -> Decimal | None:
        """Always-on monthly cost (730 h) of the instances (or the share of them) it pays for at the effective
        rate."""
        return self._monthly_cost


# --- building profiles from the store ---------------------------------------------------------------------------


class _HourParser:
    """Hours as the store hands them: timestamps selected as text (faster than the driver's datetime conversion)
    or hours counted from the epoch (packed series), turned into datetimes once per distinct hour."""

    def __init__(self) -> None:
        self._cache: dict[Any, datetime] = {}

    def __call__(self, raw: Any) -> datetime:
        found = self._cache.get(raw)
        if found is None:
            if isinstance(raw, int):
                found = datetime.fromtimestamp(raw * 3600, UTC)
            else:
                found = parse_utc(raw if isinstance(raw, datetime) else str(raw))
            self._cache[raw] = found
        return found


class ProfileSource(Protocol):
    """What :func:`build_profiles` reads: one account and region's stored inventory, coverage, costs and telemetry
    (:class:`chipwise.store.repositories.profile_inputs.ProfileInputRepository` reads them from the store)."""

    def resources(self) -> list[dict[str, Any]]:
        """Live accelerated resources as column mappings, in id order."""
        ...

    def coverage(self) -> Iterable[tuple[int, str, str, bool, int]]:
        """(resource id, namespace, metric, exists, hours with data) per covered metric."""
        ...

    def usage_by_type(self, start: date, end: date) -> Mapping[str, tuple[Decimal, Decimal, Decimal]]:
        """Per lower-case instance type: (unblended, amortized, usage hours) over ``[start, end)``."""
        ...

    def bill_usage(self, start: date, end: date) -> Mapping[str, tuple[Decimal, Decimal, Decimal, bool]]:
        """Per lower-case resource id of the bill (EC2 instance id, SageMaker ARN): (public on-demand cost, effective
        cost, usage hours, whether a Savings Plan or reservation covered some of it); empty when the scan prices
        from Cost Explorer."""
        ...

    def metric_series(
        self,
        start: datetime,
        end: datetime,
        names: Sequence[str],
        sum_metrics: Sequence[str],
        average_metrics: Sequence[str],
    ) -> Iterable[tuple[int, str, str, Sequence[Any], Sequence[float]]]:
        """(resource id, namespace, metric, hours, values) per series with data in the window, the hours oldest
        first as text or as hours from the epoch, the values the hour's sum for ``sum_metrics``, average for
        ``average_metrics`` and maximum for the others."""
        ...

    def neuron_rows(self, start: datetime, end: datetime) -> Iterable[tuple[Any, ...]]:
        """(instance id, hour as text, util max, util avg, memory, executions, cores in use) in (instance, hour)
        order, the runtimes of each hour combined."""
        ...


def build_profiles(source: ProfileSource, *, start: datetime, end: datetime, catalog: Catalog) -> list[ResourceProfile]:
    """Profiles of the source's accelerated resources over ``[start, end)``."""
    resources = source.resources()
    if not resources:
        return []
    coverage: dict[int, dict[MetricKey, Coverage]] = defaultdict(dict)
    for resource_id, namespace, metric, exists, hours in source.coverage():
        coverage[resource_id][(namespace, metric)] = Coverage(bool(exists), int(hours or 0))
    region = str(resources[0]["region"])
    rates = _rates(source.usage_by_type(start.date(), end.date()), region, catalog)
    billed = _bill_rates(source.bill_usage(start.date(), end.date()), region, catalog, resources)
    parse = _HourParser()
    neuron = _neuron_series(source.neuron_rows(start, end), parse)
    metrics = _metric_series(source, start, end, parse)
    return [
        _profile(
            r,
            start,
            end,
            billed.get(r["id"], rates),
            coverage.get(r["id"], {}),
            metrics.get(r["id"], {}),
            neuron,
            catalog,
        )
        for r in resources
    ]


def _rates(
    usage: Mapping[str, tuple[Decimal, Decimal, Decimal]], region: str, catalog: Catalog
) -> dict[str, CostFacts]:
    """The account's effective rate per instance type (amortized cost ÷ usage hours, summed as Decimal)."""
    facts: dict[str, CostFacts] = {}
    for instance_type, (unblended, amortized, hours) in usage.items():
        if hours <= 0:
            continue
        discount = Decimal(0)
        if unblended > 0 and amortized < unblended:
            discount = (1 - amortized / unblended).quantize(RATE_PLACES)
        facts[instance_type] = CostFacts(
            hourly_rate=(amortized / hours).quantize(RATE_PLACES),
            rate_source="cost_explorer",
            catalog_rate=catalog.price(instance_type, region),
            commitment_discount=discount,
        )
    return facts


def bill_key(row: Mapping[str, Any]) -> str | None:
    """How the bill names a resource: its EC2 instance id, else its ARN (lower case); None for one variant of a
    multi-variant endpoint (the bill names the endpoint: its variants' shares are split by rate and count)."""
    if row.get("variant"):
        return None
    details = row.get("details") or {}
    instance_id = details.get("instance_id") if isinstance(details, Mapping) else None
    return str(instance_id or row["arn"]).lower()


def _bill_rates(
    usage: Mapping[str, tuple[Decimal, Decimal, Decimal, bool]],
    region: str,
    catalog: Catalog,
    resources: Sequence[Mapping[str, Any]],
) -> dict[int, dict[str, CostFacts]]:
    """Each resource the bill names, at its own effective rate (effective cost ÷ usage hours), keyed by resource
    id then instance type (the shape :func:`_cost_facts` reads)."""
    if not usage:
        return {}
    found: dict[int, dict[str, CostFacts]] = {}
    for row in resources:
        key = bill_key(row)
        item = usage.get(key) if key is not None else None
        instance_type = row.get("instance_type") or ""  # none (a Bedrock provisioned throughput): its bill alone
        if item is None:
            continue
        public, effective, hours, committed = item
        if hours <= 0:
            continue
        discount = Decimal(0)
        if committed and public > 0 and effective < public:
            discount = (1 - effective / public).quantize(RATE_PLACES)
        found[int(row["id"])] = {
            str(instance_type).lower(): CostFacts(
                hourly_rate=(effective / hours).quantize(RATE_PLACES),
                rate_source="bill",
                catalog_rate=(catalog.price(str(instance_type), region) if instance_type else None)
                or (public / hours).quantize(RATE_PLACES),
                commitment_discount=discount,
            )
        }
    return found


def _metric_series(
    source: ProfileSource, start: datetime, end: datetime, parse: _HourParser
) -> dict[int, dict[MetricKey, SeriesStats]]:
    """Every wanted metric of every wanted resource, summarised as the rows stream by."""
    series = source.metric_series(
        start,
        end,
        sorted({metric for _, metric in READ_METRICS}),
        sorted({m for _, m in SUM_METRICS}),
        sorted({m for _, m in AVERAGE_METRICS}),
    )
    read = frozenset(READ_METRICS)
    found: dict[int, dict[MetricKey, SeriesStats]] = defaultdict(dict)
    for resource_id, namespace, metric, hours, values in series:
        key = (namespace, metric)
        if key not in read:
            continue  # a namespace the rules do not read
        stats = summarise(hours, values, parse, weekly=key in WEEKLY_METRICS)
        if stats is not None:
            found[resource_id][key] = stats
    return found


def _neuron_series(rows: Iterable[tuple[Any, ...]], parse: _HourParser) -> dict[str, _NeuronSeries]:
    """neuron-monitor rollups per instance id, one instance's hours at a time: summarised, then dropped."""
    found: dict[str, _NeuronSeries] = {}
    current: str | None = None
    columns: list[list[Any]] = []
    for instance_id, *values in rows:
        if instance_id != current:
            if current is not None:
                found[current] = _neuron_summary(columns, parse)
            current, columns = instance_id, [[], [], [], [], [], []]
        for index, value in enumerate(values):
            columns[index].append(value)
    if current is not None:
        found[current] = _neuron_summary(columns, parse)
    return found


def _cost_facts(instance_type: str | None, region: str, rates: Mapping[str, CostFacts], catalog: Catalog) -> CostFacts:
    """The resource's rate: its own bill's (a resource with no instance type, such as a Bedrock provisioned
    throughput, has no public price: what the account pays for it is its price), else the account's rate for its
    type, else the catalog's list price."""
    found = rates.get((instance_type or "").lower())
    if found is not None:
        return found
    if not instance_type:
        return CostFacts(None, None)
    price = catalog.price(instance_type, region)
    return CostFacts(price, "catalog" if price is not None else None, price)


@dataclass(frozen=True)
class _NeuronSeries:
    util: SeriesStats | None
    util_avg: SeriesStats | None
    memory: SeriesStats | None
    executions: SeriesStats | None
    cores_in_use: int | None


def _neuron_summary(rows: Sequence[list[Any]], parse: _HourParser) -> _NeuronSeries:
    hours = rows[0]

    def stats(index: int) -> SeriesStats | None:
        pairs = [(h, float(v)) for h, v in zip(hours, rows[index], strict=True) if v is not None]
        return summarise([h for h, _ in pairs], [v for _, v in pairs], parse, weekly=index == 1)

    cores = [int(c) for c in rows[5] if c is not None]
    return _NeuronSeries(stats(1), stats(2), stats(3), stats(4), max(cores) if cores else None)


# --- assembling one profile -------------------------------------------------------------------------------------


def _profile(
    row: Mapping[str, Any],
    start: datetime,
    end: datetime,
    rates: Mapping[str, CostFacts],
    coverage: Mapping[MetricKey, Coverage],
    metrics: Mapping[MetricKey, SeriesStats],
    neuron: Mapping[str, _NeuronSeries],
    catalog: Catalog,
) -> ResourceProfile:
    details = parse_details(str(row["kind"]), row["details"])
    instance_id = details.instance_id if isinstance(details, InstanceDetails) else None
    reports = neuron.get(instance_id) if instance_id else None
    signals = _signals(metrics, reports)
    active_since = _active_since(row, start, end, signals, metrics)
    variants = details.variants if isinstance(details, EndpointDetails) else []
    serving = details if isinstance(details, EndpointDetails | InferenceComponentDetails) else None
    return ResourceProfile(
        resource_id=int(row["id"]),
        arn=str(row["arn"]),
        variant=row.get("variant") or None,
        kind=str(row["kind"]),
        name=str(row["name"]),
        account_id=str(row["account_id"]),
        region=str(row["region"]),
        instance_type=row["instance_type"],
        instance_count=int(row["instance_count"] or 0),
        platform=str(row["platform"]),
        state=row["state"],
        window_start=start,
        window_end=end,
        active_since=active_since,
        run_hours=_run_hours(row, start, end, active_since, metrics),
        cost=_cost_facts(row["instance_type"], str(row["region"]), rates, catalog),
        hints=parse_hints(row["hints"]),
        signals=signals,
        coverage=dict(coverage),
        instance_id=instance_id,
        eks_cluster=details.eks_cluster if isinstance(details, InstanceDetails) else None,
        serverless=bool(variants) and all(not v.instance_type for v in variants),
        batch_jobs_in_window=(
            sum(q.jobs_in_window for q in details.job_queues) if isinstance(details, BatchEnvironmentDetails) else None
        ),
        tags=dict(row["tags"] or {}),
        variant_name=serving.variant_name if serving else None,
        endpoint_name=serving.endpoint_name if serving else None,
        cost_basis=serving.cost_basis if serving else None,
        billed_instances=serving.billed_instances if serving else None,
        component_name=details.component.name if isinstance(details, InferenceComponentDetails) else None,
        billed_unknown=details.billed_unknown if isinstance(details, EndpointDetails) else False,
        activity_unknown=_activity_unknown(details, coverage),
        unused_instances=(
            details.total_instances - details.used_instances
            if isinstance(details, CapacityReservationDetails)
            else None
        ),
        capacity_block=isinstance(details, CapacityReservationDetails) and details.capacity_block,
        commitment_ends=_commitment_ends(details),
        commitment_term=details.commitment_duration if isinstance(details, ProvisionedThroughputDetails) else None,
        last_user_activity=(
            utc(details.last_user_activity)
            if isinstance(details, StudioAppDetails) and details.last_user_activity
            else None
        ),
        min_vcpus=details.min_vcpus if isinstance(details, BatchEnvironmentDetails) else None,
        vcpu_per_instance=_vcpu(details),
    )


NOTEBOOK_NO_ACTIVITY = (
    "SageMaker publishes no activity metric for a notebook instance: whether anyone uses it cannot be read"
)
NOTEBOOK_FIX = "a lifecycle configuration that stops the notebook instance when idle (idle shutdown)"
STUDIO_NO_ACTIVITY = "Studio recorded no user activity for this app (DescribeApp has no LastUserActivityTimestamp)"
STUDIO_FIX = "idle shutdown for the domain's apps (Studio's idle settings or a lifecycle configuration)"
HYPERPOD_NO_ACTIVITY = (
    "Chipwise reads no HyperPod node utilisation yet: whether its instance groups are used cannot be read"
)
HYPERPOD_FIX = (
    "enable Container Insights on the cluster (HyperPod publishes node_gpu_utilization by ClusterId) and scale "
    "idle instance groups down"
)


def _commitment_ends(details: Any) -> datetime | None:
    if isinstance(details, CapacityReservationDetails):
        return details.end_date
    if isinstance(details, ProvisionedThroughputDetails):
        return details.commitment_expiration
    return None


def _activity_unknown(details: Any, coverage: Mapping[MetricKey, Coverage]) -> tuple[str, str, Action] | None:
    """Why a resource of a kind without activity data cannot be judged, the fix, and its action."""
    if isinstance(details, ProvisionedThroughputDetails) and BEDROCK_INVOCATIONS not in coverage:
        reason = "its AWS/Bedrock invocations were not read this scan (the metrics stage did not reach it)"
        return reason, "scan again with cloudwatch:GetMetricData allowed", "enable_telemetry"
    if isinstance(details, NotebookInstanceDetails):
        fix = NOTEBOOK_FIX
        if details.lifecycle_config:
            fix = f"check that lifecycle configuration {details.lifecycle_config} stops it when idle ({NOTEBOOK_FIX})"
        return NOTEBOOK_NO_ACTIVITY, fix, "schedule"
    if isinstance(details, StudioAppDetails) and details.last_user_activity is None:
        return STUDIO_NO_ACTIVITY, STUDIO_FIX, "schedule"
    if isinstance(details, HyperPodClusterDetails):
        return HYPERPOD_NO_ACTIVITY, HYPERPOD_FIX, "enable_telemetry"
    return None


def _vcpu(details: Any) -> int | None:
    catalog = getattr(details, "catalog", None) or {}
    vcpu = catalog.get("vcpu")
    return int(vcpu) if vcpu else None


def _signals(metrics: Mapping[MetricKey, SeriesStats], reports: _NeuronSeries | None) -> Signals:
    neuron_util, neuron_source = _first(
        (reports.util if reports else None, "neuron-monitor"),
        (metrics.get(NEURON_CORE), NEURON_CORE[0]),
        (metrics.get(EKS_NEURONCORE), EKS_NEURONCORE[0]),
        (metrics.get(OTEL_NEURONCORE), OTEL_NAMESPACE),
    )
    gpu_util, gpu_source = _first(
        *((metrics.get(key), key[0]) for key in (CWAGENT_GPU, EKS_GPU, OTEL_GPU, SM_GPU, IC_GPU, TRAINING_GPU))
    )
    cpu_util, cpu_source = _first(*((metrics.get(key), key[0]) for key in (EC2_CPU, SM_CPU, IC_CPU, TRAINING_CPU)))
    gpu_memory_util, gpu_memory_source = _first(
        *((metrics.get(key), key[0]) for key in (EKS_GPU_MEMORY, OTEL_GPU_MEMORY, SM_GPU_MEMORY, IC_GPU_MEMORY))
    )
    return Signals(
        neuron_util=neuron_util,
        neuron_util_avg=(reports.util_avg if reports else None) or metrics.get(NEURON_CORE_AVG),
        neuron_memory_bytes=(reports.memory if reports else None) or metrics.get(NEURON_MEMORY),
        neuron_executions=(reports.executions if reports else None) or metrics.get(NEURON_EXECUTIONS),
        neuron_cores_in_use=reports.cores_in_use if reports else None,
        neuron_source=neuron_source,
        gpu_util=gpu_util,
        gpu_memory_util=gpu_memory_util,
        gpu_source=gpu_source,
        gpu_memory_source=gpu_memory_source,
        cpu_util=cpu_util,
        invocations=metrics.get(INVOCATIONS),
        latency_us=metrics.get(MODEL_LATENCY),
        cpu_source=cpu_source,
        generated_tokens=metrics.get(GENERATED_TOKENS),
        gpu_power_watts=metrics.get(EKS_GPU_POWER) or metrics.get(OTEL_GPU_POWER),
        gpus_requested=metrics.get(EKS_GPU_REQUESTED),
        gpu_limit=metrics.get(EKS_GPU_LIMIT),
        bedrock_invocations=metrics.get(BEDROCK_INVOCATIONS),
    )


def source_rank(source: str) -> int:
    """Where ``source`` stands in :data:`METRIC_SOURCE_ORDER` (a source not in it comes after every listed one)."""
    return METRIC_SOURCE_ORDER.index(source) if source in METRIC_SOURCE_ORDER else len(METRIC_SOURCE_ORDER)


def _first(*candidates: tuple[SeriesStats | None, str]) -> tuple[SeriesStats | None, str | None]:
    """The candidate with data from the source first in :data:`METRIC_SOURCE_ORDER`."""
    for stats, source in sorted(candidates, key=lambda c: source_rank(c[1])):
        if stats is not None:
            return stats, source
    return None, None


def _active_since(
    row: Mapping[str, Any],
    start: datetime,
    end: datetime,
    signals: Signals,
    metrics: Mapping[MetricKey, SeriesStats],
) -> datetime:
    """The launch time, or the first datapoint when that is earlier (instances restarted since, or a launch
    time the API resets); never before the window."""
    candidates = [s.first_hour for s in metrics.values()]
    if signals.neuron_util is not None:
        candidates.append(signals.neuron_util.first_hour)
    launched = row["launched_at"]
    if launched is not None:
        candidates.append(launched)
    earliest = min(candidates, default=end)
    return min(max(start, earliest), end)


def _run_hours(
    row: Mapping[str, Any], start: datetime, end: datetime, active_since: datetime, metrics: Mapping[MetricKey, Any]
) -> float:
    """Hours inside the window: a training job's run (its start/end clipped to the window, or the hours its
    metrics cover when longer); anything else from ``active_since`` to the end of the window (or its end)."""
    if row["kind"] != "sagemaker_training_job":
        stop = min(end, row["ended_at"]) if row["ended_at"] is not None else end
        return max(0.0, (stop - active_since) / HOUR)
    details = parse_details(str(row["kind"]), row["details"])
    if not isinstance(details, TrainingJobDetails):
        return 0.0
    clipped = 0.0
    begun = utc(details.training_start) if details.training_start else None
    finished = utc(details.training_end) if details.training_end else None
    if begun is not None:
        clipped = max(0.0, (min(end, finished or end) - max(start, begun)) / HOUR)
    elif details.billable_seconds:
        clipped = float(details.billable_seconds) / 3600
    observed = max((s.hours for k, s in metrics.items() if k in (TRAINING_CPU, TRAINING_GPU)), default=0)
    return max(clipped, float(observed))
