"""Per-resource profiles: what a resource is, what it costs and how busy it was over the look-back window.

A profile is plain data (frozen dataclasses) so every rule is a pure function of profiles, testable without a
database. :func:`build_profiles` makes them from the store with a fixed number of SQL statements whatever the number
of resources: one each for resources, metric coverage, cost records, neuron-monitor rollups and CloudWatch rollups
(streamed in resource order and summarised on the fly, see :mod:`chipwise.analyse.series`).

Signals are named by what they mean, not where they came from: ``neuron_util`` is the NeuronCore utilisation of the
busiest core whichever source had it (neuron-monitor reports in S3, Chipwise's agent in CloudWatch, Container
Insights), ``gpu_util`` the busiest GPU (CloudWatch agent on EC2; SageMaker endpoints and training jobs publish the
sum across GPUs, which is below 5 % only when every GPU is). Missing telemetry is kept apart from idleness: a
signal is None when nothing was published, and ``neuron_telemetry`` says whether Neuron metrics exist at all.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, date, datetime
from decimal import Decimal
from typing import Any, Literal

from sqlalchemy import String, and_, case, cast, func, or_, select
from sqlalchemy.orm import Session

from chipwise.analyse.economics import monthly_cost
from chipwise.analyse.series import HOUR, SeriesStats, summarise
from chipwise.catalog import Catalog
from chipwise.store.tables import CostRecord, MetricCoverage, MetricRollup, NeuronRollup, Resource

GONE = "gone"
RATE_PLACES = Decimal("0.000001")
# A Savings Plan or reservation shows as amortized cost below unblended cost; below this share it is rounding.
COMMITMENT_MIN_SHARE = Decimal("0.01")
STREAM_ROWS = 20_000

MetricKey = tuple[str, str]
NeuronTelemetry = Literal["present", "missing", "unknown"]
RateSource = Literal["cost_explorer", "catalog"]

# CloudWatch metrics the rules read, and which rollup column is the hour's value: sums for counters, the hour's
# maximum for gauges (conservative: an hour is idle only when even its busiest minute was).
INVOCATIONS: MetricKey = ("AWS/SageMaker", "Invocations")
MODEL_LATENCY: MetricKey = ("AWS/SageMaker", "ModelLatency")
SM_CPU: MetricKey = ("/aws/sagemaker/Endpoints", "CPUUtilization")
SM_GPU: MetricKey = ("/aws/sagemaker/Endpoints", "GPUUtilization")
SM_GPU_MEMORY: MetricKey = ("/aws/sagemaker/Endpoints", "GPUMemoryUtilization")
EC2_CPU: MetricKey = ("AWS/EC2", "CPUUtilization")
CWAGENT_GPU: MetricKey = ("CWAgent", "nvidia_smi_utilization_gpu")
NEURON_CORE: MetricKey = ("Chipwise/Neuron", "NeuronCoreUtilization")
NEURON_CORE_AVG: MetricKey = ("Chipwise/Neuron", "NeuronCoreUtilizationAvg")
NEURON_MEMORY: MetricKey = ("Chipwise/Neuron", "NeuronDeviceMemoryUsed")
NEURON_EXECUTIONS: MetricKey = ("Chipwise/Neuron", "ExecutionsCompleted")
EKS_NEURONCORE: MetricKey = ("ContainerInsights", "node_neuroncore_utilization")
TRAINING_CPU: MetricKey = ("/aws/sagemaker/TrainingJobs", "CPUUtilization")
TRAINING_GPU: MetricKey = ("/aws/sagemaker/TrainingJobs", "GPUUtilization")
NEURON_MONITOR: MetricKey = ("neuron-monitor", "neuroncore_utilization")  # coverage of the S3 reports

SUM_METRICS: frozenset[MetricKey] = frozenset({INVOCATIONS, NEURON_EXECUTIONS})
AVERAGE_METRICS: frozenset[MetricKey] = frozenset({MODEL_LATENCY})
READ_METRICS: tuple[MetricKey, ...] = (
    INVOCATIONS,
    MODEL_LATENCY,
    SM_CPU,
    SM_GPU,
    SM_GPU_MEMORY,
    EC2_CPU,
    CWAGENT_GPU,
    NEURON_CORE,
    NEURON_CORE_AVG,
    NEURON_MEMORY,
    NEURON_EXECUTIONS,
    EKS_NEURONCORE,
    TRAINING_CPU,
    TRAINING_GPU,
)
NEURON_COVERAGE: frozenset[MetricKey] = frozenset({NEURON_CORE, EKS_NEURONCORE, NEURON_MONITOR})
LIVE_STATES = frozenset(
    {"running", "InService", "Updating", "SystemUpdating", "UpdateRollbackFailed", "InProgress", "ENABLED"}
)
NEURON_PLATFORMS = frozenset({"inferentia", "trainium"})


# --- the profile ------------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Hints:
    """What runs on the resource, as the collector read it from tags, image and environment."""

    model_family: str | None = None
    workload: Literal["training", "inference"] | None = None
    custom_cuda: bool = False
    owner: str | None = None
    hf_model_id: str | None = None
    image: str | None = None
    serving_stack: str | None = None
    neuron_image: bool = False
    sources: Mapping[str, str] = field(default_factory=dict)

    @classmethod
    def from_json(cls, raw: Mapping[str, Any] | None) -> Hints:
        raw = raw or {}
        workload = raw.get("workload")
        return cls(
            model_family=raw.get("model_family") or None,
            workload=workload if workload in ("training", "inference") else None,
            custom_cuda=bool(raw.get("custom_cuda")),
            owner=raw.get("owner") or None,
            hf_model_id=raw.get("hf_model_id") or None,
            image=raw.get("image") or None,
            serving_stack=raw.get("serving_stack") or None,
            neuron_image=bool(raw.get("neuron_image")),
            sources=dict(raw.get("sources") or {}),
        )


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
    cpu_util: SeriesStats | None = None
    invocations: SeriesStats | None = None  # requests per hour (hours with none are absent)
    latency_us: SeriesStats | None = None


@dataclass(frozen=True, slots=True)
class ResourceProfile:
    """One resource over ``[window_start, window_end)``."""

    resource_id: int
    arn: str
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
    hints: Hints = field(default_factory=Hints)
    signals: Signals = field(default_factory=Signals)
    coverage: Mapping[MetricKey, Coverage] = field(default_factory=dict)
    instance_id: str | None = None
    eks_cluster: str | None = None
    serverless: bool = False
    batch_jobs_in_window: int | None = None  # Batch compute environments: jobs its queues ran in the window
    tags: Mapping[str, str] = field(default_factory=dict)

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
        if self.signals.neuron_util is not None:
            return "present"
        checked = [c for key, c in self.coverage.items() if key in NEURON_COVERAGE]
        if any(c.exists and c.hours_with_data > 0 for c in checked):
            return "present"
        return "missing" if checked else "unknown"

    @property
    def monthly_cost(self) -> Decimal | None:
        """Always-on monthly cost (730 h) of all its instances at the effective rate."""
        if self.cost.hourly_rate is None:
            return None
        return monthly_cost(self.cost.hourly_rate, self.instance_count)


# --- building profiles from the store ---------------------------------------------------------------------------


@dataclass
class _Series:
    hours: list[Any] = field(default_factory=list)  # as the driver returns them (text), parsed on demand
    values: list[float] = field(default_factory=list)


class _HourParser:
    """Timestamps selected as text (faster than the driver's datetime conversion), parsed once per distinct hour."""

    def __init__(self) -> None:
        self._cache: dict[Any, datetime] = {}

    def __call__(self, raw: Any) -> datetime:
        found = self._cache.get(raw)
        if found is None:
            parsed = raw if isinstance(raw, datetime) else datetime.fromisoformat(str(raw))
            found = parsed.replace(tzinfo=UTC) if parsed.tzinfo is None else parsed.astimezone(UTC)
            self._cache[raw] = found
        return found


def build_profiles(
    session: Session, *, account_id: str, region: str, start: datetime, end: datetime, catalog: Catalog
) -> list[ResourceProfile]:
    """Profiles of the account's accelerated resources in ``region`` over ``[start, end)`` (five statements)."""
    resources = _resources(session, account_id, region)
    if not resources:
        return []
    wanted = _resource_ids(account_id, region)
    coverage = _coverage(session, wanted)
    rates = _rates(session, account_id, region, start.date(), end.date(), catalog)
    parse = _HourParser()
    neuron = _neuron_series(session, account_id, start, end, parse)
    metrics = _metric_series(session, wanted, start, end, parse)
    return [
        _profile(r, start, end, rates, coverage.get(r["id"], {}), metrics.get(r["id"], {}), neuron, catalog)
        for r in resources
    ]


_RESOURCE_COLUMNS = (
    Resource.id,
    Resource.arn,
    Resource.kind,
    Resource.name,
    Resource.account_id,
    Resource.region,
    Resource.instance_type,
    Resource.instance_count,
    Resource.platform,
    Resource.state,
    Resource.launched_at,
    Resource.ended_at,
    Resource.tags,
    Resource.hints,
    Resource.details,
)


def _live_accelerated(account_id: str, region: str) -> Any:
    return and_(
        Resource.account_id == account_id,
        Resource.region == region,
        Resource.platform != "cpu",
        Resource.state.is_distinct_from(GONE),
    )


def _resource_ids(account_id: str, region: str) -> Any:
    return select(Resource.id).where(_live_accelerated(account_id, region)).scalar_subquery()


def _resources(session: Session, account_id: str, region: str) -> list[dict[str, Any]]:
    stmt = select(*_RESOURCE_COLUMNS).where(_live_accelerated(account_id, region)).order_by(Resource.id)
    return [dict(row._mapping) for row in session.execute(stmt)]


def _coverage(session: Session, wanted: Any) -> dict[int, dict[MetricKey, Coverage]]:
    stmt = select(
        MetricCoverage.resource_id,
        MetricCoverage.namespace,
        MetricCoverage.metric,
        MetricCoverage.exists,
        MetricCoverage.hours_with_data,
    ).where(MetricCoverage.resource_id.in_(wanted))
    found: dict[int, dict[MetricKey, Coverage]] = defaultdict(dict)
    for resource_id, namespace, metric, exists, hours in session.execute(stmt):
        found[resource_id][(namespace, metric)] = Coverage(bool(exists), int(hours or 0))
    return found


@dataclass
class _Usage:
    unblended: Decimal = Decimal(0)
    amortized: Decimal = Decimal(0)
    hours: Decimal = Decimal(0)


def _rates(
    session: Session, account_id: str, region: str, start: date, end: date, catalog: Catalog
) -> dict[str, CostFacts]:
    """The account's effective rate per instance type (amortized cost ÷ usage hours, summed as Decimal)."""
    stmt = select(
        CostRecord.instance_type, CostRecord.unblended_cost, CostRecord.amortized_cost, CostRecord.usage_quantity
    ).where(
        CostRecord.account_id == account_id,
        CostRecord.day >= start,
        CostRecord.day < end,
        CostRecord.instance_type.is_not(None),
        or_(CostRecord.region == region, CostRecord.region.is_(None)),
    )
    usage: dict[str, _Usage] = defaultdict(_Usage)
    for instance_type, unblended, amortized, quantity in session.execute(stmt):
        item = usage[str(instance_type).lower()]
        item.unblended += unblended
        item.amortized += amortized
        item.hours += quantity
    facts: dict[str, CostFacts] = {}
    for instance_type, item in usage.items():
        if item.hours <= 0:
            continue
        discount = Decimal(0)
        if item.unblended > 0 and item.amortized < item.unblended:
            discount = (1 - item.amortized / item.unblended).quantize(RATE_PLACES)
        facts[instance_type] = CostFacts(
            hourly_rate=(item.amortized / item.hours).quantize(RATE_PLACES),
            rate_source="cost_explorer",
            catalog_rate=catalog.price(instance_type, region),
            commitment_discount=discount,
        )
    return facts


def _cost_facts(instance_type: str | None, region: str, rates: Mapping[str, CostFacts], catalog: Catalog) -> CostFacts:
    if not instance_type:
        return CostFacts(None, None)
    found = rates.get(instance_type.lower())
    if found is not None:
        return found
    price = catalog.price(instance_type, region)
    return CostFacts(price, "catalog" if price is not None else None, price)


def _metric_series(
    session: Session, wanted: Any, start: datetime, end: datetime, parse: _HourParser
) -> dict[int, dict[MetricKey, SeriesStats]]:
    """Every wanted metric of every wanted resource, summarised; rows streamed in (resource, metric, hour) order
    through the Core connection (no ORM row processing: this is the query that reads millions of rows)."""
    names = sorted({metric for _, metric in READ_METRICS})
    stmt = (
        select(
            MetricRollup.resource_id,
            MetricRollup.namespace,
            MetricRollup.metric,
            cast(MetricRollup.hour, String),
            _hour_value(),
        )
        .where(
            MetricRollup.resource_id.in_(wanted),
            MetricRollup.metric.in_(names),
            MetricRollup.hour >= start,
            MetricRollup.hour < end,
        )
        .order_by(MetricRollup.resource_id, MetricRollup.namespace, MetricRollup.metric, MetricRollup.hour)
    )
    rows = session.connection().execute(stmt.execution_options(yield_per=STREAM_ROWS))
    found: dict[int, dict[MetricKey, SeriesStats]] = defaultdict(dict)
    for (resource_id, key), series in _grouped(rows, frozenset(READ_METRICS)):
        stats = summarise(series.hours, series.values, parse)
        if stats is not None:
            found[resource_id][key] = stats
    return found


def _hour_value() -> Any:
    """The hour's value, chosen in SQL: the sum for counters, the average for latency, else the maximum."""
    return case(
        (MetricRollup.metric.in_(sorted({m for _, m in SUM_METRICS})), MetricRollup.sum),
        (
            MetricRollup.metric.in_(sorted({m for _, m in AVERAGE_METRICS})),
            func.coalesce(MetricRollup.average, MetricRollup.maximum),
        ),
        else_=func.coalesce(MetricRollup.maximum, MetricRollup.average),
    )


def _grouped(rows: Iterable[Any], read: frozenset[MetricKey]) -> Iterator[tuple[tuple[int, MetricKey], _Series]]:
    """Consecutive rows of one (resource, metric) as one series; hours stay raw text until a summary needs one."""
    current: tuple[int, str, str] | None = None
    series = _Series()
    for resource_id, namespace, metric, hour, value in rows:
        if current is None or resource_id != current[0] or metric != current[2] or namespace != current[1]:
            if current is not None and series.values:
                yield (current[0], (current[1], current[2])), series
            current, series = (resource_id, namespace, metric), _Series()
            if (namespace, metric) not in read:
                current = (resource_id, namespace, "")  # skipped: a namespace the rules do not read
                continue
        if value is not None and current[2]:
            series.hours.append(hour)
            series.values.append(value)
    if current is not None and series.values:
        yield (current[0], (current[1], current[2])), series


@dataclass(frozen=True)
class _NeuronSeries:
    util: SeriesStats | None
    util_avg: SeriesStats | None
    memory: SeriesStats | None
    executions: SeriesStats | None
    cores_in_use: int | None


def _neuron_series(
    session: Session, account_id: str, start: datetime, end: datetime, parse: _HourParser
) -> dict[str, _NeuronSeries]:
    """neuron-monitor rollups per instance id, the runtimes of each hour combined (busiest core, memory and
    executions added up)."""
    stmt = (
        select(
            NeuronRollup.instance_id,
            cast(NeuronRollup.hour, String),
            func.max(NeuronRollup.neuroncore_utilization_max),
            func.max(NeuronRollup.neuroncore_utilization_avg),
            func.sum(NeuronRollup.device_memory_used_max),
            func.sum(NeuronRollup.executions_completed),
            func.max(NeuronRollup.cores_in_use),
        )
        .where(NeuronRollup.account_id == account_id, NeuronRollup.hour >= start, NeuronRollup.hour < end)
        .group_by(NeuronRollup.instance_id, NeuronRollup.hour)
        .order_by(NeuronRollup.instance_id, NeuronRollup.hour)
    )
    found: dict[str, _NeuronSeries] = {}
    current: str | None = None
    columns: list[list[Any]] = []
    result = session.connection().execute(stmt.execution_options(yield_per=STREAM_ROWS))
    for instance_id, *values in result:  # one instance's hours at a time: summarised, then dropped
        if instance_id != current:
            if current is not None:
                found[current] = _neuron_summary(columns, parse)
            current, columns = instance_id, [[], [], [], [], [], []]
        for index, value in enumerate(values):
            columns[index].append(value)
    if current is not None:
        found[current] = _neuron_summary(columns, parse)
    return found


def _neuron_summary(rows: Sequence[list[Any]], parse: _HourParser) -> _NeuronSeries:
    hours = rows[0]

    def stats(index: int) -> SeriesStats | None:
        pairs = [(h, float(v)) for h, v in zip(hours, rows[index], strict=True) if v is not None]
        return summarise([h for h, _ in pairs], [v for _, v in pairs], parse)

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
    details: Mapping[str, Any] = row["details"] or {}
    instance_id = str(details["instance_id"]) if row["kind"] == "ec2_instance" and details.get("instance_id") else None
    reports = neuron.get(instance_id) if instance_id else None
    signals = _signals(metrics, reports)
    active_since = _active_since(row, start, end, signals, metrics)
    variants = details.get("variants") or []
    return ResourceProfile(
        resource_id=int(row["id"]),
        arn=str(row["arn"]),
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
        hints=Hints.from_json(row["hints"]),
        signals=signals,
        coverage=dict(coverage),
        instance_id=instance_id,
        eks_cluster=details.get("eks_cluster") or None,
        serverless=bool(variants) and all(not v.get("instance_type") for v in variants),
        batch_jobs_in_window=_batch_jobs(details) if row["kind"] == "batch_compute_environment" else None,
        tags=dict(row["tags"] or {}),
    )


def _batch_jobs(details: Mapping[str, Any]) -> int:
    return sum(int(queue.get("jobs_in_window") or 0) for queue in details.get("job_queues") or [])


def _signals(metrics: Mapping[MetricKey, SeriesStats], reports: _NeuronSeries | None) -> Signals:
    neuron_util, neuron_source = _first(
        (reports.util if reports else None, "neuron-monitor"),
        (metrics.get(NEURON_CORE), "Chipwise/Neuron"),
        (metrics.get(EKS_NEURONCORE), "ContainerInsights"),
    )
    gpu_util, gpu_source = _first(
        (metrics.get(CWAGENT_GPU), "CWAgent"),
        (metrics.get(SM_GPU), "/aws/sagemaker/Endpoints"),
        (metrics.get(TRAINING_GPU), "/aws/sagemaker/TrainingJobs"),
    )
    return Signals(
        neuron_util=neuron_util,
        neuron_util_avg=(reports.util_avg if reports else None) or metrics.get(NEURON_CORE_AVG),
        neuron_memory_bytes=(reports.memory if reports else None) or metrics.get(NEURON_MEMORY),
        neuron_executions=(reports.executions if reports else None) or metrics.get(NEURON_EXECUTIONS),
        neuron_cores_in_use=reports.cores_in_use if reports else None,
        neuron_source=neuron_source,
        gpu_util=gpu_util,
        gpu_memory_util=metrics.get(SM_GPU_MEMORY),
        gpu_source=gpu_source,
        cpu_util=metrics.get(EC2_CPU) or metrics.get(SM_CPU) or metrics.get(TRAINING_CPU),
        invocations=metrics.get(INVOCATIONS),
        latency_us=metrics.get(MODEL_LATENCY),
    )


def _first(*candidates: tuple[SeriesStats | None, str]) -> tuple[SeriesStats | None, str | None]:
    for stats, source in candidates:
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
    details: Mapping[str, Any] = row["details"] or {}
    clipped = 0.0
    begun, finished = _iso(details.get("training_start")), _iso(details.get("training_end"))
    if begun is not None:
        clipped = max(0.0, (min(end, finished or end) - max(start, begun)) / HOUR)
    elif details.get("billable_seconds"):
        clipped = float(details["billable_seconds"]) / 3600
    observed = max((s.hours for k, s in metrics.items() if k in (TRAINING_CPU, TRAINING_GPU)), default=0)
    return max(clipped, float(observed))


def _iso(value: Any) -> datetime | None:
    if not value:
        return None
    parsed = value if isinstance(value, datetime) else datetime.fromisoformat(str(value))
    return parsed.replace(tzinfo=UTC) if parsed.tzinfo is None else parsed.astimezone(UTC)
