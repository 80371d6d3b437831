"""``chipwise benchmarks``: submit benchmark jobs for migration findings, list runs, show one run."""

from __future__ import annotations

from decimal import Decimal
from typing import TYPE_CHECKING, Any

import typer

from chipwise.cli import common
from chipwise.cli.common import err, out, print_json, settings

if TYPE_CHECKING:
    from chipwise.models.benchmark import BenchmarkParameters
    from chipwise.pipeline.benchmarks import BenchmarkDispatchReport

benchmarks_app = typer.Typer(
    help="Benchmark jobs on trn/inf AWS Batch queues, and what they measured.", no_args_is_help=True
)

_STATUS_STYLE = {"succeeded": "green", "failed": "red", "expired": "red", "running": "cyan", "submitted": "cyan"}


@benchmarks_app.command("submit")
def submit_command(
    dry_run: bool = typer.Option(False, "--dry-run", help="Print what would be submitted; touch nothing."),
    account: str | None = typer.Option(None, "--account", help="Only findings of this AWS account."),
    finding: list[str] | None = typer.Option(None, "--finding", help="Only these finding ids (repeatable)."),
    as_json: bool = typer.Option(False, "--json", help="Machine-readable output on stdout."),
) -> None:
    """Submit a benchmark job for each open migration finding above the saving threshold (one active run each)."""
    from chipwise.pipeline.benchmarks import submit_benchmarks

    cfg = settings()
    if dry_run:
        report = submit_benchmarks(account, finding_ids=finding, dry_run=True, settings=cfg)
    else:
        with err.status("submitting benchmark jobs…"):
            report = submit_benchmarks(account, finding_ids=finding, settings=cfg)
    if as_json:
        print_json(report.model_dump(mode="json"))
        return
    _print_report(report)


def _print_report(report: BenchmarkDispatchReport) -> None:
    from rich.table import Table

    from chipwise.links import short_id
    from chipwise.presentation import plural

    title = "Would submit" if report.dry_run else "Submitted"
    table = Table(title=f"{title} ({len(report.planned)})", title_justify="left")
    for column in ("resource", "role", "target", "try", "queue", "job definition" if report.dry_run else "job"):
        table.add_column(column, overflow="fold")
    jobs = {s.run_id: s for s in report.submitted}
    for planned in report.planned:
        submitted = jobs.get(planned.parameters.run_id)
        last = planned.job_definition if submitted is None else (submitted.job_id or "not submitted")
        table.add_row(
            planned.resource_name,
            planned.role,
            planned.target_instance_type,
            str(planned.attempt),
            planned.job_queue,
            last,
        )
    out.print(table)
    if report.dry_run:
        for planned in report.planned:
            out.print(f"  {planned.resource_name} ({planned.role}): {_describe(planned.parameters)}", highlight=False)
    for failed in report.failed:
        err.print(f"[red]submission failed[/] for run {failed.run_id}: {failed.failure_reason}", highlight=False)
    if report.skipped:
        skipped = Table(title=f"Skipped ({len(report.skipped)})", title_justify="left")
        for column in ("finding", "resource", "role", "reason"):
            skipped.add_column(column, overflow="fold")
        for s in report.skipped:
            skipped.add_row(short_id(s.finding_id), s.resource_name, s.role, s.reason)
        out.print(skipped)
    if report.sweep and (report.sweep.expired or report.sweep.caught_up):
        err.print(
            f"{plural(len(report.sweep.expired), 'stale run')} expired, "
            f"{plural(len(report.sweep.caught_up), 'missed result')} recorded"
        )


def _describe(p: BenchmarkParameters) -> str:
    """The benchmark a job would run, in one line."""
    shapes = f"batch {','.join(map(str, p.batch_sizes))} × seq {','.join(map(str, p.sequence_lengths))}"
    latency = f", p95 target {p.latency_target_ms} ms" if p.latency_target_ms else ""
    return f"{p.model_id} ({p.task}, {p.runner}) on {p.instance_type}, {shapes}{latency} -> {p.result_uri}"


@benchmarks_app.command("list")
def list_command(
    account: common.AccountFilter = None,
    team: common.TeamFilter = None,
    status: str | None = typer.Option(None, "--status", help="submitted, running, succeeded, failed or expired."),
    finding: str | None = typer.Option(None, "--finding", help="Only runs of this finding."),
    limit: int = typer.Option(100, "--limit", min=1, max=10_000, help="At most this many runs, newest first."),
    as_json: bool = typer.Option(False, "--json", help="Machine-readable output on stdout."),
) -> None:
    """Benchmark runs, newest first (of the account's or the team's findings when asked)."""
    from typing import get_args

    from rich.table import Table

    from chipwise.errors import InvalidInput
    from chipwise.links import short_id
    from chipwise.models.benchmark import RunStatus
    from chipwise.pipeline.benchmarks import benchmark_runs

    if status is not None and status not in get_args(RunStatus):
        raise InvalidInput(f"--status {status!r}: use one of {', '.join(get_args(RunStatus))}")
    common.check_account_id(account)
    rows = benchmark_runs(account_id=account, team=team, status=status, finding=finding, limit=limit)
    if as_json:
        print_json(rows)
        return
    table = Table(title=f"Benchmark runs ({len(rows)})", title_justify="left")
    for column in ("run", "finding", "role", "target", "try", "status", "submitted", "measured / reason"):
        table.add_column(column, overflow="fold")
    for row in rows:
        style = _STATUS_STYLE.get(row["status"], "white")
        table.add_row(
            short_id(row["run_id"]),
            short_id(row["finding_id"]),
            row["role"],
            row["target_instance_type"],
            str(row["attempt"]),
            f"[{style}]{row['status']}[/]",
            f"{row['submitted_at']:%Y-%m-%d %H:%M}",
            _outcome(row),
        )
    out.print(table)


def _outcome(row: dict[str, Any]) -> str:
    from chipwise.render import money

    measured = row.get("measured") or {}
    if measured.get("verdict") == "confirmed" and measured.get("monthly_savings_usd") is not None:
        return f"saves {money(Decimal(measured['monthly_savings_usd']))}/month"
    if measured.get("verdict"):
        return f"{measured['verdict']}: {measured.get('reason', '')}"
    return row.get("failure_reason") or ""


@benchmarks_app.command("show")
def show_command(
    run_id: str = typer.Argument(..., help="The run id (the 8 characters `chipwise benchmarks list` shows)."),
    as_json: bool = typer.Option(False, "--json", help="Machine-readable output on stdout."),
) -> None:
    """One run: its job, parameters, measurements and what they did to the recommendation."""
    from chipwise.pipeline.benchmarks import benchmark_run

    row = benchmark_run(run_id)
    if as_json:
        print_json(row)
        return
    _print_run(row)


def _print_run(row: dict[str, Any]) -> None:
    from rich.table import Table

    from chipwise.render import money

    style = _STATUS_STYLE.get(row["status"], "white")
    out.print(f"[bold]run {row['run_id']}[/] ({row['role']}, attempt {row['attempt']}): [{style}]{row['status']}[/]")
    for label, key in (
        ("finding", "finding_id"),
        ("target", "target_instance_type"),
        ("queue", "job_queue"),
        ("job definition", "job_definition"),
        ("job", "job_id"),
        ("result", "result_uri"),
        ("submitted", "submitted_at"),
        ("finished", "finished_at"),
        ("reason", "failure_reason"),
    ):
        if row.get(key):
            out.print(f"  {label:<15} {row[key]}", highlight=False)
    result = row.get("result") or {}
    if result.get("measurements"):
        table = Table(title=f"Measured on {result['instance_type']} ({result['runner']})", title_justify="left")
        for column in ("batch", "seq len", "req/s", "tokens/s", "p50 ms", "p95 ms"):
            table.add_column(column, justify="right")
        for m in result["measurements"]:
            table.add_row(
                str(m["batch_size"]),
                str(m["sequence_length"]),
                str(m["requests_per_second"]),
                str(m.get("tokens_per_second") or "-"),
                str(m["latency_p50_ms"]),
                str(m["latency_p95_ms"]),
            )
        out.print(table)
        out.print(f"  compile time    {result['compile_time_seconds']} s")
    measured = row.get("measured")
    if measured:
        out.print(f"[bold]{measured['verdict']}[/]: {measured['reason']}", highlight=False)
        for label, key in (
            ("today a month", "current_monthly_cost_usd"),
            ("target a month", "target_monthly_cost_usd"),
            ("saving a month", "monthly_savings_usd"),
            (f"per 1M {measured['unit']}", "cost_per_million_usd"),
            ("per trained model", "dollars_per_run_usd"),
        ):
            if measured.get(key) is not None:
                places = 4 if key == "cost_per_million_usd" else 2
                out.print(f"  {label:<18} {money(Decimal(measured[key]), places)}", highlight=False)
        if measured.get("target_count") is not None:
            out.print(f"  {'instances':<18} {measured['target_count']} × {measured['priced_as']}", highlight=False)
    for rec in row["recommendations"]:
        state = "withdrawn" if rec["withdrawn"] else "recommended"
        out.print(f"  recommendation: {state}, {rec['reason']}", highlight=False)


def register(app: typer.Typer) -> None:
    app.add_typer(benchmarks_app, name="benchmarks")
