"""Benchmark runs, the findings they measure and the telemetry that describes a finding's workload:
:class:`BenchmarkRepository` returns :class:`BenchmarkRunRecord` (and the findings', recommendations' and rollups'
records) and offers a run's verbs: ``add_run``, ``submitted``, ``submission_failed``, ``start``, ``succeed``,
``reject``, ``fail``, ``expire``, ``record_measured``."""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime
from decimal import Decimal
from typing import Any

from sqlalchemy import select

from chipwise.store.repositories.finding_rows import BENCHMARK_EVIDENCE_KEY
from chipwise.store.repositories.findings import (
    FindingRecord,
    RecommendationRecord,
    finding_record,
    recommendation_record,
)
from chipwise.store.repositories.findings import (
    NewRecommendation as NewRecommendation,
)
from chipwise.store.repositories.neuron import NeuronRollupRecord
from chipwise.store.repositories.records import Repository, record_of, values_of
from chipwise.store.repositories.usage import MetricRollupRecord
from chipwise.store.tables import BenchmarkRun, Finding, MetricRollup, NeuronRollup, Recommendation


@dataclass(frozen=True, slots=True)
class BenchmarkRunRecord:
    """One benchmark job of a finding (:mod:`chipwise.store.tables.benchmarks` says what each column holds)."""

    id: str
    finding_id: str
    target_instance_type: str
    attempt: int
    role: str  # target|gpu_baseline
    job_queue: str
    job_definition: str | None
    job_id: str | None
    job_name: str | None
    status: str  # submitted|running|succeeded|failed|expired
    parameters: dict[str, Any]
    result_uri: str | None
    result: dict[str, Any] | None
    measured: dict[str, Any] | None
    failure_reason: str | None
    submitted_at: datetime
    finished_at: datetime | None
    expires_at: datetime | None


def _run(row: BenchmarkRun) -> BenchmarkRunRecord:
    return record_of(BenchmarkRunRecord, row)


class BenchmarkRepository(Repository):
    # --- reading ------------------------------------------------------------------------------------------

    def eligible_findings(
        self,
        rule_ids: Collection[str],
        min_savings_usd: Decimal,
        *,
        account_id: str | None = None,
        finding_ids: Iterable[str] | None = None,
    ) -> list[FindingRecord]:
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
        order = (Finding.estimated_monthly_savings_usd.desc(), Finding.id)
        return [finding_record(row) for row in self.session.scalars(stmt.order_by(*order))]

    def runs_for(self, finding_id: str, target_instance_type: str | None = None) -> list[BenchmarkRunRecord]:
        """A finding's runs (for one target type when given), oldest attempt first."""
        stmt = select(BenchmarkRun).where(BenchmarkRun.finding_id == finding_id)
        if target_instance_type is not None:
            stmt = stmt.where(BenchmarkRun.target_instance_type == target_instance_type)
        order = (BenchmarkRun.attempt, BenchmarkRun.submitted_at)
        return [_run(row) for row in self.session.scalars(stmt.order_by(*order))]

    def runs_of_findings(self, finding_ids: Collection[str]) -> list[BenchmarkRunRecord]:
        """The runs of many findings in one query, oldest attempt first."""
        if not finding_ids:
            return []
        stmt = select(BenchmarkRun).where(BenchmarkRun.finding_id.in_(list(finding_ids)))
        return [_run(row) for row in self.session.scalars(stmt.order_by(BenchmarkRun.attempt))]

    def stale_runs(self, active_statuses: Collection[str], now: datetime) -> list[BenchmarkRunRecord]:
        """Runs in one of ``active_statuses`` past their expiry time, oldest first."""
        stmt = select(BenchmarkRun).where(
            BenchmarkRun.status.in_(list(active_statuses)), BenchmarkRun.expires_at <= now
        )
        return [_run(row) for row in self.session.scalars(stmt.order_by(BenchmarkRun.submitted_at))]

    def get_run(self, run_id: str) -> BenchmarkRunRecord | None:
        row = self.session.get(BenchmarkRun, run_id)
        return None if row is None else _run(row)

    def run_of_job(self, job_id: str) -> BenchmarkRunRecord | None:
        """The run of an AWS Batch job id."""
        row = self.session.scalars(select(BenchmarkRun).where(BenchmarkRun.job_id == job_id)).first()
        return None if row is None else _run(row)

    def runs_with_id_prefix(self, prefix: str, limit: int = 2) -> list[BenchmarkRunRecord]:
        """Up to ``limit`` runs whose id starts with ``prefix`` (a short id typed on the command line)."""
        stmt = select(BenchmarkRun).where(BenchmarkRun.id.startswith(prefix, autoescape=True)).limit(limit)
        return [_run(row) for row in self.session.scalars(stmt)]

    def list_runs(
        self,
        *,
        account_id: str | None = None,
        status: str | None = None,
        finding_id: str | None = None,
        limit: int = 100,
    ) -> list[BenchmarkRunRecord]:
        """Newest first."""
        stmt = select(BenchmarkRun)
        if account_id:
            stmt = stmt.join(Finding, Finding.id == BenchmarkRun.finding_id).where(Finding.account_id == account_id)
        if status:
            stmt = stmt.where(BenchmarkRun.status == status)
        if finding_id:
            stmt = stmt.where(BenchmarkRun.finding_id == finding_id)
        stmt = stmt.order_by(BenchmarkRun.submitted_at.desc()).limit(limit)
        return [_run(row) for row in self.session.scalars(stmt)]

    def recommendations_from(
        self, source: str, *, finding_ids: Iterable[str] | None = None
    ) -> list[RecommendationRecord]:
        """Recommendations of one ``source`` (of some findings when given), oldest first."""
        stmt = select(Recommendation).where(Recommendation.source == source)
        if finding_ids is not None:
            stmt = stmt.where(Recommendation.finding_id.in_(list(finding_ids)))
        order = (Recommendation.created_at, Recommendation.id)
        return [recommendation_record(row) for row in self.session.scalars(stmt.order_by(*order))]

    def recommendations_of_run(self, run_id: str) -> list[RecommendationRecord]:
        """The recommendations a benchmark run made."""
        stmt = select(Recommendation).where(Recommendation.benchmark_run_id == run_id)
        return [recommendation_record(row) for row in self.session.scalars(stmt)]

    def metric_rollups(self, resource_id: int, namespace: str, metrics: Collection[str]) -> list[MetricRollupRecord]:
        """A resource's hourly rollups of ``metrics`` in one CloudWatch namespace."""
        stmt = select(MetricRollup).where(
            MetricRollup.resource_id == resource_id,
            MetricRollup.namespace == namespace,
            MetricRollup.metric.in_(list(metrics)),
        )
        return [record_of(MetricRollupRecord, row) for row in self.session.scalars(stmt)]

    def neuron_rollups(self, account_id: str, instance_id: str, runtime_tag: str) -> list[NeuronRollupRecord]:
        """An instance's neuron-monitor rollups for one runtime tag."""
        stmt = select(NeuronRollup).where(
            NeuronRollup.account_id == account_id,
            NeuronRollup.instance_id == instance_id,
            NeuronRollup.runtime_tag == runtime_tag,
        )
        return [record_of(NeuronRollupRecord, row) for row in self.session.scalars(stmt)]

    # --- a run's life -------------------------------------------------------------------------------------
    # Each verb changes the run in the session (written at the next flush or query) and returns it as it is now.

    def add_run(self, run: BenchmarkRunRecord) -> BenchmarkRunRecord:
        """Store a new run (written now: a failed insert raises here)."""
        row = BenchmarkRun(**values_of(run))
        self.session.add(row)
        self.session.flush()
        return _run(row)

    def _change(self, run_id: str, **values: Any) -> BenchmarkRunRecord:
        row = self.session.get(BenchmarkRun, run_id)
        if row is None:  # pragma: no cover - a run is changed only after it was read or stored
            raise LookupError(f"no benchmark run {run_id}")
        for name, value in values.items():
            setattr(row, name, value)
        return _run(row)

    def submitted(self, run_id: str, *, job_definition: str | None, job_id: str) -> BenchmarkRunRecord:
        return self._change(run_id, job_definition=job_definition, job_id=job_id)

    def submission_failed(
        self, run_id: str, reason: str, now: datetime, job_definition: str | None = None
    ) -> BenchmarkRunRecord:
        """AWS refused the job: failed now (no expiry to wait for), with the job definition when it was known."""
        values: dict[str, Any] = {"job_definition": job_definition} if job_definition is not None else {}
        return self._change(run_id, **values, status="failed", finished_at=now, expires_at=None, failure_reason=reason)

    def know_job(self, run_id: str, job_id: str) -> BenchmarkRunRecord:
        """The run's Batch job id, when it had none."""
        return self._change(run_id, job_id=job_id)

    def start(self, run_id: str) -> BenchmarkRunRecord:
        return self._change(run_id, status="running")

    def succeed(self, run_id: str, finished_at: datetime, result: dict[str, Any]) -> BenchmarkRunRecord:
        return self._change(run_id, status="succeeded", finished_at=finished_at, result=result)

    def reject(self, run_id: str, reason: str, finished_at: datetime | None = None) -> BenchmarkRunRecord:
        """The job's result file is missing or malformed: the run fails for good."""
        values: dict[str, Any] = {"finished_at": finished_at} if finished_at is not None else {}
        return self._change(
            run_id, **values, status="failed", failure_reason=f"result rejected: {reason}", result={"rejected": reason}
        )

    def fail(self, run_id: str, finished_at: datetime, reason: str | None) -> BenchmarkRunRecord:
        return self._change(run_id, status="failed", finished_at=finished_at, failure_reason=reason)

    def expire(self, run_id: str, now: datetime, reason: str) -> BenchmarkRunRecord:
        return self._change(run_id, status="expired", finished_at=now, failure_reason=reason)

    def record_measured(self, run_id: str, measured: dict[str, Any]) -> BenchmarkRunRecord:
        """The economics priced from the run's result."""
        return self._change(run_id, measured=measured)

    # --- what a measurement does to its finding -----------------------------------------------------------

    def _finding(self, finding_id: str, **values: Any) -> FindingRecord:
        row = self.session.get(Finding, finding_id)
        if row is None:  # pragma: no cover - a finding is changed only after it was read
            raise LookupError(f"no finding {finding_id}")
        for name, value in values.items():
            setattr(row, name, value)
        return finding_record(row)

    def note_on_finding(self, finding_id: str, content: Mapping[str, Any]) -> FindingRecord:
        """Set the finding's ``evidence["benchmark"]`` (a new dict, so the JSON column is written)."""
        row = self.session.get(Finding, finding_id)
        evidence = {**((row.evidence if row is not None else None) or {}), BENCHMARK_EVIDENCE_KEY: dict(content)}
        return self._finding(finding_id, evidence=evidence)

    def confirm_finding(self, finding_id: str, saving: Decimal, summary: str) -> FindingRecord:
        """A benchmark confirmed the saving: the measured figure, high confidence."""
        return self._finding(finding_id, measured_monthly_savings_usd=saving, confidence="high", summary=summary)

    def hold_finding_for_review(self, finding_id: str, summary: str) -> FindingRecord:
        """Out of the measured totals (and of the headline) until someone checks the run."""
        return self._finding(finding_id, measured_monthly_savings_usd=None, summary=summary)

    def withdraw_finding(self, finding_id: str, summary: str) -> FindingRecord:
        """The benchmark found no saving: the finding is withdrawn, with a measured saving of zero."""
        return self._finding(
            finding_id, measured_monthly_savings_usd=Decimal(0), confidence="high", status="withdrawn", summary=summary
        )

    def add_recommendation(self, recommendation: NewRecommendation) -> None:
        """A benchmark's pricing of the finding's recommendation (its history keeps every one)."""
        self.session.add(Recommendation(**values_of(recommendation)))
