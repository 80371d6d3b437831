"""Store retention: every table that grows with each day's scan, pruned past its horizon by set-based DELETEs.

What grows, and what is kept:

- ``scans`` (one a day per account and region, with its document): older than ``history`` days go, except the
  latest finished scan of each account and region (the report and ``chipwise resources`` read it); its verdict rows
  (``scan_verdicts``) are the only ones kept (:meth:`ScanRepository.save_document` drops the previous scan's), so
  that table holds one row per resource whatever the history, and goes with its scan (``ON DELETE CASCADE``);
- ``metric_rollups`` and ``neuron_rollups`` (hourly) and ``cost_records`` (daily): older than ``history`` days
  (``history`` is at least the longest look-back, 63 days, so no rule loses its window);
- ``findings`` resolved or withdrawn more than ``history`` days ago, with their ``recommendations`` history and
  realised savings, unless a remediation or a benchmark run refers to them (that audit stays);
- ``notification_outbox`` messages sent or failed, and ``notified_scans``, older than ``messages`` days;
- ``remediations`` (the audit trail) older than ``audit`` days;
- ``resources`` gone (``ended_at``) more than ``history`` days ago with no finding left (their coverage, series
  and rollups go with them).

``metric_series`` keeps its own bound (older hours are dropped as a series grows); ``metric_coverage`` has one row
per resource and metric; intake tables have their own retention (:mod:`chipwise.intake.service`).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

from sqlalchemy import and_, delete, exists, select

from chipwise.store.repositories.records import Repository
from chipwise.store.tables import (
    BenchmarkRun,
    CostRecord,
    Finding,
    MetricCoverage,
    MetricRollup,
    MetricSeries,
    NeuronRollup,
    NotifiedScan,
    OutboxMessage,
    RealisedSaving,
    Recommendation,
    Remediation,
    Resource,
    Scan,
)

MIN_HISTORY_DAYS = 63  # the longest look-back a scan may read


@dataclass(frozen=True)
class Horizons:
    """Days each kind of row is kept."""

    history: int = 90
    messages: int = 30
    audit: int = 365


class RetentionRepository(Repository):
    def prune(self, now: datetime, horizons: Horizons) -> dict[str, int]:
        """Delete what is past its horizon; the rows deleted per table."""
        history = now - timedelta(days=max(horizons.history, MIN_HISTORY_DAYS))
        messages = now - timedelta(days=horizons.messages)
        audit = now - timedelta(days=horizons.audit)
        deleted: dict[str, int] = {}

        def run(table: str, statement: object) -> None:
            result = self.session.execute(statement)  # type: ignore[call-overload]
            deleted[table] = deleted.get(table, 0) + int(result.rowcount or 0)

        newer = Scan.__table__.alias("newer")  # the latest finished scan of each account and region stays
        run(
            "scans",
            delete(Scan).where(
                Scan.started_at < history,
                exists().where(
                    newer.c.account_id == Scan.account_id,
                    newer.c.region == Scan.region,
                    newer.c.status.in_(("succeeded", "partial")),
                    newer.c.started_at > Scan.started_at,
                ),
            ),
        )
        run("metric_rollups", delete(MetricRollup).where(MetricRollup.hour < history))
        run("neuron_rollups", delete(NeuronRollup).where(NeuronRollup.hour < history))
        run("cost_records", delete(CostRecord).where(CostRecord.day < history.date()))
        old = select(Finding.id).where(
            Finding.status.in_(("resolved", "withdrawn")),
            Finding.resolved_at < history,
            ~exists().where(Remediation.finding_id == Finding.id),
            ~exists().where(BenchmarkRun.finding_id == Finding.id),
        )
        run("recommendations", delete(Recommendation).where(Recommendation.finding_id.in_(old)))
        run("realised_savings", delete(RealisedSaving).where(RealisedSaving.finding_id.in_(old)))
        run("findings", delete(Finding).where(Finding.id.in_(old)))
        run(
            "notification_outbox",
            delete(OutboxMessage).where(
                OutboxMessage.created_at < messages, OutboxMessage.status.in_(("sent", "failed"))
            ),
        )
        run("notified_scans", delete(NotifiedScan).where(NotifiedScan.notified_at < messages))
        run("remediations", delete(Remediation).where(Remediation.created_at < audit))
        gone = select(Resource.id).where(
            Resource.ended_at < history,
            ~exists().where(and_(Finding.account_id == Resource.account_id, Finding.resource_arn == Resource.arn)),
        )
        for table, column in (
            ("metric_rollups", MetricRollup.resource_id),
            ("metric_series", MetricSeries.resource_id),
            ("metric_coverage", MetricCoverage.resource_id),
        ):
            model = column.class_
            run(table, delete(model).where(column.in_(gone)))
        run("resources", delete(Resource).where(Resource.id.in_(gone)))
        return {table: count for table, count in deleted.items() if count}
