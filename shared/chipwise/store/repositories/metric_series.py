"""Packed hourly series: ``metric_series`` keeps each (resource, namespace, metric)'s rollups in one row, so a
profile reads one row per series instead of one per hour (a 14-day window of 1,000 resources: 1,000 rows, not
336,000).

The packed form is exactly the ``metric_rollups`` rows, hour for hour: ``save_packed`` runs inside
``save_rollups`` (the only writer of rollups) before the rows are upserted, with the same last-write-wins rule for
an hour written again (a late datapoint). A resource is read from its packed rows only when every series of it is
packed over the window asked for; otherwise (rows written by other means, or a window older than what is kept)
its hours are read from ``metric_rollups`` as before. The first time a resource is packed, every series it already
has rows for is packed from those rows, so a store upgraded with rollups in it stays exact.
"""

from __future__ import annotations

import math
import sys
from array import array
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from itertools import compress
from typing import Any

from sqlalchemy import and_, exists, not_, or_, select
from sqlalchemy.orm import aliased

from chipwise.store.repositories.records import Repository
from chipwise.store.tables import MetricRollup, MetricSeries, Resource
from chipwise.store.upsert import upsert

SeriesKey = tuple[int, str, str]  # (resource id, namespace, metric)
HourValues = tuple[bool, float | None, float | None, float | None]  # (a row, average, maximum, sum)

ROW, AVERAGE, MAXIMUM, SUM = 1, 2, 4, 8
# The longest window a scan may read is 63 days (settings.lookback_days); a packed series written without a bound
# keeps a day more, so any window ending at its newest hour is read from it. A scan bounds its series by the
# windows it reads (:func:`keep_hours`): a series read and written whole every day then stays the same size whatever
# the store's history, and a longer window than it keeps is read from ``metric_rollups`` (exact, slower).
KEEP_HOURS = 64 * 24
_SECONDS = 3600
_ID_CHUNK = 5_000
_LITTLE = sys.byteorder == "little"
# Per flag, a table turning each byte of ``present`` into 1 where the flag is set and 0 where not.
_HAS = {flag: bytes(1 if b & flag else 0 for b in range(256)) for flag in (ROW, AVERAGE, MAXIMUM, SUM)}


def keep_hours(lookback_days: int) -> int:
    """The hours a packed series keeps for windows of up to ``lookback_days`` ending at its newest hour (a day
    more, as :data:`KEEP_HOURS` does for the longest window)."""
    return (lookback_days + 1) * 24


def epoch_hour(hour: datetime) -> int:
    """The hour's number counted from the epoch (a naive datetime is UTC); a rollup hour is a whole hour."""
    aware = hour.replace(tzinfo=UTC) if hour.tzinfo is None else hour
    seconds = aware.timestamp()
    if seconds % _SECONDS:
        raise ValueError(f"a rollup hour must be a whole hour: {hour.isoformat()}")
    return int(seconds) // _SECONDS


def _ceil_hour(moment: datetime) -> int:
    """The first whole hour at or after ``moment``, from the epoch (the bound ``hour >= moment`` selects)."""
    aware = moment.replace(tzinfo=UTC) if moment.tzinfo is None else moment
    return math.ceil(aware.timestamp() / _SECONDS)


def _floats(raw: bytes) -> array[float]:
    values = array("d")
    values.frombytes(raw)
    if not _LITTLE:
        values.byteswap()
    return values


def _raw(values: array[float]) -> bytes:
    if _LITTLE:
        return values.tobytes()
    swapped = array("d", values)
    swapped.byteswap()
    return swapped.tobytes()


@dataclass
class PackedSeries:
    """One series' hours ``first_hour ..`` with flags and values; ``since_hour``: held completely from there."""

    first_hour: int
    since_hour: int | None
    present: bytearray
    average: array[float]
    maximum: array[float]
    sum: array[float]

    @classmethod
    def empty(cls, since_hour: int | None = None) -> PackedSeries:
        return cls(0, since_hour, bytearray(), array("d"), array("d"), array("d"))

    @classmethod
    def from_row(cls, first: int, since: int | None, present: bytes, *values: bytes) -> PackedSeries:
        average, maximum, total = values
        return cls(int(first), since, bytearray(present), _floats(average), _floats(maximum), _floats(total))

    def columns(self) -> dict[str, Any]:
        return {
            "first_hour": self.first_hour,
            "since_hour": self.since_hour,
            "present": bytes(self.present),
            "average": _raw(self.average),
            "maximum": _raw(self.maximum),
            "sum": _raw(self.sum),
        }

    def merge(self, hours: Sequence[tuple[int, float | None, float | None, float | None]]) -> None:
        """Hours' rows as written, in order (each replaces every column of its hour, as the upsert does)."""
        self.reach(min(h[0] for h in hours), max(h[0] for h in hours))
        since = self.since_hour
        first, present, average, maximum, total = self.first_hour, self.present, self.average, self.maximum, self.sum
        for hour, avg, mx, tot in hours:
            if since is not None and hour < since:
                continue  # older than what is kept: the rows alone hold it
            index = hour - first
            flags = ROW
            if avg is None:
                average[index] = 0.0
            else:
                average[index], flags = avg, flags | AVERAGE
            if mx is None:
                maximum[index] = 0.0
            else:
                maximum[index], flags = mx, flags | MAXIMUM
            if tot is None:
                total[index] = 0.0
            else:
                total[index], flags = tot, flags | SUM
            present[index] = flags

    def reach(self, first: int, last: int) -> None:
        """Hold hours ``first`` to ``last`` (hours not held before are absent); hours before ``since_hour`` stay
        out."""
        if self.since_hour is not None:
            first = max(first, self.since_hour)
        if first > last:
            return
        if not self.present:
            self.first_hour = first
            self._grow(0, last - first + 1)
            return
        before = max(0, self.first_hour - first)
        after = max(0, last - (self.first_hour + len(self.present) - 1))
        if before or after:
            self._grow(before, after)
            self.first_hour -= before

    def _grow(self, before: int, after: int) -> None:
        self.present = bytearray(before) + self.present + bytearray(after)
        for name in ("average", "maximum", "sum"):
            column: array[float] = getattr(self, name)
            setattr(self, name, array("d", bytes(8 * before)) + column + array("d", bytes(8 * after)))

    def prune(self, keep: int = KEEP_HOURS) -> None:
        """Drop hours older than ``keep`` hours before the newest one (``since_hour`` says from where it is
        complete)."""
        keep_from = self.first_hour + len(self.present) - keep
        if keep_from <= self.first_hour:
            return
        cut = keep_from - self.first_hour
        self.present = self.present[cut:]
        self.average, self.maximum, self.sum = self.average[cut:], self.maximum[cut:], self.sum[cut:]
        self.first_hour = keep_from
        self.since_hour = keep_from if self.since_hour is None else max(self.since_hour, keep_from)

    def complete_from(self, start: int) -> bool:
        """Whether every row of the series from hour ``start`` on is held here."""
        return self.since_hour is None or self.since_hour <= start

    def hours_with_rows(self, start: int, end: int) -> int:
        """Hours in ``[start, end)`` that have a row."""
        lo, hi = self._bounds(start, end)
        return (hi - lo) - self.present[lo:hi].translate(_HAS[ROW]).count(0) if hi > lo else 0

    def _bounds(self, start: int, end: int) -> tuple[int, int]:
        lo = max(0, start - self.first_hour)
        hi = min(len(self.present), end - self.first_hour)
        return lo, max(lo, hi)

    def values(self, start: int, end: int, first: int, second: int | None) -> tuple[Sequence[int], list[float]]:
        """(hours, values) over ``[start, end)`` of the hours whose ``first`` column is set, else whose ``second``
        is (the SQL ``coalesce(first, second)``); hours without either are left out."""
        lo, hi = self._bounds(start, end)
        if hi <= lo:
            return [], []
        present = self.present[lo:hi]
        base = self.first_hour + lo
        chosen = self._column(first)
        has_first = present.translate(_HAS[first])
        if has_first.count(0) == 0:  # every hour has the first column: the slice as it is
            return range(base, base + hi - lo), chosen[lo:hi].tolist()
        if second is None:
            hours = list(compress(range(base, base + hi - lo), has_first))
            return hours, list(compress(chosen[lo:hi], has_first))
        other = self._column(second)
        hours, values = [], []
        for index, flags in enumerate(present, lo):
            if flags & first:
                hours.append(base + index - lo)
                values.append(chosen[index])
            elif flags & second:
                hours.append(base + index - lo)
                values.append(other[index])
        return hours, values

    def _column(self, flag: int) -> array[float]:
        return {AVERAGE: self.average, MAXIMUM: self.maximum, SUM: self.sum}[flag]


# --- writing --------------------------------------------------------------------------------------------------


def _packed_columns() -> Any:
    return select(
        MetricSeries.resource_id,
        MetricSeries.namespace,
        MetricSeries.metric,
        MetricSeries.first_hour,
        MetricSeries.since_hour,
        MetricSeries.present,
        MetricSeries.average,
        MetricSeries.maximum,
        MetricSeries.sum,
    )


# --- reading --------------------------------------------------------------------------------------------------


def unpacked_resources(resource_ids: Any, start: datetime, metrics: Sequence[str] | None = None) -> Any:
    """The resources of ``resource_ids`` (a scalar subquery of resource ids) read from ``metric_rollups`` instead,
    as a scalar subquery: those without any packed series, or with one of ``metrics`` (all when None) not complete
    from ``start`` on; exactly those ``packed_series`` leaves out. (A resource packed at all has every series
    it has rows for packed: ``save_packed`` packs a resource's rows the first time it packs it.) A list of
    resource ids, not a condition per row: the database reads only these resources' rows."""
    resource = aliased(Resource)
    partial = and_(MetricSeries.resource_id == resource.id, MetricSeries.since_hour > _ceil_hour(start))
    if metrics is not None:
        partial = and_(partial, MetricSeries.metric.in_(list(metrics)))
    packed = exists().where(MetricSeries.resource_id == resource.id)
    chosen = select(resource.id).where(resource.id.in_(resource_ids), or_(not_(packed), exists().where(partial)))
    return chosen.scalar_subquery()


def window_hours(start: datetime, end: datetime) -> tuple[int, int]:
    """``[start, end)`` as epoch hours (the whole hours ``start <= hour < end`` selects)."""
    return _ceil_hour(start), _ceil_hour(end)


def hour_rows(series: Iterable[tuple[SeriesKey, PackedSeries]], start: int, end: int) -> dict[SeriesKey, int]:
    """Hours with a row in ``[start, end)`` per packed series (series without one left out)."""
    found = {}
    for key, packed in series:
        hours = packed.hours_with_rows(start, end)
        if hours:
            found[key] = hours
    return found


class MetricSeriesRepository(Repository):
    """Packed hourly series: a resource's rollups of a metric as one row of floats (read and written whole)."""

    def save_packed(self, rows: Sequence[Mapping[str, Any]], keep: int = KEEP_HOURS) -> None:
        """Merge rollup rows (``metric_rollups`` columns, before they are upserted) into their packed series, each
        keeping ``keep`` hours up to its newest (:func:`keep_hours`)."""
        written: dict[SeriesKey, list[tuple[int, Any, Any, Any]]] = {}
        hours: dict[datetime, int] = {}
        for row in rows:
            key = (int(row["resource_id"]), str(row["namespace"]), str(row["metric"]))
            hour = hours.get(row["hour"])
            if hour is None:
                hour = hours[row["hour"]] = epoch_hour(row["hour"])
            written.setdefault(key, []).append((hour, row.get("average"), row.get("maximum"), row.get("sum")))
        if not written:
            return
        resource_ids = sorted({key[0] for key in written})
        self._lock_resources(resource_ids)
        packed = self._read_packed(resource_ids)
        unpacked = set(resource_ids) - {key[0] for key in packed}
        if unpacked:  # a resource packed for the first time: every series it has rows for, from its rows
            packed.update(self._pack_rows(sorted(unpacked)))
        for key, items in written.items():
            packed.setdefault(key, PackedSeries.empty()).merge(items)
        out = []
        for key in sorted(set(written) | {key for key in packed if key[0] in unpacked}):
            series = packed[key]
            series.prune(keep)
            out.append({"resource_id": key[0], "namespace": key[1], "metric": key[2], **series.columns()})
        upsert(self.session, MetricSeries, out, conflict=["resource_id", "namespace", "metric"])

    def _lock_resources(self, resource_ids: Sequence[int]) -> None:
        """The resources' rows locked until the transaction ends, in id order (PostgreSQL; SQLite has one writer):
        two scans packing the same resources run one after the other, so a series packed for the first time by one is
        read, not packed again from the rows the other cannot see yet (which would lose its hours)."""
        for offset in range(0, len(resource_ids), _ID_CHUNK):
            chunk = resource_ids[offset : offset + _ID_CHUNK]
            self.session.execute(
                select(Resource.id).where(Resource.id.in_(chunk)).order_by(Resource.id).with_for_update()
            )

    def _read_packed(self, resource_ids: Sequence[int]) -> dict[SeriesKey, PackedSeries]:
        found: dict[SeriesKey, PackedSeries] = {}
        for offset in range(0, len(resource_ids), _ID_CHUNK):
            chunk = resource_ids[offset : offset + _ID_CHUNK]
            # Locked until the transaction ends (PostgreSQL; SQLite has one writer): a concurrent scan of the same
            # resources merges into what this one writes, not into what both read.
            stmt = _packed_columns().where(MetricSeries.resource_id.in_(chunk)).with_for_update()
            for rid, ns, metric, *columns in self.session.execute(stmt):
                found[(int(rid), str(ns), str(metric))] = PackedSeries.from_row(*columns)
        return found

    def _pack_rows(self, resource_ids: Sequence[int]) -> dict[SeriesKey, PackedSeries]:
        written: dict[SeriesKey, list[tuple[int, Any, Any, Any]]] = {}
        for offset in range(0, len(resource_ids), _ID_CHUNK):
            stmt = select(
                MetricRollup.resource_id,
                MetricRollup.namespace,
                MetricRollup.metric,
                MetricRollup.hour,
                MetricRollup.average,
                MetricRollup.maximum,
                MetricRollup.sum,
            ).where(MetricRollup.resource_id.in_(resource_ids[offset : offset + _ID_CHUNK]))
            for rid, ns, metric, hour, average, maximum, total in self.session.execute(stmt):
                written.setdefault((int(rid), str(ns), str(metric)), []).append(
                    (epoch_hour(hour), average, maximum, total)
                )
        found = {}
        for key, hours in written.items():
            found[key] = series = PackedSeries.empty()
            series.merge(hours)
        return found

    def packed_series(
        self, resource_ids: Any, start: datetime, metrics: Sequence[str] | None = None
    ) -> Iterator[tuple[SeriesKey, PackedSeries]]:
        """The packed series of the resources ``resource_ids`` selects (a scalar subquery) that are packed completely
        from ``start`` on (see :func:`unpacked_resources` for the others), optionally only ``metrics``."""
        start_hour = _ceil_hour(start)
        stmt = _packed_columns().where(MetricSeries.resource_id.in_(resource_ids))
        if metrics is not None:
            stmt = stmt.where(MetricSeries.metric.in_(list(metrics)))
        by_resource: dict[int, list[tuple[SeriesKey, PackedSeries]]] = {}
        incomplete: set[int] = set()
        for rid, ns, metric, *columns in self.session.execute(stmt):
            series = PackedSeries.from_row(*columns)
            if not series.complete_from(start_hour):
                incomplete.add(int(rid))
            by_resource.setdefault(int(rid), []).append(((int(rid), str(ns), str(metric)), series))
        for rid, items in by_resource.items():
            if rid not in incomplete:
                yield from items
