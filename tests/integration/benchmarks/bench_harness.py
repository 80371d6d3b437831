"""The benchmark loop against the AWS emulator and the test store, as steps a test calls: findings inserted
directly, dispatch, results written where a job would write them, and state events built from DescribeJobs
(the emulator's docker-less jobs succeed at once, so FAILED events are built by hand)."""

from __future__ import annotations

import json
import sys
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from aws_lambda_powertools.utilities.parser import parse
from sqlalchemy import select

from chipwise.benchmarks.dispatch import BenchmarkDispatchReport, dispatch_benchmarks
from chipwise.benchmarks.results import Clients, StateOutcome
from chipwise.clock import utcnow
from chipwise.models.benchmark import BenchmarkParameters, BenchmarkResult, split_s3_uri
from chipwise.models.events import BatchJobStateChangeEvent
from chipwise.pipeline.benchmarks import record_state_change
from chipwise.settings import Settings
from chipwise.store import session_scope
from chipwise.store.tables import BenchmarkRun, Finding, Recommendation
from chipwise_devkit.batch import job_state_event

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "unit" / "benchmarks"))
import benchmark_factories as factories


@dataclass
class Bench:
    """The emulator, store and settings of one test, with the steps of the loop as methods."""

    url: str
    settings: Settings
    clients: Clients

    def add(self, *rows: Any) -> None:
        with session_scope(self.url) as session:
            session.add_all(rows)

    def add_finding(self, finding: Finding | None = None, resource: Any = None) -> Finding:
        """An account, the finding and its resource (the default: chat-mistral-g5)."""
        finding = finding or factories.finding()
        with session_scope(self.url) as session:
            if session.get(type(factories.account()), finding.account_id) is None:
                session.add(factories.account(finding.account_id))
                session.flush()
            session.add(resource or factories.resource(finding.resource_name, arn=finding.resource_arn))
            session.add(finding)
        return finding

    def dispatch(self, now: datetime | None = None, **kwargs: Any) -> BenchmarkDispatchReport:
        with session_scope(self.url) as session:
            return dispatch_benchmarks(
                session, self.clients.batch, settings=self.settings, clients=self.clients, now=now, **kwargs
            )

    def runs(self, finding_id: str | None = None) -> list[BenchmarkRun]:
        with session_scope(self.url) as session:
            stmt = select(BenchmarkRun).order_by(BenchmarkRun.submitted_at, BenchmarkRun.attempt)
            if finding_id:
                stmt = stmt.where(BenchmarkRun.finding_id == finding_id)
            return list(session.scalars(stmt))

    def run(self, run_id: str) -> BenchmarkRun:
        with session_scope(self.url) as session:
            found = session.get(BenchmarkRun, run_id)
            assert found is not None
            return found

    def finding(self, finding_id: str) -> Finding:
        with session_scope(self.url) as session:
            found = session.get(Finding, finding_id)
            assert found is not None
            return found

    def recommendations(self, finding_id: str) -> list[Recommendation]:
        with session_scope(self.url) as session:
            stmt = select(Recommendation).where(Recommendation.finding_id == finding_id).order_by(Recommendation.id)
            return list(session.scalars(stmt))

    def write_result(self, run: BenchmarkRun, measurements: list[Any] | None = None, text: str | None = None) -> None:
        """What the job would write at the run's result location."""
        params = BenchmarkParameters.model_validate(run.parameters)
        if text is None:
            text = json.dumps(factories.result(params, measurements).model_dump(mode="json"))
        bucket, key = split_s3_uri(params.result_uri)
        self.clients.s3.put_object(Bucket=bucket, Key=key, Body=text.encode())

    def job(self, run: BenchmarkRun) -> dict[str, Any]:
        assert run.job_id is not None
        (job,) = self.clients.batch.describe_jobs(jobs=[run.job_id])["jobs"]
        return dict(job)

    def event(self, run: BenchmarkRun, **detail: Any) -> dict[str, Any]:
        """The state event for the run's job as DescribeJobs shows it, with ``detail`` fields overridden."""
        return job_state_event({**self.job(run), **detail})

    def failed_event(self, run: BenchmarkRun, reason: str = "Host EC2 (instance i-0abc) terminated.") -> dict[str, Any]:
        attempt = {"container": {"exitCode": 137, "reason": "OutOfMemoryError"}, "statusReason": reason}
        return self.event(run, status="FAILED", statusReason=reason, attempts=[attempt])

    def deliver(self, event: dict[str, Any], now: datetime | None = None) -> StateOutcome:
        change = parse(event=event, model=BatchJobStateChangeEvent)
        return record_state_change(change, settings=self.settings, now=now)


def later(hours: float) -> datetime:
    return utcnow() + timedelta(hours=hours)


def parse_result(run: BenchmarkRun) -> BenchmarkResult:
    assert run.result is not None
    return BenchmarkResult.model_validate(run.result)
