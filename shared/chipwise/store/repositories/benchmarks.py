"""Benchmark runs, the findings they measure and the telemetry that describes a finding's workload."""

from __future__ import annotations

from collections.abc import Collection, Iterable
from datetime import datetime
from decimal import Decimal

from sqlalchemy import select
from sqlalchemy.orm import Session

from chipwise.store.tables import BenchmarkRun, Finding, MetricRollup, NeuronRollup, Recommendation


def eligible_findings(
    session: Session,
    rule_ids: Collection[str],
    min_savings_usd: Decimal,
    *,
    account_id: str | None = None,
    finding_ids: Iterable[str] | None = None,
) -> list[Finding]:
    """Open findings of ``rule_ids`` saving at least ``min_savings_usd`` a month, largest first."""
    stmt = select(Finding).where(
        Finding.rule_id.in_(list(rule_ids)),
        Finding.status == "open",
        Finding.estimated_monthly_savings_usd >= min_savings_usd,
    )
    if account_id:
        stmt = stmt.where(Finding.account_id == account_id)
    if finding_ids is not None:
        stmt = stmt.where(Finding.id.in_(list(finding_ids)))
    return list(session.scalars(stmt.order_by(Finding.estimated_monthly_savings_usd.desc(), Finding.id)))


def runs_for(session: Session, finding_id: str, target_instance_type: str | None = None) -> list[BenchmarkRun]:
    """A finding's runs (for one target type when given), oldest attempt first."""
    stmt = select(BenchmarkRun).where(BenchmarkRun.finding_id == finding_id)
    if target_instance_type is not None:
        stmt = stmt.where(BenchmarkRun.target_instance_type == target_instance_type)
    return list(session.scalars(stmt.order_by(BenchmarkRun.attempt, BenchmarkRun.submitted_at)))


def runs_of_findings(session: Session, finding_ids: Collection[str]) -> list[BenchmarkRun]:
    """The runs of many findings in one query, oldest attempt first."""
    if not finding_ids:
        return []
    stmt = select(BenchmarkRun).where(BenchmarkRun.finding_id.in_(list(finding_ids))).order_by(BenchmarkRun.attempt)
    return list(session.scalars(stmt))


def stale_runs(session: Session, active_statuses: Collection[str], now: datetime) -> list[BenchmarkRun]:
    """Runs in one of ``active_statuses`` past their expiry time, oldest first."""
    stmt = select(BenchmarkRun).where(BenchmarkRun.status.in_(list(active_statuses)), BenchmarkRun.expires_at <= now)
    return list(session.scalars(stmt.order_by(BenchmarkRun.submitted_at)))


def get_run(session: Session, run_id: str) -> BenchmarkRun | None:
    return session.get(BenchmarkRun, run_id)


def run_of_job(session: Session, job_id: str) -> BenchmarkRun | None:
    """The run of an AWS Batch job id."""
    return session.scalars(select(BenchmarkRun).where(BenchmarkRun.job_id == job_id)).first()


def runs_with_id_prefix(session: Session, prefix: str, limit: int = 2) -> list[BenchmarkRun]:
    """Up to ``limit`` runs whose id starts with ``prefix`` (a short id typed on the command line)."""
    stmt = select(BenchmarkRun).where(BenchmarkRun.id.startswith(prefix, autoescape=True)).limit(limit)
    return list(session.scalars(stmt))


def list_runs(
    session: Session,
    *,
    account_id: str | None = None,
    status: str | None = None,
    finding_id: str | None = None,
    limit: int = 100,
) -> list[BenchmarkRun]:
    """Newest first."""
    stmt = select(BenchmarkRun)
    if account_id:
        stmt = stmt.join(Finding, Finding.id == BenchmarkRun.finding_id).where(Finding.account_id == account_id)
    if status:
        stmt = stmt.where(BenchmarkRun.status == status)
    if finding_id:
        stmt = stmt.where(BenchmarkRun.finding_id == finding_id)
    return list(session.scalars(stmt.order_by(BenchmarkRun.submitted_at.desc()).limit(limit)))


def recommendations_from(
    session: Session, source: str, *, finding_ids: Iterable[str] | None = None
) -> list[Recommendation]:
    """Recommendations of one ``source`` (of some findings when given), oldest first."""
    stmt = select(Recommendation).where(Recommendation.source == source)
    if finding_ids is not None:
        stmt = stmt.where(Recommendation.finding_id.in_(list(finding_ids)))
    return list(session.scalars(stmt.order_by(Recommendation.created_at, Recommendation.id)))


def recommendations_of_run(session: Session, run_id: str) -> list[Recommendation]:
    """The recommendations a benchmark run made."""
    return list(session.scalars(select(Recommendation).where(Recommendation.benchmark_run_id == run_id)))


def metric_rollups(session: Session, resource_id: int, namespace: str, metrics: Collection[str]) -> list[MetricRollup]:
    """A resource's hourly rollups of ``metrics`` in one CloudWatch namespace."""
    stmt = select(MetricRollup).where(
        MetricRollup.resource_id == resource_id,
        MetricRollup.namespace == namespace,
        MetricRollup.metric.in_(list(metrics)),
    )
    return list(session.scalars(stmt))


def neuron_rollups(session: Session, account_id: str, instance_id: str, runtime_tag: str) -> list[NeuronRollup]:
    """An instance's neuron-monitor rollups for one runtime tag."""
    stmt = select(NeuronRollup).where(
        NeuronRollup.account_id == account_id,
        NeuronRollup.instance_id == instance_id,
        NeuronRollup.runtime_tag == runtime_tag,
    )
    return list(session.scalars(stmt))
