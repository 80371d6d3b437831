"""Benchmarks: submit jobs for an account's migration findings, and record what AWS Batch says of them.

``benchmark_dispatch`` (a ``ScanCompleted`` event) and ``chipwise benchmarks submit`` call :func:`submit_benchmarks`;
``benchmark_result`` (a "Batch Job State Change" event) and the demo call :func:`record_state_change`. Each runs
in one transaction, with clients for the home region.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

from chipwise.benchmarks.dispatch import BenchmarkDispatchReport as BenchmarkDispatchReport
from chipwise.benchmarks.dispatch import dispatch_benchmarks
from chipwise.benchmarks.results import Clients, StateOutcome, record_job_state
from chipwise.clock import utcnow
from chipwise.models.events import BatchJobStateChangeEvent, ScanCompletedEvent
from chipwise.models.results import BenchmarkDispatch
from chipwise.observability import logger
from chipwise.settings import Settings, get_settings
from chipwise.store import session_scope

MAX_RUNS = 10_000  # runs read for a team's list (the --limit's own maximum)


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


def benchmark_runs(
    *, account_id: str | None, status: str | None, finding: str | None, limit: int, team: str | None = None
) -> list[dict[str, Any]]:
    """``chipwise benchmarks list``: runs, newest first (a finding by its id or the short id lists show); with a
    team, the runs of that team's findings (the newest MAX_RUNS runs are read, then kept by team)."""
    from chipwise.benchmarks.runs import list_runs, run_summary
    from chipwise.pipeline._store import store_scope
    from chipwise.pipeline.findings import finding_ids
    from chipwise.store.repositories.findings import FindingRepository

    with store_scope() as session:
        if finding is not None:  # the short id the findings list shows is enough
            finding = FindingRepository(session).get(finding).id
        read = limit if team is None else MAX_RUNS
        runs = list_runs(session, account_id=account_id, status=status, finding_id=finding, limit=read)
        wanted = finding_ids(session, account=account_id, region=None, team=team) if team is not None else None
        return [run_summary(r) for r in runs if wanted is None or r.finding_id in wanted][:limit]


def benchmark_run(run_id: str) -> dict[str, Any]:
    """``chipwise benchmarks show``: one run (by id or an unambiguous prefix) and the recommendations it made."""
    from chipwise.benchmarks.runs import run_summary
    from chipwise.pipeline._store import store_scope
    from chipwise.store.repositories.benchmarks import BenchmarkRepository

    with store_scope() as session:
        run = _find_run(session, run_id)
        row = run_summary(run)
        row["recommendations"] = [
            {
                "target_instance_type": r.target_instance_type,
                "target_count": r.target_count,
                "monthly_cost_usd": r.monthly_cost_usd,
                "monthly_savings_usd": r.monthly_savings_usd,
                "withdrawn": r.withdrawn,
                "reason": r.reason,
            }
            for r in BenchmarkRepository(session).recommendations_of_run(run.id)
        ]
        return row


def _find_run(session: Any, run_id: str) -> Any:
    """A run by its id or by an unambiguous prefix of it (at least six characters, as lists show them)."""
    from chipwise.errors import InvalidInput, NotFound
    from chipwise.store.repositories.benchmarks import BenchmarkRepository
    from chipwise.store.repositories.findings import MIN_ID_PREFIX

    run = BenchmarkRepository(session).get_run(run_id)
    if run is not None:
        return run
    matches = []
    if len(run_id) >= MIN_ID_PREFIX:
        matches = BenchmarkRepository(session).runs_with_id_prefix(run_id, limit=2)
    if not matches:
        raise NotFound(f"no benchmark run {run_id!r}: `chipwise benchmarks list` shows the runs")
    if len(matches) > 1:
        raise InvalidInput(f"{run_id!r} matches several benchmark runs: give more of the id")
    return matches[0]
