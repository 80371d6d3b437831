"""Benchmarks: submit jobs for an account's migration findings, and record what AWS Batch says of them.

``benchmark_dispatch`` (a ``ScanCompleted`` event) and ``chipwise benchmarks submit`` call :func:`submit_benchmarks`;
``benchmark_result`` (a "Batch Job State Change" event) and the demo call :func:`record_state_change`. Each runs
in one transaction, with clients for the home region.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from chipwise.benchmarks.dispatch import BenchmarkDispatchReport, dispatch_benchmarks
from chipwise.benchmarks.results import Clients, StateOutcome, record_job_state
from chipwise.clock import utcnow
from chipwise.models.events import BatchJobStateChangeEvent, ScanCompletedEvent
from chipwise.models.results import BenchmarkDispatch
from chipwise.observability import logger
from chipwise.settings import Settings, get_settings
from chipwise.store import session_scope


def submit_benchmarks(
    account_id: str | None,
    *,
    finding_ids: Sequence[str] | None = None,
    dry_run: bool = False,
    settings: Settings | None = None,
    now: datetime | None = None,
) -> BenchmarkDispatchReport:
    """Sweep stale runs, then plan and (unless ``dry_run``) submit a job per eligible finding, in one transaction."""
    settings = settings or get_settings()
    with session_scope(settings.database_url) as session:
        if dry_run:
            return dispatch_benchmarks(
                session, None, settings=settings, account_id=account_id, finding_ids=finding_ids, dry_run=True, now=now
            )
        clients = Clients.for_settings(settings)
        return dispatch_benchmarks(
            session,
            clients.batch,
            settings=settings,
            clients=clients,
            account_id=account_id,
            finding_ids=finding_ids,
            now=now,
        )


def benchmark_after_scan(event: ScanCompletedEvent, *, settings: Settings | None = None) -> BenchmarkDispatch:
    """The ``benchmark_dispatch`` Lambda: a ``ScanCompleted`` event benchmarks that account's findings; a failed
    scan dispatches nothing (its findings are stale)."""
    scan = event.detail
    if scan.status == "failed":
        return BenchmarkDispatch(status="skipped", reason=f"scan {scan.scan_id} failed", account_id=scan.account_id)
    report = submit_benchmarks(scan.account_id, settings=settings)
    summary = BenchmarkDispatch(
        status="dispatched",
        account_id=scan.account_id,
        scan_id=scan.scan_id,
        submitted=len(report.submitted),
        failed=len(report.failed),
        skipped=len(report.skipped),
        expired=len(report.sweep.expired) if report.sweep else 0,
        run_ids=[s.run_id for s in report.submitted],
    )
    logger().info("benchmarks dispatched", extra=summary.answer())
    return summary


def record_state_change(
    event: BatchJobStateChangeEvent, *, settings: Settings | None = None, now: datetime | None = None
) -> StateOutcome:
    """The ``benchmark_result`` Lambda (and the demo): record one job state in one transaction."""
    settings = settings or get_settings()
    with session_scope(settings.database_url) as session:
        outcome = record_job_state(
            session, event.detail, clients=Clients.for_settings(settings), settings=settings, now=now or utcnow()
        )
    logger().info("benchmark state event", extra=outcome.model_dump(exclude_none=True))
    return outcome
