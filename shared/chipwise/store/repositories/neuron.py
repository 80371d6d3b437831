"""Neuron-monitor rollups: one row per (account, instance, runtime tag, hour), merged from the partial sums of every
S3 report object that covered the hour (``ingest_neuron`` writes them; the scan and the report read them)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import and_, func, select

from chipwise.models.neuron import INSTANCE_RUNTIME_TAG, NeuronHourPart, merge_parts
from chipwise.store.repositories.records import Repository, record_of
from chipwise.store.tables import NeuronRollup
from chipwise.store.upsert import upsert


@dataclass(frozen=True, slots=True)
class NeuronRollupRecord:
    """One hour of neuron-monitor reports of an instance and runtime tag."""

    account_id: str
    instance_id: str
    instance_type: str | None
    runtime_tag: str
    hour: datetime
    reports: int
    neuroncore_utilization_avg: float | None
    neuroncore_utilization_max: float | None
    cores_in_use: int | None
    device_memory_used_max: int | None
    host_memory_used_max: int | None
    executions_completed: int
    executions_failed: int
    latency_p50_s: float | None
    latency_p99_s: float | None
    errors: int
    reports_missing: int
    parts: dict[str, Any] | None


class NeuronRepository(Repository):
    """Hourly neuron-monitor rollups, merged from the partial sums of every object that reported on an hour."""

    def merge(self, account_id: str, source: str, parts: Sequence[NeuronHourPart]) -> int:
        """Put ``source``'s parts into their hours (replacing what ``source`` said before) and recompute them."""
        if not parts:
            return 0
        existing = self._existing(account_id, parts)
        rows = []
        for part in parts:
            key = (part.instance_id, part.runtime_tag, part.hour)
            stored = dict(existing.get(key) or {})
            stored[source] = part.as_json()
            rows.append(
                {
                    "account_id": account_id,
                    "instance_id": part.instance_id,
                    "runtime_tag": part.runtime_tag,
                    "hour": part.hour,
                    **merge_parts(stored.values()),
                    "parts": stored,
                }
            )
        return upsert(self.session, NeuronRollup, rows, conflict=["account_id", "instance_id", "runtime_tag", "hour"])

    def _existing(
        self, account_id: str, parts: Sequence[NeuronHourPart]
    ) -> dict[tuple[str, str, datetime], dict[str, Any]]:
        found: dict[tuple[str, str, datetime], dict[str, Any]] = {}
        instances = sorted({p.instance_id for p in parts})
        tags = sorted({p.runtime_tag for p in parts})
        first, last = min(p.hour for p in parts), max(p.hour for p in parts)
        stmt = select(NeuronRollup.instance_id, NeuronRollup.runtime_tag, NeuronRollup.hour, NeuronRollup.parts).where(
            NeuronRollup.account_id == account_id,
            NeuronRollup.instance_id.in_(instances),
            NeuronRollup.runtime_tag.in_(tags),
            NeuronRollup.hour >= first,
            NeuronRollup.hour <= last,
        )
        for instance_id, tag, hour, stored in self.session.execute(stmt):
            found[(instance_id, tag, hour.astimezone(UTC))] = stored or {}
        return found

    def neuroncore_utilisation(
        self, instances: Iterable[tuple[str, str]], start: datetime, end: datetime
    ) -> dict[tuple[str, str], list[tuple[datetime, float]]]:
        """(hour, NeuronCore utilisation average) of each (account, instance id)'s neuron-monitor rollups in
        ``[start, end)``, by (account, instance id): one statement for every instance, each instance's rows in
        (runtime tag, hour) order."""
        wanted = set(instances)
        if not wanted:
            return {}
        stmt = (
            select(
                NeuronRollup.account_id,
                NeuronRollup.instance_id,
                NeuronRollup.hour,
                NeuronRollup.neuroncore_utilization_avg,
            )
            .where(
                NeuronRollup.account_id.in_(sorted({account for account, _ in wanted})),
                NeuronRollup.instance_id.in_(sorted({instance for _, instance in wanted})),
                NeuronRollup.hour >= start,
                NeuronRollup.hour < end,
                NeuronRollup.neuroncore_utilization_avg.is_not(None),
            )
            .order_by(NeuronRollup.account_id, NeuronRollup.instance_id, NeuronRollup.runtime_tag, NeuronRollup.hour)
        )
        found: dict[tuple[str, str], list[tuple[datetime, float]]] = {}
        for account_id, instance_id, hour, value in self.session.execute(stmt):
            if value is not None and (account_id, instance_id) in wanted:
                found.setdefault((account_id, instance_id), []).append((hour, value))
        return found

    def rollups(self, instance_id: str, start: datetime, end: datetime) -> list[NeuronRollupRecord]:
        stmt = (
            select(NeuronRollup)
            .where(
                NeuronRollup.instance_id == instance_id,
                NeuronRollup.runtime_tag == INSTANCE_RUNTIME_TAG,
                NeuronRollup.hour >= start,
                NeuronRollup.hour < end,
            )
            .order_by(NeuronRollup.hour)
        )
        return [record_of(NeuronRollupRecord, row) for row in self.session.scalars(stmt)]

    def hours_by_instance(
        self, account_id: str, instance_ids: Iterable[str], start: datetime, end: datetime
    ) -> dict[str, int]:
        """Hours with telemetry, per instance, over ``[start, end)``: at least one report that measured the cores
        or found them idle (hours whose every report had the driver or device failing are missing, not idle)."""
        ids = sorted(set(instance_ids))
        if not ids:
            return {}
        hours = func.count(func.distinct(NeuronRollup.hour))
        stmt = (
            select(NeuronRollup.instance_id, hours)
            .where(
                and_(
                    NeuronRollup.account_id == account_id,
                    NeuronRollup.instance_id.in_(ids),
                    NeuronRollup.runtime_tag == INSTANCE_RUNTIME_TAG,
                    NeuronRollup.neuroncore_utilization_avg.is_not(None),
                    NeuronRollup.hour >= start,
                    NeuronRollup.hour < end,
                )
            )
            .group_by(NeuronRollup.instance_id)
        )
        return {instance_id: int(count) for instance_id, count in self.session.execute(stmt)}
