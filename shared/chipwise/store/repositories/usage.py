"""Costs, CloudWatch rollups and coverage (neuron-monitor rollups: :mod:`chipwise.store.repositories.neuron`).

Store shapes (read by the rules):

- ``cost_records``: one row per (account, day, service, usage type), from Cost Explorer DAILY groups.
  ``unblended_cost``, ``amortized_cost`` (Savings Plans and RIs spread at their effective rate) and
  ``usage_quantity`` (hours for instance usage) are Decimal. ``usage_kind`` is the billing kind the catalog's
  ``usage_types.json`` names (BoxUsage, SpotUsage, DedicatedUsage, Reservation, UnusedBox, Host, Train, AsyncInf,
  Processing, Transform, Notebk, Studio, HostUsage, ServerlessInf, ..., ``storage``, or ``unknown`` for one it does
  not know: kept, never dropped). ``instance_type`` (SageMaker types keep ``ml.``) is set for attributed kinds:
  instance hours and unused capacity reservations. ``region`` comes from the usage-type prefix (no prefix:
  us-east-1). ``estimated`` mirrors Cost Explorer. ``effective_hourly_rates`` gives the account's own $/hour
  per instance type from instance-hour kinds only; ``cost_breakdown`` the scan document's kinds, unused
  reservations and unknown usage types.
- ``metric_rollups``: one row per (resource, namespace, metric, hour), ``namespace``/``metric`` exactly as
  CloudWatch names them, e.g. ("AWS/SageMaker", "Invocations") with the hour's total in ``sum``;
  ("AWS/SageMaker", "InvocationsPerInstance") ``sum``; ("AWS/SageMaker", "ModelLatency") ``average``/``maximum`` in
  microseconds; ("/aws/sagemaker/Endpoints", "CPUUtilization" | "MemoryUtilization" | "GPUUtilization" |
  "GPUMemoryUtilization"); ("AWS/EC2", "CPUUtilization"); ("CWAgent", "nvidia_smi_utilization_gpu" |
  "nvidia_smi_utilization_memory") as the maximum across the instance's GPUs; ("Chipwise/Neuron",
  "NeuronCoreUtilization") (``average``/``maximum`` of the per-minute max across cores), "NeuronCoreUtilizationAvg"
  (``average``), "NeuronDeviceMemoryUsed" (``maximum``, bytes), "ExecutionsCompleted" (``sum``);
  ("ContainerInsights", "node_neuroncore_utilization"); ("/aws/sagemaker/TrainingJobs", "CPUUtilization" |
  "GPUUtilization"). Gauges carry ``average``, ``maximum`` and ``sample_count``. An hour without a row had no
  datapoint.
- ``metric_coverage``: one row per (resource, namespace, metric) for the latest scan's window. ``exists`` False:
  the metric is not published for this resource (telemetry missing: never read it as idle). ``exists`` True with
  ``hours_with_data`` below the window's hours: hours without datapoints, which for AWS/SageMaker invocation
  metrics mean zero invocations (SageMaker omits those hours). The namespace ``neuron-monitor`` (metric
  ``neuroncore_utilization``) says whether ``neuron_rollups`` hold reports for an EC2 Neuron instance.
- ``neuron_rollups`` (:mod:`chipwise.store.repositories.neuron`): one row per (account, instance id, hour) from
  neuron-monitor reports in S3, runtime tag
  ``(instance)`` (rows of other tags come from earlier versions and are not read). Per report, a core's
  utilisation is its owning process's (the maximum across processes) and the instance's mean is over the cores in
  use; memory and executions are summed over processes. ``neuroncore_utilization_avg`` (mean over the reports
  that measured it, %; idle reports, with no application, count 0 %), ``neuroncore_utilization_max`` (busiest
  core), ``cores_in_use``, ``device_memory_used_max`` / ``host_memory_used_max`` (bytes, the largest per-report
  sum), ``executions_completed`` / ``executions_failed`` (sums), ``latency_p50_s`` / ``latency_p99_s``,
  ``errors`` (error strings once per report, plus execution errors: running-total counters as deltas),
  ``reports``, ``reports_missing`` (driver or device failed: utilisation unknown, never 0 %; an hour of only such
  reports has no utilisation). ``parts`` keeps each source object's partial sums the row is merged from.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from datetime import date, datetime
from decimal import Decimal
from typing import TYPE_CHECKING

from sqlalchemy import String, cast, func, or_, select, update

from chipwise.economics import parse_utc
from chipwise.store.repositories.metric_series import (
    KEEP_HOURS,
    MetricSeriesRepository,
    hour_rows,
    unpacked_resources,
    window_hours,
)
from chipwise.store.repositories.records import Repository, record_of
from chipwise.store.tables import CostRecord, MetricCoverage, MetricRollup, Resource
from chipwise.store.upsert import upsert

if TYPE_CHECKING:  # the records are what a scan writes: the read commands need not load them
    from chipwise.catalog.usage_types import Treatment
    from chipwise.models.records import CostLine, HourlyRollup, SeriesCoverage

RATE_PLACES = Decimal("0.000001")
NEURON_MONITOR_NAMESPACE = "neuron-monitor"
NEURON_MONITOR_METRIC = "neuroncore_utilization"


# --- costs -----------------------------------------------------------------------------------------------------


def instance_hour_kinds() -> list[str]:
    """The ``usage_kind`` values that are instance hours (the account's own rates come only from these)."""
    from chipwise.catalog import get_usage_kinds  # the catalog loads on first use: the neuron ingest needs none

    return get_usage_kinds().names("instance_hours")


UNKNOWN_REASON = (
    "Usage types whose kind or region prefix the catalog (usage_types.json, regions.json) does not know: kept in "
    "the totals, each listed with its dollars."
)


@dataclass
class KindTotal:
    """The cost of one usage kind over a window: what the scan document says of attributed, ignored and unknown
    usage."""

    kind: str
    treatment: Treatment
    unblended: Decimal = Decimal(0)
    usage_quantity: Decimal = Decimal(0)
    usage_types: set[str] = field(default_factory=set)
    reason: str | None = None


@dataclass
class UnusedReservationTotal:
    """Capacity reserved on one instance type and not used (UnusedBox/UnusedDed) over a window."""

    instance_type: str
    hours: Decimal = Decimal(0)
    unblended: Decimal = Decimal(0)
    usage_types: set[str] = field(default_factory=set)


@dataclass
class CostBreakdown:
    by_kind: dict[str, KindTotal]
    unused_reservations: dict[str, UnusedReservationTotal]
    unknown_usage_types: dict[str, Decimal]


# --- CloudWatch rollups and coverage ---------------------------------------------------------------------------


_ID_CHUNK = 1000  # resource ids in one IN list
CoverageKey = tuple[int, str, str]  # (resource id, namespace, metric)
StoredCoverage = tuple[datetime, bool, int]  # (end of the window last read, the metric existed, hours with data)


@dataclass(frozen=True, slots=True)
class MetricRollupRecord:
    """One hour of one CloudWatch metric of a resource."""

    namespace: str
    metric: str
    hour: datetime
    average: float | None
    maximum: float | None
    sum: float | None
    sample_count: float | None


@dataclass(frozen=True, slots=True)
class CoverageRecord:
    """Whether a resource publishes a metric, and for how many hours of the window it had data."""

    namespace: str
    metric: str
    exists: bool
    hours_with_data: int
    window_start: datetime
    window_end: datetime
    checked_at: datetime


class UsageRepository(Repository):
    """Costs, CloudWatch rollups and their coverage (the module's docstring says what each table holds)."""

    def save_cost_records(self, account_id: str, records: Sequence[CostLine], fetched_at: datetime) -> int:
        """Insert or update by (account, day, service, usage type): fetching a day again replaces its figures."""
        rows = [{"account_id": account_id, **asdict(r), "fetched_at": fetched_at} for r in records]
        return upsert(self.session, CostRecord, rows, conflict=["account_id", "day", "service", "usage_type"])

    def stored_cost_days(self, account_id: str, start: date, end: date) -> set[date]:
        stmt = select(CostRecord.day).where(
            CostRecord.account_id == account_id, CostRecord.day >= start, CostRecord.day < end
        )
        return set(self.session.scalars(stmt.distinct()))

    def _cost_records(self, account_id: str, start: date, end: date, region: str | None = None) -> list[CostRecord]:
        """The account's records for ``[start, end)``; with ``region``, that region's (and region-less) records."""
        stmt = select(CostRecord).where(
            CostRecord.account_id == account_id, CostRecord.day >= start, CostRecord.day < end
        )
        if region is not None:
            stmt = stmt.where(or_(CostRecord.region == region, CostRecord.region.is_(None)))
        return list(self.session.scalars(stmt.order_by(CostRecord.day, CostRecord.usage_type)))

    def cost_day_range(self, account_id: str, since: date | None = None) -> tuple[date | None, date | None]:
        """The first and last days with cost records of an account (from ``since`` when given)."""
        stmt = select(func.min(CostRecord.day), func.max(CostRecord.day)).where(CostRecord.account_id == account_id)
        if since is not None:
            stmt = stmt.where(CostRecord.day >= since)
        first, last = self.session.execute(stmt).one()
        return first, last

    def cost_by_instance_type(self, account_id: str, start: date, end: date) -> list[tuple[str, Decimal]]:
        """An account's amortized cost per instance type over [start, end) (lines without an instance type left
        out)."""
        rows = self.session.execute(
            select(CostRecord.instance_type, func.sum(CostRecord.amortized_cost))
            .where(
                CostRecord.account_id == account_id,
                CostRecord.day >= start,
                CostRecord.day < end,
                CostRecord.instance_type.is_not(None),
            )
            .group_by(CostRecord.instance_type)
        )
        return [(str(instance_type), Decimal(str(total))) for instance_type, total in rows]

    def metric_averages(
        self, resource_ids: Iterable[int], metrics: Iterable[tuple[str, str]], start: datetime, end: datetime
    ) -> dict[tuple[int, str, str], list[tuple[datetime, float]]]:
        """(hour, average) of the resources' rollups of each (namespace, metric) in ``[start, end)``, by (resource,
        namespace, metric), hours without an average left out: one statement for every resource and metric."""
        ids = sorted(set(resource_ids))
        wanted = set(metrics)
        if not ids or not wanted:
            return {}
        rollup = MetricRollup
        stmt = select(rollup.resource_id, rollup.namespace, rollup.metric, rollup.hour, rollup.average).where(
            MetricRollup.resource_id.in_(ids),
            MetricRollup.namespace.in_(sorted({namespace for namespace, _ in wanted})),
            MetricRollup.metric.in_(sorted({metric for _, metric in wanted})),
            MetricRollup.hour >= start,
            MetricRollup.hour < end,
            MetricRollup.average.is_not(None),
        )
        found: dict[tuple[int, str, str], list[tuple[datetime, float]]] = {}
        for resource_id, namespace, metric, hour, average in self.session.execute(stmt):
            if average is not None and (namespace, metric) in wanted:  # the IN lists cross: keep the pairs asked
                found.setdefault((resource_id, namespace, metric), []).append((hour, average))
        return found

    def cost_totals(
        self, account_id: str, start: date, end: date, region: str | None = None
    ) -> tuple[Decimal, dict[str, Decimal]]:
        """Unblended total and, for instance hours, by instance type over ``[start, end)`` (summed as Decimal)."""
        total = Decimal(0)
        by_type: dict[str, Decimal] = {}
        hours = set(instance_hour_kinds())
        for record in self._cost_records(account_id, start, end, region):
            total += record.unblended_cost
            if record.instance_type and record.usage_kind in hours:
                by_type[record.instance_type] = by_type.get(record.instance_type, Decimal(0)) + record.unblended_cost
        return total, dict(sorted(by_type.items()))

    def cost_breakdown(self, account_id: str, start: date, end: date, region: str | None = None) -> CostBreakdown:
        """Every record of ``[start, end)`` by usage kind (with the catalog's treatment and reason), the unused
        capacity reservations by instance type, and the unknown usage types with their dollars."""
        from chipwise.catalog import classify_usage_type

        by_kind: dict[str, KindTotal] = {}
        unused: dict[str, UnusedReservationTotal] = {}
        unknown: dict[str, Decimal] = {}
        for record in self._cost_records(account_id, start, end, region):
            found = classify_usage_type(record.usage_type)
            kind = record.usage_kind or found.kind
            total = by_kind.get(kind)
            if total is None:
                reason = UNKNOWN_REASON if found.treatment == "unknown" else found.reason
                total = by_kind[kind] = KindTotal(kind, found.treatment, reason=reason)
            total.unblended += record.unblended_cost
            total.usage_quantity += record.usage_quantity
            total.usage_types.add(record.usage_type)
            if found.treatment == "unused_reservation" and found.instance_type:
                line = unused.setdefault(found.instance_type, UnusedReservationTotal(found.instance_type))
                line.hours += record.usage_quantity
                line.unblended += record.unblended_cost
                line.usage_types.add(record.usage_type)
            elif found.treatment == "unknown":
                unknown[record.usage_type] = unknown.get(record.usage_type, Decimal(0)) + record.unblended_cost
        return CostBreakdown(dict(sorted(by_kind.items())), dict(sorted(unused.items())), unknown)

    def effective_hourly_rates(self, account_id: str, start: date, end: date) -> dict[str, Decimal]:
        """What the account really pays per instance-hour, by instance type: amortized cost ÷ usage hours over
        ``[start, end)``. Amortized cost already carries Savings Plans, RIs and discounts; spot and on-demand hours of
        one type blend. Types without usage hours are absent."""
        cost: dict[str, Decimal] = {}
        hours: dict[str, Decimal] = {}
        stmt = select(CostRecord.instance_type, CostRecord.amortized_cost, CostRecord.usage_quantity).where(
            CostRecord.account_id == account_id,
            CostRecord.day >= start,
            CostRecord.day < end,
            CostRecord.instance_type.is_not(None),
            CostRecord.usage_kind.in_(instance_hour_kinds()),
        )
        for instance_type, amortized, quantity in self.session.execute(stmt):
            if instance_type is None:
                continue
            cost[instance_type] = cost.get(instance_type, Decimal(0)) + amortized
            hours[instance_type] = hours.get(instance_type, Decimal(0)) + quantity
        return {t: (cost[t] / hours[t]).quantize(RATE_PLACES) for t in sorted(cost) if hours[t] > 0}

    def save_rollups(
        self, rollups: Iterable[HourlyRollup], resource_ids: dict[str, int], keep_hours: int = KEEP_HOURS
    ) -> int:
        """Upsert the hourly rows and merge them into the packed series, each keeping ``keep_hours`` hours up to its
        newest (a scan passes what its windows read: :func:`chipwise.store.repositories.metric_series.keep_hours`)."""
        rows = [
            {
                "resource_id": resource_ids[r.resource_key],
                "namespace": r.namespace,
                "metric": r.metric,
                "hour": r.hour,
                "average": r.average,
                "maximum": r.maximum,
                "sum": r.sum,
                "sample_count": r.sample_count,
            }
            for r in rollups
        ]
        # before the upsert: a resource packed for the first time is packed from its rows
        MetricSeriesRepository(self.session).save_packed(rows, keep_hours)
        return upsert(self.session, MetricRollup, rows, conflict=["resource_id", "namespace", "metric", "hour"])

    def save_coverage(
        self,
        coverage: Iterable[SeriesCoverage],
        resource_ids: dict[str, int],
        window: tuple[datetime, datetime],
        checked_at: datetime,
        stored: Mapping[CoverageKey, StoredCoverage] | None = None,
    ) -> int:
        """Each metric's coverage over ``window``. A row whose existence and hours are what ``stored`` (read at the
        scan's start) holds only has its window and check time moved: one UPDATE per metric for all such rows, not a
        row each (a daily scan's usual case). Returns the rows written."""
        rows = []
        unchanged: dict[tuple[str, str], list[int]] = {}
        for c in coverage:
            resource_id = resource_ids[c.resource_key]
            before = stored.get((resource_id, c.namespace, c.metric)) if stored else None
            if before is not None and before[1:] == (c.exists, c.hours_with_data):
                unchanged.setdefault((c.namespace, c.metric), []).append(resource_id)
                continue
            rows.append(
                {
                    "resource_id": resource_id,
                    "namespace": c.namespace,
                    "metric": c.metric,
                    "exists": c.exists,
                    "hours_with_data": c.hours_with_data,
                    "window_start": window[0],
                    "window_end": window[1],
                    "checked_at": checked_at,
                }
            )
        moved = {"window_start": window[0], "window_end": window[1], "checked_at": checked_at}
        for (namespace, metric), ids in unchanged.items():
            for offset in range(0, len(ids), _ID_CHUNK):
                self.session.execute(
                    update(MetricCoverage)
                    .where(
                        MetricCoverage.namespace == namespace,
                        MetricCoverage.metric == metric,
                        MetricCoverage.resource_id.in_(ids[offset : offset + _ID_CHUNK]),
                    )
                    .values(moved)
                    .execution_options(synchronize_session=False)
                )
        written = upsert(self.session, MetricCoverage, rows, conflict=["resource_id", "namespace", "metric"])
        return written + sum(len(ids) for ids in unchanged.values())

    def coverage_windows(self, account_id: str, region: str) -> dict[CoverageKey, StoredCoverage]:
        """The end of the window last read, whether the metric existed and its hours with data, per (resource,
        namespace, metric) of the account and region: where an incremental scan picks up."""
        # the window's end as text, parsed once per distinct value (a scan's rows share a few): the driver's datetime
        # conversion of every row costs more than the rest of the read
        stmt = (
            select(MetricCoverage.resource_id, MetricCoverage.namespace, MetricCoverage.metric)
            .add_columns(cast(MetricCoverage.window_end, String), MetricCoverage.exists, MetricCoverage.hours_with_data)
            .join(Resource, Resource.id == MetricCoverage.resource_id)
            .where(Resource.account_id == account_id, Resource.region == region)
        )
        ends: dict[str, datetime] = {}
        found: dict[CoverageKey, StoredCoverage] = {}
        for rid, ns, metric, end, exists, hours in self.session.execute(stmt):
            if end not in ends:
                ends[end] = parse_utc(end)
            found[(rid, ns, metric)] = (ends[end], bool(exists), int(hours or 0))
        return found

    def stored_hours(self, account_id: str, region: str, start: datetime, end: datetime) -> dict[CoverageKey, int]:
        """Hours with a stored rollup in ``[start, end)`` per (resource, namespace, metric) of the account and region:
        counted in the packed series, and in ``metric_rollups`` for the resources not packed over the window."""
        resource_ids = (
            select(Resource.id).where(Resource.account_id == account_id, Resource.region == region).scalar_subquery()
        )
        found = hour_rows(
            MetricSeriesRepository(self.session).packed_series(resource_ids, start), *window_hours(start, end)
        )
        stmt = (
            select(MetricRollup.resource_id, MetricRollup.namespace, MetricRollup.metric, func.count())
            .where(
                MetricRollup.resource_id.in_(unpacked_resources(resource_ids, start)),
                MetricRollup.hour >= start,
                MetricRollup.hour < end,
            )
            .group_by(MetricRollup.resource_id, MetricRollup.namespace, MetricRollup.metric)
        )
        found.update({(rid, ns, metric): int(n) for rid, ns, metric, n in self.session.execute(stmt)})
        return found

    def rollups_for(
        self, resource_id: int, namespace: str, metric: str, start: datetime, end: datetime
    ) -> list[MetricRollupRecord]:
        stmt = (
            select(MetricRollup)
            .where(
                MetricRollup.resource_id == resource_id,
                MetricRollup.namespace == namespace,
                MetricRollup.metric == metric,
                MetricRollup.hour >= start,
                MetricRollup.hour < end,
            )
            .order_by(MetricRollup.hour)
        )
        return [record_of(MetricRollupRecord, row) for row in self.session.scalars(stmt)]

    def coverage_for(self, resource_id: int) -> dict[tuple[str, str], CoverageRecord]:
        stmt = select(MetricCoverage).where(MetricCoverage.resource_id == resource_id)
        return {(c.namespace, c.metric): record_of(CoverageRecord, c) for c in self.session.scalars(stmt)}
