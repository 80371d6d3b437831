"""``chipwise notify``: send the digest and alerts that are due; ``chipwise notify status``: the outbox."""

from __future__ import annotations

from typing import Annotated, Any

import typer

from chipwise.cli.common import LimitOption, err, fields, more_line, out, print_json, row_limit, settings

notify_app = typer.Typer(
    help="Email and Slack: the daily digest, alerts above the threshold, and the outbox they go through.",
)

AccountOption = Annotated[
    list[str] | None, typer.Option("--account", "-a", help="Only this account (repeatable); default: all.")
]
JsonOption = Annotated[bool, typer.Option("--json", help="Machine-readable output on stdout.")]


def _preview(subject: str | None, payload: dict[str, object]) -> str:
    text = subject or str(payload.get("text", ""))
    return text if len(text) <= 90 else text[:89] + "…"


def _check_team(team: str | None, *, dry_run: bool, account: list[str] | None) -> None:
    from chipwise.errors import InvalidInput

    if team is None:
        return
    if not dry_run:  # the team digests go out together, once a day, from one "since"
        raise InvalidInput("--team previews one team's digest: add --dry-run (a run sends every team's digest)")
    if account:
        raise InvalidInput("--team and --account do not go together: a team's digest spans its accounts")


@notify_app.callback(invoke_without_command=True)
def notify_command(
    ctx: typer.Context,
    dry_run: Annotated[
        bool, typer.Option("--dry-run", help="Print what would be sent; write and send nothing.")
    ] = False,
    account: AccountOption = None,
    team: Annotated[
        str | None,
        typer.Option(
            "--team",
            help="With --dry-run: only this team's digest and alerts (the organisation's summary on top stays whole).",
        ),
    ] = None,
    limit: LimitOption = None,
    as_json: JsonOption = False,
) -> None:
    """Enqueue today's digest and any alerts, then send everything due (SES email, Slack webhook)."""
    if ctx.invoked_subcommand is not None:
        return
    from rich.table import Table

    from chipwise.errors import UpstreamError

    _check_team(team, dry_run=dry_run, account=account)
    from chipwise.pipeline._store import prepare_store
    from chipwise.pipeline.notify import send_notifications
    from chipwise.presentation import plural

    prepare_store()
    with err.status("deciding what to send…"):
        report = send_notifications(settings(), dry_run=dry_run, accounts=account or None, team=team)
    if as_json:
        print_json(report.as_dict())
        return
    verb = "Would send" if dry_run else "Enqueued"
    table = Table(title=f"{verb}: {plural(len(report.planned), 'new message')}", title_justify="left")
    for column in ("channel", "kind", "recipient", "subject / text"):
        table.add_column(column, overflow="fold")
    shown = row_limit(limit)
    for p in report.planned[:shown]:
        table.add_row(p.channel, p.kind, p.recipient, _preview(p.subject, p.payload))
    out.print(table)
    rest = more_line(len(report.planned[:shown]), len(report.planned), "message", "--limit 0 or --json")
    if rest is not None:
        out.print(rest, highlight=False)
    if dry_run:
        if report.due:
            out.print(f"and {plural(len(report.due), 'message')} already waiting in the outbox:")
            for m in report.due:
                out.print(f"  #{m.id} {m.channel} {m.kind} → {m.recipient}: {_preview(m.subject, m.payload)}")
        out.print("[dim]dry run: nothing was written or sent[/]")
        return
    drained = report.drained
    colour = "red" if drained.failed else ("yellow" if drained.retrying else "green")
    out.print(
        f"[{colour}]sent {len(drained.sent)}, retrying later {len(drained.retrying)}, failed {len(drained.failed)}[/]"
    )
    for message_id, error in drained.errors.items():
        err.print(f"  #{message_id}: {error}", highlight=False, markup=False)
    if drained.failed or drained.retrying:
        raise UpstreamError(
            f"{plural(len(drained.failed) + len(drained.retrying), 'message')} could not be sent "
            "(`chipwise notify status` shows why; failed ones go again after `chipwise notify retry`)"
        )


@notify_app.command("status")
def status_command(as_json: JsonOption = False) -> None:
    """Show the outbox: counts by channel and status, failed messages with their last error, what is waiting."""
    from rich.table import Table

    from chipwise.pipeline.notify import outbox_view

    status = outbox_view()
    if as_json:
        print_json(
            {
                "counts": [{"channel": c, "status": s, "messages": n} for (c, s), n in sorted(status.counts.items())],
                "failed": [_row(m) for m in status.failed],
                "pending": [_row(m) for m in status.pending],
            }
        )
        return
    counts = Table(title="Outbox", title_justify="left")
    for column in ("channel", "pending", "sent", "failed"):
        counts.add_column(column, justify="left" if column == "channel" else "right")
    for channel in sorted({c for c, _ in status.counts}):
        counts.add_row(
            channel,
            *(str(status.counts.get((channel, s), 0)) for s in ("pending", "sent", "failed")),
        )
    out.print(counts)
    _print_rows("Failed (run `chipwise notify retry` after fixing the cause)", status.failed, "red")
    _print_rows("Pending", status.pending, "yellow")


def _row(m: Any) -> dict[str, Any]:
    return fields(m, "id channel kind recipient subject status attempts last_error created_at next_attempt_at sent_at")


def _print_rows(title: str, rows: list[Any], colour: str) -> None:
    from rich.table import Table

    if not rows:
        return
    table = Table(title=title, title_justify="left", title_style=colour)
    for column in ("id", "channel", "kind", "recipient", "attempts", "next attempt", "last error"):
        table.add_column(column, overflow="fold")
    for row in rows:
        r = _row(row)
        table.add_row(
            str(r["id"]),
            str(r["channel"]),
            str(r["kind"]),
            str(r["recipient"]),
            str(r["attempts"]),
            f"{r['next_attempt_at']:%Y-%m-%d %H:%M}" if r["status"] == "pending" else "-",
            str(r["last_error"] or ""),
        )
    out.print(table)


@notify_app.command("retry")
def retry_command(
    ids: Annotated[list[int] | None, typer.Argument(help="Outbox ids to retry; default: every failed message.")] = None,
) -> None:
    """Give failed messages a fresh set of attempts (after fixing the cause); `chipwise notify` sends them."""
    from chipwise.pipeline.notify import retry_failed
    from chipwise.presentation import plural

    count = retry_failed(ids or None)
    out.print(f"{plural(count, 'failed message')} queued again")


def register(app: typer.Typer) -> None:
    app.add_typer(notify_app, name="notify")
