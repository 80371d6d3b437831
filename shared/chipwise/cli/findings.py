"""``chipwise findings`` (list, show, suppress, apply, rollback): the list bounded for an organisation (filters
and totals in SQL, the top rows in the table, every row streamed as CSV or JSON lines)."""

from __future__ import annotations

import re
import sys
from datetime import UTC, datetime, time, timedelta
from pathlib import Path
from typing import TYPE_CHECKING

import typer

from chipwise.cli.common import (
    AccountFilter,
    CursorOption,
    LimitOption,
    RegionFilter,
    TeamFilter,
    check_account_id,
    check_region,
    err,
    more_line,
    no_match_line,
    out,
    print_json,
    print_json_lines,
    row_limit,
    settings,
)

if TYPE_CHECKING:
    from chipwise.pipeline.apply import RemediationOutcome
    from chipwise.pipeline.findings import FindingFilter

STATUSES = ("open", "suppressed", "resolved", "withdrawn")
FORMATS = ("table", "json", "csv")

findings_app = typer.Typer(
    help="Findings: where accelerator money leaks, how much, how sure, and what to do.",
    invoke_without_command=True,
    no_args_is_help=False,
)


def _statuses(status: str) -> tuple[str, ...]:
    from chipwise.errors import InvalidInput

    if status == "all":
        return STATUSES
    if status not in STATUSES:
        raise InvalidInput(f"--status must be one of {', '.join((*STATUSES, 'all'))}, not {status!r}")
    return (status,)


def check_filters(rules: list[str] | None, region: str | None, account: str | None, output: str) -> None:
    """Unknown filter values are errors (rather than a silently empty list)."""
    from chipwise.errors import InvalidInput
    from chipwise.rules import registry

    if output not in FORMATS:
        raise InvalidInput(f"--format must be one of {', '.join(FORMATS)}, not {output!r}")
    known = set(registry().ids()) if rules else set()  # the registry loads every rule module: only when asked
    for rule_id in rules or ():
        if rule_id not in known:
            raise InvalidInput(f"unknown rule {rule_id!r}: `chipwise rules` lists the {len(known)} rule ids")
    check_account_id(account)
    check_region(region)


@findings_app.callback()
def findings_command(
    ctx: typer.Context,
    json_output: bool = typer.Option(False, "--json", help="Print the findings as JSON lines (one per line)."),
    output: str = typer.Option("table", "--format", help="table, json (one array) or csv (one row per finding)."),
    min_savings: float | None = typer.Option(
        None, "--min-savings", min=0, help="Only findings saving at least this many USD a month."
    ),
    status: str = typer.Option("open", "--status", help="open, suppressed, resolved, withdrawn or all."),
    account: AccountFilter = None,
    team: TeamFilter = None,
    region: RegionFilter = None,
    rule: list[str] | None = typer.Option(
        None, "--rule", metavar="RULE_ID", help="Only this rule id; repeat for several."
    ),
    limit: LimitOption = None,
    cursor: CursorOption = None,
) -> None:
    """List findings, largest monthly saving first: the table shows the top rows, the totals of all and how many
    more; CSV and JSON lines give every row (or --limit of them)."""
    if ctx.invoked_subcommand is not None:
        return
    from decimal import Decimal

    from chipwise.pipeline.findings import FindingFilter

    check_filters(rule, region, account, output)
    selected = FindingFilter(
        statuses=_statuses(status),
        account_id=account,
        region=region,
        team=team,
        min_savings=Decimal(str(min_savings)) if min_savings is not None else None,
        rule_ids=tuple(rule) if rule else None,
    )
    if json_output or output in ("json", "csv"):
        _stream(selected, "lines" if json_output else output, row_limit(limit, None), cursor)
        return
    _table(selected, row_limit(limit), cursor, status)


def _stream(selected: FindingFilter, form: str, limit: int | None, cursor: str | None) -> None:
    """Every selected row (or ``limit``) as JSON lines, one JSON array, or CSV, a batch at a time. A stream cut by
    ``limit`` with findings left after it says so on stderr (how many more, and the ``--cursor`` that continues),
    so stdout stays one document per line (or one array, or one CSV)."""
    from chipwise.ledger_csv import write_csv
    from chipwise.pipeline.findings import stream_findings
    from chipwise.presentation import ledger, ledger_fields

    written = 0
    last_id = None
    documents = []
    for streamed in stream_findings(selected, limit=limit, cursor=cursor, verdicts=form == "csv"):
        figures, owners, last_id = streamed.figures, streamed.owners, streamed.last_id
        if form == "csv":
            write_csv(figures, sys.stdout, owners, start=written + 1, header=written == 0, verdicts=streamed.verdicts)
        else:
            batch = [
                {**r.document.model_dump(mode="json"), **ledger_fields(r, owners.get(r.document.resource_id, ""))}
                for r in figures.rows
            ]
            if form == "lines":
                print_json_lines(batch)
            else:
                documents += batch
        written += len(figures.rows)
    if form == "csv" and written == 0:
        write_csv(ledger([]), sys.stdout)
    if form == "json":
        print_json(documents)
    if limit is not None and written == limit and last_id is not None:
        _say_rest(selected, last_id)


def _say_rest(selected: FindingFilter, last_id: str) -> None:
    """Under a stream cut by --limit, on stderr: the table's "… and n more" line with the cursor to pass."""
    from chipwise.pipeline.findings import rest_after

    rest, totals = rest_after(selected, last_id)
    line = more_line(totals.count - rest, totals.count, "finding", f"--cursor {last_id}")
    if line is not None:
        err.print(line, highlight=False, markup=False, soft_wrap=True)


def _table(selected: FindingFilter, limit: int | None, cursor: str | None, status: str) -> None:
    from chipwise.cli._findings_view import findings_table
    from chipwise.pipeline.findings import list_findings
    from chipwise.presentation import plural

    page = list_findings(selected, limit=limit, cursor=cursor)
    documents = page.documents
    if not documents and not page.store_empty and page.totals.count == 0:
        filters: dict[str, object] = {"account": selected.account_id, "team": selected.team, "region": selected.region}
        filters |= {"rule": ", ".join(selected.rule_ids or ()), "min_savings": selected.min_savings, "cursor": cursor}
        out.print(no_match_line(f"{status} finding", **filters), highlight=False)
        return
    shown = len(documents)
    title = plural(page.totals.count, f"{status} finding")
    if page.rest_count > 0:
        title = f"top {shown} of {title}"
    out.print(findings_table(documents, title=title, shown_of=page.totals.count))
    rest = more_line(shown, page.totals.count, "finding", f"--cursor {page.next_cursor}" if page.next_cursor else "")
    if rest is not None:
        estimated = f"${page.totals.estimated_monthly_usd:,.2f}"
        out.print(f"{rest}; all {page.totals.count:,} estimate {estimated} a month before overlaps", highlight=False)
    for title, groups in (("by account", page.by_account), ("by team", page.by_team)):
        if len(groups) > 1:
            out.print(
                f"{title} (estimated, before overlaps): "
                + "; ".join(f"{g.key} {g.count:,} · ${g.estimated_monthly_usd:,.0f}" for g in groups),
                highlight=False,
                soft_wrap=True,
            )
    if not documents and page.store_empty:
        err.print(empty_store_hint(settings().database_url), highlight=False, markup=False, soft_wrap=True)


DEMO_STORE = Path("chipwise-demo") / "chipwise-demo.db"


def empty_store_hint(database_url: str) -> str:
    """What to do when the store has no findings at all: read the demo's store, or fill this one."""
    if DEMO_STORE.is_file() and DEMO_STORE.name not in database_url:
        return (
            "the store is empty: run `chipwise scan` (AWS credentials needed) to fill it; the demo's findings are "
            f"in its own store: {demo_findings_command()}"
        )
    return (
        "the store is empty: run `chipwise scan` (AWS credentials needed) to fill it, or `make demo` "
        "(no AWS needed) and read the demo's store"
    )


def demo_findings_command(store: Path = DEMO_STORE) -> str:
    """The exact command that lists the demo's findings (printed by the demo and by an empty store)."""
    return f"CHIPWISE_DATABASE_URL=sqlite:///{store.as_posix()} chipwise findings"


_HAS_ZONE = re.compile(r"([+-]\d\d:?\d\d|[zZ])\s*$")


def parse_until(value: str) -> datetime:
    """``2026-12-31`` (suppressed through that day, UTC) or an ISO time with a zone."""
    from chipwise.economics import parse_day, parse_utc
    from chipwise.errors import InvalidInput

    try:
        day = parse_day(value)
    except ValueError:
        pass
    else:
        return datetime.combine(day + timedelta(days=1), time(0), tzinfo=UTC)
    try:
        moment = parse_utc(value)
    except ValueError as exc:
        raise InvalidInput(f"--until {value!r} is not a date (YYYY-MM-DD) or an ISO time") from exc
    if not _HAS_ZONE.search(value):  # parse_utc takes a naive time as UTC; a deadline typed by a person says
        raise InvalidInput(f"--until {value!r} needs a time zone (or give a date)")
    return moment


@findings_app.command("show")
def show_command(
    finding_id: str = typer.Argument(..., help="The finding id (or at least six of its first characters)."),
    json_output: bool = typer.Option(False, "--json", help="Print the finding and its history as JSON."),
) -> None:
    """One finding: its summary, evidence and the history of its recommendation."""
    from chipwise.cli._findings_view import print_history
    from chipwise.links import console_url
    from chipwise.links import suppress_command as suppress_hint
    from chipwise.pipeline.findings import finding_detail

    detail = finding_detail(finding_id)
    document = detail.document
    link = console_url(document.resource_id, document.region, document.resource_kind, document.resource_name)
    if json_output:
        print_json(
            {
                **document.model_dump(mode="json"),
                "console_url": link,
                "suppress_command": suppress_hint(document.finding_id),
                "suppression": detail.suppression,
                "history": detail.history,
                "audit": detail.audit,
            }
        )
        return
    print_history(detail.document, detail.suppression, link, detail.history, detail.audit)


@findings_app.command("suppress")
def suppress_command(
    finding_id: str = typer.Argument(..., help="The finding id (or at least six of its first characters)."),
    until: str = typer.Option(..., "--until", help="Suppress through this date (YYYY-MM-DD, UTC)."),
    reason: str = typer.Option(..., "--reason", help="Why (kept with the finding)."),
) -> None:
    """Hide a finding until a date; after it, the next scan reopens it if the condition still holds."""
    from chipwise.pipeline.findings import suppress_finding
    from chipwise.rules.titles import rule_title

    done = suppress_finding(finding_id, until=parse_until(until), reason=reason)
    label = f"{rule_title(done.rule_id)} on {done.resource_name}"
    out.print(f"suppressed {label} {until_words(until, done.until)}", highlight=False)


def until_words(typed: str, ends: datetime | None) -> str:
    """The end of a suppression as the user gave it: a date is the last day hidden ("through 2026-12-31, UTC"),
    not the instant after it; a time is shown as stored."""
    from chipwise.economics import parse_day

    try:
        day = parse_day(typed)
    except ValueError:
        return f"until {ends.isoformat() if ends else typed}"
    return f"through {day.isoformat()} (UTC); the next scan after it reopens it if the condition still holds"


@findings_app.command("apply")
def apply_command(
    finding_id: str = typer.Argument(..., help="The finding id (or at least six of its first characters)."),
    dry_run: bool = typer.Option(
        False,
        "--dry-run",
        help="Print the planned API calls from the store (no AWS credentials needed); change nothing.",
    ),
    yes: bool = typer.Option(False, "--yes", help="Make the change (without it, only what would be done)."),
) -> None:
    """Perform a finding's mechanical next step (stop an idle instance, or lower its node group or Auto Scaling
    group; scale an idle inference component to 0 copies; lower a variant's instance count) after re-checking the
    resource and its metrics since the scan. Recorded as the AWS caller identity (STS GetCallerIdentity)."""
    from chipwise.clock import utcnow
    from chipwise.pipeline._store import store_url
    from chipwise.pipeline.apply import apply_finding, cli_operator

    url = store_url()
    if dry_run:
        outcome = apply_finding(finding_id, actor="dry run", source="cli", database_url=url, dry_run=True)
    else:
        outcome = apply_finding(
            finding_id, actor=cli_operator(), source="cli", database_url=url, now=utcnow(), approved=yes
        )
    _report(outcome)


@findings_app.command("rollback")
def rollback_command(
    finding_id: str = typer.Argument(..., help="The finding id (or at least six of its first characters)."),
) -> None:
    """Undo a finding's apply: start the instance, restore the copies, the instance count or the group's size,
    remove the mark."""
    from chipwise.clock import utcnow
    from chipwise.pipeline._store import store_url
    from chipwise.pipeline.apply import cli_operator
    from chipwise.pipeline.rollback import rollback_finding

    url = store_url()
    _report(rollback_finding(finding_id, actor=cli_operator(), source="cli", database_url=url, now=utcnow()))


def _report(outcome: RemediationOutcome) -> None:
    """Print what was (or would be) done; a refusal or failure is one line on stderr and exit 1 (it is stored)."""
    from chipwise.errors import ChipwiseError
    from chipwise.links import short_id

    short = short_id(outcome.finding_id)
    if not outcome.ok:
        raise ChipwiseError(f"{outcome.status}: {outcome.message}")
    if outcome.status in {"dry_run", "unapproved"}:
        head = "dry run" if outcome.status == "dry_run" else "not approved (add --yes to make the change)"
        out.print(f"{head}: {outcome.resource} ({short}) would get these calls:", highlight=False)
        for api in outcome.calls:  # one line per call, never broken by the console (a long call stays exact)
            out.print(f"  {api}", highlight=False, markup=False, soft_wrap=True)
        out.print(
            f"rollback would make: {'; '.join(str(u) for u in reversed(outcome.undo))}",
            highlight=False,
            markup=False,
            soft_wrap=True,
        )
        if outcome.status == "dry_run":
            out.print(
                "planned from the store (what the scan saw), with no AWS call: the live re-check runs at apply time "
                "(`--yes` reads the resource and its metrics since the scan again, and refuses if they changed or "
                "are not fresh)",
                highlight=False,
                soft_wrap=True,
            )
        return
    out.print(f"{outcome.status}: {outcome.resource} ({short})", highlight=False)
    for api in outcome.calls:
        out.print(f"  {api}", highlight=False, markup=False, soft_wrap=True)
    if outcome.status == "applied":
        out.print(f"undo with: chipwise findings rollback {short}", highlight=False)


def register(app: typer.Typer) -> None:
    app.add_typer(findings_app, name="findings")  # with the subcommands of the table's `also` modules
