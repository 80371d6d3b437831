"""Building profiles from a :class:`ProfileSource` (one account and region's stored inventory, coverage, costs
and telemetry): every series summarised as it streams by, each resource's signals taken from the source first in
:data:`~chipwise.analyse.metric_keys.METRIC_SOURCE_ORDER`, its rate from :mod:`chipwise.analyse.hourly_rates`, and
why a kind whose activity AWS does not expose cannot be judged."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, date, datetime
from decimal import Decimal
from typing import Any, Protocol

from chipwise.analyse.hourly_rates import account_rates, bill_rates, cost_facts
from chipwise.analyse.metric_keys import (
    AVERAGE_METRICS,
    BEDROCK_INVOCATIONS,
    CWAGENT_GPU,
    EC2_CPU,
    EKS_GPU,
    EKS_GPU_LIMIT,
    EKS_GPU_MEMORY,
    EKS_GPU_POWER,
    EKS_GPU_REQUESTED,
    EKS_NEURONCORE,
    GENERATED_TOKENS,
    IC_CPU,
    IC_GPU,
    IC_GPU_MEMORY,
    INVOCATIONS,
    MODEL_LATENCY,
    NEURON_CORE,
    NEURON_CORE_AVG,
    NEURON_EXECUTIONS,
    NEURON_MEMORY,
    OTEL_GPU,
    OTEL_GPU_MEMORY,
    OTEL_GPU_POWER,
    OTEL_NAMESPACE,
    OTEL_NEURONCORE,
    READ_METRICS,
    SM_CPU,
    SM_GPU,
    SM_GPU_MEMORY,
    SUM_METRICS,
    TRAINING_CPU,
    TRAINING_GPU,
    WEEKLY_METRICS,
    MetricKey,
    source_rank,
)
from chipwise.analyse.profiles import CostFacts, Coverage, ResourceProfile, Signals
from chipwise.analyse.series import HOUR, SeriesStats, summarise
from chipwise.catalog import Catalog
from chipwise.economics import parse_utc, utc
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
    ResourceDetails,
    StudioAppDetails,
    TrainingJobDetails,
    parse_details,
    parse_hints,
)


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


IdRange = tuple[int, int]  # resource ids first..last, both included
PROFILE_BATCH = 1_000  # resources profiled and judged at a time: what one batch holds is all a build holds


class ProfileSource(Protocol):
    """What :func:`profile_batches` reads: one account and region's stored inventory, coverage, costs and telemetry
    (:class:`chipwise.store.repositories.profile_inputs.ProfileInputRepository` reads them from the store), a batch
    of resources at a time."""

    def resources(self, after: int, limit: int) -> list[dict[str, Any]]:
        """Up to ``limit`` live accelerated resources with an id above ``after``, as column mappings, in id
        order."""
        ...

    def coverage(self, ids: IdRange) -> Iterable[tuple[int, str, str, bool, int]]:
        """(resource id, namespace, metric, exists, hours with data) per covered metric of the resources ``ids``
        spans."""
        ...

    def usage_by_type(self, start: date, end: date) -> Mapping[str, tuple[Decimal, Decimal, Decimal]]:
        """Per lower-case instance type: (unblended, amortized, usage hours) over ``[start, end)``."""
        ...

    def bill_usage(self, start: date, end: date) -> Mapping[str, tuple[Decimal, Decimal, Decimal, bool]]:
        """Per lower-case resource id of the bill (EC2 instance id, SageMaker ARN): (public on-demand cost, effective
        cost, usage hours, whether a Savings Plan or reservation covered some of it); empty when the scan prices
        from Cost Explorer."""
        ...

    def batch_launched(self) -> Mapping[str, str]:
        """The EC2 instances the account's AWS Batch compute environments launched (as their inventory read them):
        instance id (lower case) -> the environment's name."""
        ...

    def metric_series(
        self,
        start: datetime,
        end: datetime,
        names: Sequence[str],
        sum_metrics: Sequence[str],
        average_metrics: Sequence[str],
        ids: IdRange,
    ) -> Iterable[tuple[int, str, str, Sequence[Any], Sequence[float]]]:
        """(resource id, namespace, metric, hours, values) per series with data in the window of the resources
        ``ids`` spans, the hours oldest first as text or as hours from the epoch, the values the hour's sum for
        ``sum_metrics``, average for ``average_metrics`` and maximum for the others."""
        ...

    def neuron_rows(self, start: datetime, end: datetime, instance_ids: Sequence[str]) -> Iterable[tuple[Any, ...]]:
        """(instance id, hour as text, util max, util avg, memory, executions, cores in use) of ``instance_ids``
        in (instance, hour) order, the runtimes of each hour combined."""
        ...


def build_profiles(source: ProfileSource, *, start: datetime, end: datetime, catalog: Catalog) -> list[ResourceProfile]:
    """Profiles of the source's accelerated resources over ``[start, end)`` (every batch of
    :func:`profile_batches`, kept: for a caller that wants them all at once)."""
    return [profile for batch in profile_batches(source, start=start, end=end, catalog=catalog) for profile in batch]


def profile_batches(
    source: ProfileSource, *, start: datetime, end: datetime, catalog: Catalog, size: int = PROFILE_BATCH
) -> Iterator[list[ResourceProfile]]:
    """Profiles of the source's accelerated resources over ``[start, end)``, ``size`` resources at a time in id
    order: the rows and series summaries of one batch are dropped before the next is read, so a caller that keeps
    only what it draws from each batch holds memory flat in the number of resources. The costs are read once;
    each batch takes the same statements (its resources, their coverage, series and neuron-monitor rows). An EC2
    instance a Batch compute environment launched names it (``batch_environment``)."""
    usage = source.usage_by_type(start.date(), end.date())
    bills = source.bill_usage(start.date(), end.date())
    launched = source.batch_launched()
    parse = _HourParser()
    after = 0
    while True:
        page = source.resources(after, size + 1)  # one more than a batch: says whether another batch follows
        resources = page[:size]
        if not resources:
            return
        yield _batch(source, resources, usage, bills, launched, start, end, parse, catalog)
        if len(page) <= size:
            return
        after = int(resources[-1]["id"])


def _batch(
    source: ProfileSource,
    resources: list[dict[str, Any]],
    usage: Mapping[str, tuple[Decimal, Decimal, Decimal]],
    bills: Mapping[str, tuple[Decimal, Decimal, Decimal, bool]],
    launched: Mapping[str, str],
    start: datetime,
    end: datetime,
    parse: _HourParser,
    catalog: Catalog,
) -> list[ResourceProfile]:
    ids = (int(resources[0]["id"]), int(resources[-1]["id"]))
    coverage: dict[int, dict[MetricKey, Coverage]] = defaultdict(dict)
    for resource_id, namespace, metric, exists, hours in source.coverage(ids):
        coverage[resource_id][(namespace, metric)] = Coverage(bool(exists), int(hours or 0))
    region = str(resources[0]["region"])
    rates = account_rates(usage, region, catalog)
    billed = bill_rates(bills, region, catalog, resources)
    details = [parse_details(str(r["kind"]), r["details"]) for r in resources]
    instance_ids = sorted({d.instance_id for d in details if isinstance(d, InstanceDetails)})
    neuron = _neuron_series(source.neuron_rows(start, end, instance_ids), parse) if instance_ids else {}
    metrics = _metric_series(source, start, end, parse, ids)
    return [
        _profile(
            r,
            d,
            start,
            end,
            billed.get(r["id"], rates),
            coverage.get(r["id"], {}),
            metrics.get(r["id"], {}),
            neuron,
            catalog,
            launched,
        )
        for r, d in zip(resources, details, strict=True)
    ]


def _metric_series(
    source: ProfileSource, start: datetime, end: datetime, parse: _HourParser, ids: IdRange
) -> dict[int, dict[MetricKey, SeriesStats]]:
    """Every wanted metric of the batch's resources, summarised as the rows stream by."""
    series = source.metric_series(
        start,
        end,
        sorted({metric for _, metric in READ_METRICS}),
        sorted({m for _, m in SUM_METRICS}),
        sorted({m for _, m in AVERAGE_METRICS}),
        ids,
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
    details: ResourceDetails,
    start: datetime,
    end: datetime,
    rates: Mapping[str, CostFacts],
    coverage: Mapping[MetricKey, Coverage],
    metrics: Mapping[MetricKey, SeriesStats],
    neuron: Mapping[str, _NeuronSeries],
    catalog: Catalog,
    launched: Mapping[str, str],
) -> ResourceProfile:
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
        cost=cost_facts(row["instance_type"], str(row["region"]), rates, catalog),
        hints=parse_hints(row["hints"]),
        signals=signals,
        coverage=dict(coverage),
        instance_id=instance_id,
        eks_cluster=details.eks_cluster if isinstance(details, InstanceDetails) else None,
        batch_environment=launched.get(instance_id.lower()) if instance_id and row["kind"] == "ec2_instance" else None,
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
