"""The store side of profiling: one account and region's resources, metric coverage, cost totals and telemetry
rows, read a batch of resources at a time with a fixed number of statements per batch (five: the resources, their
coverage, neuron-monitor rows, and CloudWatch series in two, the packed series and the rows of resources not packed,
see :mod:`chipwise.store.repositories.metric_series`), and the costs and the instances AWS Batch launched once.
The rows are handed to :func:`chipwise.analyse.profile_builder.build_profiles`, which turns them into profiles
without touching the database."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Iterator, Sequence
from datetime import date, datetime
from decimal import Decimal
from typing import Any

from sqlalchemy import ColumnElement, String, and_, case, cast, func, or_, select
from sqlalchemy.orm import Session

from chipwise.catalog import get_usage_kinds
from chipwise.models.neuron import INSTANCE_RUNTIME_TAG
from chipwise.store.repositories.inventory import ResourceRepository
from chipwise.store.repositories.metric_series import (
    AVERAGE,
    MAXIMUM,
    SUM,
    MetricSeriesRepository,
    unpacked_resources,
    window_hours,
)
from chipwise.store.tables import CostRecord, MetricCoverage, MetricRollup, NeuronRollup, Resource

GONE = "gone"
STREAM_ROWS = 20_000

_RESOURCE_COLUMNS = (
    Resource.id,
    Resource.arn,
    Resource.variant,
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


class ProfileInputRepository:
    """Reads what profiles are built from, for one account and region (see
    :class:`chipwise.analyse.profile_builder.ProfileSource`)."""

    def __init__(self, session: Session, *, account_id: str, region: str, bill: bool = False) -> None:
        self._session = session
        self._account_id = account_id
        self._region = region
        self._bill = bill

    def _live_accelerated(self) -> Any:
        return and_(
            Resource.account_id == self._account_id,
            Resource.region == self._region,
            Resource.platform != "cpu",
            Resource.state.is_distinct_from(GONE),
        )

    def _resource_ids(self, ids: tuple[int, int] | None) -> Any:
        """The live accelerated resources whose ids ``ids`` spans (first and last included; every one when None), as
        a subquery."""
        stmt = select(Resource.id).where(self._live_accelerated())
        if ids is not None:
            stmt = stmt.where(Resource.id.between(*ids))
        return stmt.scalar_subquery()

    def resources(self, after: int, limit: int) -> list[dict[str, Any]]:
        """Up to ``limit`` live accelerated resources with an id above ``after``, in id order (one batch)."""
        stmt = (
            select(*_RESOURCE_COLUMNS)
            .where(self._live_accelerated(), Resource.id > after)
            .order_by(Resource.id)
            .limit(limit)
        )
        return [dict(row._mapping) for row in self._session.execute(stmt)]

    def coverage(self, ids: tuple[int, int]) -> Iterator[tuple[int, str, str, bool, int]]:
        stmt = select(
            MetricCoverage.resource_id,
            MetricCoverage.namespace,
            MetricCoverage.metric,
            MetricCoverage.exists,
            MetricCoverage.hours_with_data,
        ).where(MetricCoverage.resource_id.in_(self._resource_ids(ids)))
        for resource_id, namespace, metric, exists, hours in self._session.execute(stmt):
            yield int(resource_id), str(namespace), str(metric), bool(exists), int(hours or 0)

    def usage_by_type(self, start: date, end: date) -> dict[str, tuple[Decimal, Decimal, Decimal]]:
        """Per lower-case instance type: (unblended, amortized, usage hours), summed as Decimal."""
        stmt = select(
            CostRecord.instance_type, CostRecord.unblended_cost, CostRecord.amortized_cost, CostRecord.usage_quantity
        ).where(
            CostRecord.account_id == self._account_id,
            CostRecord.day >= start,
            CostRecord.day < end,
            CostRecord.instance_type.is_not(None),
            CostRecord.usage_kind.in_(get_usage_kinds().names("instance_hours")),
            or_(CostRecord.region == self._region, CostRecord.region.is_(None)),
        )
        totals: dict[str, list[Decimal]] = defaultdict(lambda: [Decimal(0), Decimal(0), Decimal(0)])
        for instance_type, unblended, amortized, quantity in self._session.execute(stmt):
            item = totals[str(instance_type).lower()]
            item[0] += unblended
            item[1] += amortized
            item[2] += quantity
        return {k: (v[0], v[1], v[2]) for k, v in totals.items()}

    def bill_usage(self, start: date, end: date) -> dict[str, tuple[Decimal, Decimal, Decimal, bool]]:
        """Per lower-case resource id the stored bill names: (public on-demand cost, effective cost, hours, covered
        by a commitment); EKS pods (shares of their nodes) left out. Empty unless the scan prices from the bill."""
        if not self._bill:
            return {}
        from chipwise.store.repositories.bill import BillRepository

        found = BillRepository(self._session).resource_bills(self._account_id, start, end, self._region)
        return {
            key.lower(): (
                b.public_on_demand_cost,
                b.effective_cost,
                b.usage_hours,
                bool(b.pricings & {"savings_plan", "reservation"}),
            )
            for key, b in found.items()
            if b.parent_resource_id is None
        }

    def batch_launched(self) -> dict[str, str]:
        """The EC2 instances the account's AWS Batch compute environments launched: instance id (lower case) -> the
        environment's name (:meth:`ResourceRepository.batch_launched`)."""
        return ResourceRepository(self._session).batch_launched(self._account_id, self._region)

    def metric_series(
        self,
        start: datetime,
        end: datetime,
        names: Sequence[str],
        sum_metrics: Sequence[str],
        average_metrics: Sequence[str],
        ids: tuple[int, int] | None = None,
    ) -> Iterator[tuple[int, str, str, Sequence[Any], list[float]]]:
        """Each series of the resources ``ids`` spans (all when None) with a value in ``[start, end)``: (resource
        id, namespace, metric, hours oldest first, values). The hour's value is the sum for counters, the average for
        latency, else the maximum (falling back to the other of the two where one is missing). Packed series
        (``metric_series``) give their hours as epoch hours in one row each; the resources not packed over the window
        are read from ``metric_rollups``, hours as text."""
        first_hour, end_hour = window_hours(start, end)
        sums, averages = frozenset(sum_metrics), frozenset(average_metrics)
        resource_ids = self._resource_ids(ids)
        packed_in_window = MetricSeriesRepository(self._session).packed_series(resource_ids, start, names)
        for (resource_id, namespace, metric), packed in packed_in_window:
            if metric in sums:
                hours, values = packed.values(first_hour, end_hour, SUM, None)
            elif metric in averages:
                hours, values = packed.values(first_hour, end_hour, AVERAGE, MAXIMUM)
            else:
                hours, values = packed.values(first_hour, end_hour, MAXIMUM, AVERAGE)
            if values:
                yield resource_id, namespace, metric, hours, values
        value = case(
            (MetricRollup.metric.in_(list(sum_metrics)), MetricRollup.sum),
            (
                MetricRollup.metric.in_(list(average_metrics)),
                func.coalesce(MetricRollup.average, MetricRollup.maximum),
            ),
            else_=func.coalesce(MetricRollup.maximum, MetricRollup.average),
        )
        yield from _series(self._metric_rows(resource_ids, start, end, names, value))

    def _metric_rows(
        self, resource_ids: Any, start: datetime, end: datetime, names: Sequence[str], value: ColumnElement[Any]
    ) -> Iterator[Any]:
        """The rollup rows of the resources not packed over the window, each hour's ``value``, streamed in
        (resource, metric, hour) order through the Core connection (no ORM row processing)."""
        stmt = (
            select(
                MetricRollup.resource_id,
                MetricRollup.namespace,
                MetricRollup.metric,
                cast(MetricRollup.hour, String),
                value,
            )
            .where(
                MetricRollup.resource_id.in_(unpacked_resources(resource_ids, start, names)),
                MetricRollup.metric.in_(list(names)),
                MetricRollup.hour >= start,
                MetricRollup.hour < end,
            )
            .order_by(MetricRollup.resource_id, MetricRollup.namespace, MetricRollup.metric, MetricRollup.hour)
        )
        yield from self._session.connection().execute(stmt.execution_options(yield_per=STREAM_ROWS))

    def neuron_rows(self, start: datetime, end: datetime, instance_ids: Sequence[str]) -> Iterator[tuple[Any, ...]]:
        """neuron-monitor rollups of ``instance_ids`` (one batch's instances) per instance and hour (the instance
        rows: the runtimes of each report already combined, by the same rules as the agent's)."""
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
            .where(
                NeuronRollup.account_id == self._account_id,
                NeuronRollup.instance_id.in_(list(instance_ids)),
                NeuronRollup.runtime_tag == INSTANCE_RUNTIME_TAG,
                NeuronRollup.hour >= start,
                NeuronRollup.hour < end,
            )
            .group_by(NeuronRollup.instance_id, NeuronRollup.hour)
            .order_by(NeuronRollup.instance_id, NeuronRollup.hour)
        )
        for row in self._session.connection().execute(stmt.execution_options(yield_per=STREAM_ROWS)):
            yield tuple(row)


def _series(rows: Iterable[Any]) -> Iterator[tuple[int, str, str, Sequence[Any], list[float]]]:
    """Consecutive rows of one (resource, namespace, metric) as one series of the hours with a value."""
    current: tuple[int, str, str] | None = None
    hours: list[Any] = []
    values: list[float] = []
    for resource_id, namespace, metric, hour, value in rows:
        if current is None or resource_id != current[0] or metric != current[2] or namespace != current[1]:
            if current is not None and values:
                yield current[0], current[1], current[2], hours, values
            current, hours, values = (int(resource_id), str(namespace), str(metric)), [], []
        if value is not None:
            hours.append(hour)
            values.append(value)
    if current is not None and values:
        yield current[0], current[1], current[2], hours, values
