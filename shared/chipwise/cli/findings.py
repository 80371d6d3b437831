"""``chipwise findings`` (list, show, suppress, evaluate) and ``chipwise rules`` (the registry and its thresholds)."""

from __future__ import annotations

import re
import sys
from datetime import UTC, datetime, time, timedelta
from decimal import Decimal
from pathlib import Path
from typing import Any

import typer
from rich.markup import escape
from rich.table import Table
from rich.text import Text

from chipwise.cli.common import err, out, print_json, settings, store_session, store_url
from chipwise.clock import utcnow
from chipwise.economics import parse_day, parse_utc, usd
from chipwise.errors import ChipwiseError, InvalidInput, NotFound
from chipwise.models.common import is_account_id
from chipwise.models.findings import FindingDocument
from chipwise.models.resources import split_key
from chipwise.pipeline.apply import RemediationOutcome, apply_finding, cli_operator
from chipwise.pipeline.evaluate import evaluate_account
from chipwise.pipeline.policy import load_policy
from chipwise.pipeline.rollback import rollback_finding
from chipwise.presentation import (
    benchmark_verdict,
    best_saving,
    console_url,
    headline,
    ledger,
    ledger_fields,
    ledger_row,
    next_step,
    owner_label,
    plural,
    ranked,
    short_id,
)
from chipwise.presentation import suppress_command as suppress_hint
from chipwise.report.ledger_csv import write_csv
from chipwise.rules import registry
from chipwise.rules.policy import Policy
from chipwise.rules.registry import rule_title
from chipwise.store import Session
from chipwise.store.repositories.accounts import AccountRepository
from chipwise.store.repositories.findings import FindingRepository, finding_document
from chipwise.store.repositories.inventory import ResourceRepository
from chipwise.store.repositories.realised import RealisedSavingRepository
from chipwise.store.repositories.remediations import RemediationRepository

STATUSES = ("open", "suppressed", "resolved", "withdrawn")
CONFIDENCE_COLOUR = {"high": "green", "medium": "yellow", "low": "red"}

findings_app = typer.Typer(
    help="Findings: where accelerator money leaks, how much, how sure, and what to do.",
    invoke_without_command=True,
    no_args_is_help=False,
)


def _statuses(status: str) -> tuple[str, ...]:
    if status == "all":
        return STATUSES
    if status not in STATUSES:
        raise InvalidInput(f"--status must be one of {', '.join((*STATUSES, 'all'))}, not {status!r}")
    return (status,)


FORMATS = ("table", "json", "csv")


def check_filters(rules: list[str] | None, region: str | None, account: str | None, output: str) -> None:
    """Unknown filter values are errors (rather than a silently empty list)."""
    if output not in FORMATS:
        raise InvalidInput(f"--format must be one of {', '.join(FORMATS)}, not {output!r}")
    known = set(registry().ids())
    for rule_id in rules or ():
        if rule_id not in known:
            raise InvalidInput(f"unknown rule {rule_id!r}: `chipwise rules` lists the {len(known)} rule ids")
    if account is not None and not is_account_id(account):
        raise InvalidInput(f"--account {account!r} is not a 12-digit AWS account id")
    if region is not None and region not in known_regions():
        raise InvalidInput(f"--region {region!r} is not an AWS region (e.g. us-east-1)")


def known_regions() -> set[str]:
    """Every region botocore knows, in every partition (no network)."""
    import boto3

    session = boto3.session.Session()
    regions: set[str] = set()
    for partition in session.get_available_partitions():
        regions.update(session.get_available_regions("ec2", partition_name=partition))
    return regions


@findings_app.callback()
def findings_command(
    ctx: typer.Context,
    json_output: bool = typer.Option(False, "--json", help="Print the findings (JSON documents) on stdout."),
    output: str = typer.Option("table", "--format", help="table, json or csv (csv: one row per finding)."),
    min_savings: float | None = typer.Option(
        None, "--min-savings", min=0, help="Only findings saving at least this many USD a month."
    ),
    status: str = typer.Option("open", "--status", help="open, suppressed, resolved, withdrawn or all."),
    account: str | None = typer.Option(None, "--account", help="Only this account (12 digits)."),
    region: str | None = typer.Option(None, "--region", help="Only this region."),
    rule: list[str] | None = typer.Option(
        None, "--rule", metavar="RULE_ID", help="Only this rule id; repeat for several."
    ),
) -> None:
    """List findings, largest monthly saving first."""
    if ctx.invoked_subcommand is not None:
        return
    check_filters(rule, region, account, output)
    statuses = _statuses(status)
    with store_session() as session:
        if account is not None:
            check_account(session, account)
        rows = FindingRepository(session).find(
            account_id=account,
            region=region,
            statuses=statuses,
            min_savings=Decimal(str(min_savings)) if min_savings is not None else None,
            rule_ids=rule or None,
        )
        figures = ledger(finding_document(row) for row in rows)
        documents = [r.document for r in figures.rows]
        owners = {
            key: owner_label(tags)
            for key, tags in ResourceRepository(session).tags_by_key(d.resource_id for d in documents).items()
        }
        total = len(documents) or FindingRepository(session).count()
    if json_output or output == "json":
        print_json(
            [
                {**r.document.model_dump(mode="json"), **ledger_fields(r, owners.get(r.document.resource_id, ""))}
                for r in figures.rows
            ]
        )
        return
    if output == "csv":
        write_csv(figures, sys.stdout, owners)
        return
    out.print(findings_table(documents, title=f"{plural(len(documents), f'{status} finding')}"))
    if not documents and total == 0:
        err.print(empty_store_hint(settings().database_url), highlight=False, markup=False, soft_wrap=True)


def check_account(session: Session, account: str) -> None:
    """An account the store does not know is an error naming the ones it does (not a silently empty list)."""
    known = AccountRepository(session).known_ids()
    if account not in known:
        held = f"it holds {', '.join(known)}" if known else "it holds no account yet: run `chipwise scan` first"
        raise NotFound(f"no account {account} in the store: {held}")


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


def findings_table(documents: list[FindingDocument], title: str) -> Table:
    """The findings as a table, in the order given (shared with the demo); fits an 80-column terminal."""
    table = Table(title=title, title_justify="left")
    table.add_column("id", no_wrap=True)
    table.add_column("resource · rule · now", ratio=3, overflow="fold")
    table.add_column("saving / month", justify="right", no_wrap=True)
    table.add_column("next step", ratio=2, overflow="fold")
    table.add_column("confidence · worth", ratio=2)
    for d in documents:
        table.add_row(*finding_cells(d))
    if documents:
        table.caption = f"savings: {headline(documents).sentence()}"
    return table


def _saving_cell(d: FindingDocument) -> str:
    row = ledger_row(d)
    apart = "" if row.counted else f"\n[yellow]not counted: {escape(row.verdict)}[/]"
    if d.measured_monthly_savings_usd is None:
        return f"[bold]{usd(d.estimated_monthly_savings_usd)}[/]\n[dim]of {usd(d.monthly_cost_usd)}[/]{apart}"
    verdict = benchmark_verdict(d)
    label = "[red]withdrawn[/]" if verdict == "withdrawn" else "[green]measured[/]"
    return (
        f"[bold]{usd(d.measured_monthly_savings_usd)}[/] {label}\n"
        f"[dim]est. {usd(d.estimated_monthly_savings_usd)} of {usd(d.monthly_cost_usd)}[/]{apart}"
    )


def finding_cells(d: FindingDocument) -> list[str]:
    """One row: a row not counted says why and shows no next step, confidence or break-even it no longer has."""
    row = ledger_row(d)
    now = f"{d.instance_count} × {d.instance_type}" if d.instance_type else "-"
    if not row.actionable:
        step, judged = f"— ({escape(row.verdict)})", f"[dim]{row.group_words}[/]"
    else:
        worth = f"{row.group_words}, 12-mo net {usd(row.net_value_12m_usd, 0)}"
        payback = "" if row.payback_months is None else f", payback {row.payback_months} mo"
        step = next_step(d)
        judged = f"[{CONFIDENCE_COLOUR[d.confidence]}]{d.confidence}[/]\n[dim]{worth}{payback}[/]"
    return [
        short_id(d.finding_id),
        f"[bold]{escape(d.resource_name)}[/]\n[dim]{rule_title(d.rule_id)}\n{now}[/]",
        _saving_cell(d),
        step,
        judged,
    ]


@findings_app.command("show")
def show_command(
    finding_id: str = typer.Argument(..., help="The finding id (or at least six of its first characters)."),
    json_output: bool = typer.Option(False, "--json", help="Print the finding and its history as JSON."),
) -> None:
    """One finding: its summary, evidence and the history of its recommendation."""
    with store_session() as session:
        repository = FindingRepository(session)
        row = repository.get(finding_id)
        document = finding_document(row)
        history = [
            {
                "at": h.created_at.isoformat(),
                "source": h.source,
                "action": h.action,
                "target": h.target_instance_type,
                "count": h.target_count,
                "monthly_savings_usd": None if h.monthly_savings_usd is None else f"{h.monthly_savings_usd:.2f}",
                "confidence": h.confidence,
                "withdrawn": h.withdrawn,
            }
            for h in repository.history(row.id)
        ]
        suppression = {"until": row.suppressed_until, "reason": row.suppress_reason}
        audit = [
            {
                "at": a.created_at.isoformat(),
                "event": a.event,
                "action": a.action,
                "status": a.status,
                "who": f"{a.actor} ({a.source})",
                "calls": [f"{c['service']}.{c['operation']}" for c in a.calls],
                "result": a.result,
            }
            for a in RemediationRepository(session).for_finding(row.id)
        ]
    link = console_url(document.resource_id, document.region, document.resource_kind, document.resource_name)
    if json_output:
        print_json(
            {
                **document.model_dump(mode="json"),
                "console_url": link,
                "suppress_command": suppress_hint(document.finding_id),
                "suppression": suppression,
                "history": history,
                "audit": audit,
            }
        )
        return
    print_finding(document, suppression, link)
    trail = Table(
        "at", "source", "action", "target", "saving/month", "confidence", title="history", title_justify="left"
    )
    for h in history:
        target = f"{h['count']} × {h['target']}" if h["target"] else "-"
        saving = "-" if h["monthly_savings_usd"] is None else usd(Decimal(str(h["monthly_savings_usd"])))
        trail.add_row(str(h["at"]), str(h["source"]), str(h["action"]), target, saving, str(h["confidence"]))
    out.print(trail)
    if audit:
        table = Table("at", "event", "status", "who", "calls", "result", title="audit", title_justify="left")
        for a in audit:
            table.add_row(
                str(a["at"]),
                f"{a['event']} {a['action']}",
                str(a["status"]),
                Text(str(a["who"])),
                Text(", ".join(a["calls"]) or "-"),
                Text(str(a["result"])),
            )
        out.print(table)


def print_finding(document: FindingDocument, suppression: dict[str, Any], link: str) -> None:
    """One finding as a person acts on it: where it is, what it costs, how to hide it, and its evidence."""
    d = document
    out.print(Text.assemble((rule_title(d.rule_id), "bold"), " on ", d.resource_name, f" ({d.finding_id})"))
    out.print(Text(d.summary))
    facts = Table(show_header=False, box=None, pad_edge=False)
    facts.add_column("field", style="dim", no_wrap=True)
    facts.add_column("value", overflow="fold")
    until = suppression.get("until")
    suppressed = (
        f"until {until:%Y-%m-%d %H:%M} UTC: {suppression.get('reason') or ''}".rstrip(": ")
        if isinstance(until, datetime)
        else "no"
    )
    saving = usd(best_saving(d)) + (" measured" if d.measured_monthly_savings_usd is not None else " estimated")
    rows = [
        ("resource (ARN)", d.resource_arn or split_key(d.resource_id)[0]),
        *([("variant", d.variant)] if d.variant else []),
        ("account", d.account_id),
        ("region", d.region),
        ("status", d.status),
        ("suppressed", suppressed),
        ("costs / month", usd(d.monthly_cost_usd)),
        ("saving / month", saving),
        ("next step", next_step(d)),
        ("confidence · effort", f"{d.confidence} · {d.effort}"),
        ("first · last seen", f"{d.first_seen:%Y-%m-%d %H:%M} · {d.last_seen:%Y-%m-%d %H:%M} UTC"),
        ("console", link),
        ("suppress", suppress_hint(d.finding_id)),
    ]
    for key, value in rows:
        facts.add_row(key, Text(value))
    out.print(facts)
    evidence = Table("evidence", "value", title="evidence", title_justify="left")
    evidence.columns[1].overflow = "fold"
    for key, value in flatten_evidence(d.evidence):
        evidence.add_row(Text(key), Text(value))
    out.print(evidence)


def flatten_evidence(evidence: dict[str, Any], prefix: str = "") -> list[tuple[str, str]]:
    """Evidence as (key, value) rows: nested mappings become dotted keys, lists are joined, None is "-"."""
    rows: list[tuple[str, str]] = []
    for key, value in evidence.items():
        name = f"{prefix}{key}"
        if isinstance(value, dict):
            rows += flatten_evidence(value, prefix=f"{name}.") if value else [(name, "-")]
        elif isinstance(value, list | tuple):
            if value and all(isinstance(v, dict) for v in value):
                for index, item in enumerate(value):
                    rows += flatten_evidence(item, prefix=f"{name}[{index}].")
            else:
                rows.append((name, ", ".join(_show(v) for v in value) or "-"))
        else:
            rows.append((name, "-" if value is None else _show(value)))
    return rows


_HAS_ZONE = re.compile(r"([+-]\d\d:?\d\d|[zZ])\s*$")


def parse_until(value: str) -> datetime:
    """``2026-12-31`` (suppressed through that day, UTC) or an ISO time with a zone."""
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


@findings_app.command("realised")
def realised_command(
    account: str | None = typer.Option(None, "--account", help="Only this AWS account (12 digits)."),
    json_output: bool = typer.Option(False, "--json", help="Print the measured fixes as JSON."),
) -> None:
    """What resolved findings really saved: each fix measured in Cost Explorer (the usage type's daily cost before
    against after the change), next to its estimate, and each rule's accuracy."""
    if account is not None and not is_account_id(account):
        raise InvalidInput(f"--account {account!r} is not a 12-digit AWS account id")
    with store_session() as session:
        repository = RealisedSavingRepository(session)
        rows = repository.listed(account)
        rules = repository.by_rule(account)
        fixes: list[dict[str, Any]] = [
            {
                "finding_id": r.finding_id,
                "resource": r.resource_name,
                "rule": r.rule_id,
                "cause": r.cause,
                "status": r.status,
                "estimated_monthly_usd": r.estimated_monthly_savings_usd,
                "realised_monthly_usd": r.realised_monthly_savings_usd,
                "days_before": r.before_days,
                "days_after": r.after_days,
                "resolved_at": r.resolved_at,
            }
            for r in rows
        ]
    if json_output:
        print_json(fixes)
        return
    if not fixes:
        out.print("no resolved finding has been measured yet: a fix is measured after the scan that resolves it")
        return
    table = Table("finding", "resource · rule", "cause", "estimated / month", "realised / month", "days before · after")
    for f in fixes:
        realised = f["realised_monthly_usd"]
        table.add_row(
            short_id(str(f["finding_id"])),
            f"{f['resource']}\n{f['rule']}",
            str(f["cause"]),
            usd(f["estimated_monthly_usd"]),
            "pending" if realised is None else usd(realised),
            f"{f['days_before']} · {f['days_after']}",
        )
    out.print(table)
    measured = sum((r.realised_monthly_usd for r in rules), Decimal(0))
    out.print(f"realised to date: {usd(measured)} a month")
    for r in rules:
        ratio = "" if r.accuracy is None else f", {r.accuracy:.0%} of the estimate"
        out.print(f"  {rule_title(r.rule_id)}: {r.measured} measured, {r.pending} pending{ratio}")


@findings_app.command("suppress")
def suppress_command(
    finding_id: str = typer.Argument(..., help="The finding id (or at least six of its first characters)."),
    until: str = typer.Option(..., "--until", help="Suppress through this date (YYYY-MM-DD, UTC)."),
    reason: str = typer.Option(..., "--reason", help="Why (kept with the finding)."),
) -> None:
    """Hide a finding until a date; after it, the next scan reopens it if the condition still holds."""
    with store_session() as session:
        finding = FindingRepository(session).suppress(finding_id, until=parse_until(until), reason=reason, now=utcnow())
        label = f"{rule_title(finding.rule_id)} on {finding.resource_name}"
        ends = finding.suppressed_until
    out.print(f"suppressed {label} {until_words(until, ends)}", highlight=False)


def until_words(typed: str, ends: datetime | None) -> str:
    """The end of a suppression as the user gave it: a date is the last day hidden ("through 2026-12-31, UTC"),
    not the instant after it; a time is shown as stored."""
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
    url = store_url()
    _report(rollback_finding(finding_id, actor=cli_operator(), source="cli", database_url=url, now=utcnow()))


def _report(outcome: RemediationOutcome) -> None:
    """Print what was (or would be) done; a refusal or failure is one line on stderr and exit 1 (it is stored)."""
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


@findings_app.command("evaluate")
def evaluate_command(
    account: str | None = typer.Option(
        None, "--account", help="Account whose stored data to evaluate (default: every account in the store)."
    ),
    region: str | None = typer.Option(None, "--region", help="Region (default: the home region)."),
    config: Path | None = typer.Option(None, "--config", help="Policy file with [rules.<rule_id>] thresholds."),
    json_output: bool = typer.Option(False, "--json", help="Print the open findings (JSON) on stdout."),
) -> None:
    """Run the rules again on what the store holds (no AWS calls): try a policy without rescanning."""
    if account is not None and not is_account_id(account):
        raise InvalidInput(f"--account {account!r} is not a 12-digit AWS account id")
    policy = load_policy(config)
    documents: list[FindingDocument] = []
    with store_session() as session:
        if account is not None:
            check_account(session, account)
        accounts = [account] if account is not None else AccountRepository(session).known_ids()
        if not accounts:
            raise NotFound("the store holds no account yet: run `chipwise scan` (or `make demo`) first")
        for account_id in accounts:
            documents += evaluate_account(
                session, account_id=account_id, region=region or settings().region, now=utcnow(), policy=policy
            )
    documents = ranked(documents)
    if json_output:
        print_json([d.model_dump(mode="json") for d in documents])
        return
    scope = f"account {accounts[0]}" if len(accounts) == 1 else plural(len(accounts), "account")
    out.print(findings_table(documents, title=f"{plural(len(documents), 'open finding')} for {scope}"))


def rules_command(
    config: Path | None = typer.Option(None, "--config", help="Policy file with [rules.<rule_id>] thresholds."),
    json_output: bool = typer.Option(False, "--json", help="Print the registry (JSON) on stdout."),
) -> None:
    """The rules Chipwise runs, with their thresholds (defaults, or as the policy overrides them)."""
    policy = load_policy(config)
    described = describe_rules(policy)
    if json_output:
        print_json(described)
        return
    table = Table(title=f"{len(described)} rules", title_justify="left", show_lines=True)
    table.add_column("rule", no_wrap=True)
    table.add_column("severity", no_wrap=True)
    table.add_column("what it finds", ratio=1)
    table.add_column("thresholds", ratio=1, overflow="fold")
    for item in described:
        thresholds = "\n".join(
            f"{'[bold]' if key in item['overridden'] else ''}{key} = {_show(value)}"
            f"{' (policy)[/]' if key in item['overridden'] else ''}"
            for key, value in item["params"].items()
        )
        state = "" if item["params"]["enabled"] else " [dim](disabled)[/]"
        table.add_row(
            f"{item['id']}{state}", item["severity"], f"{item['title']}\n[dim]{item['rationale']}[/]", thresholds
        )
    out.print(table)
    if policy.overrides():
        err.print("[dim]bold thresholds come from the policy; the others are defaults[/]")


def describe_rules(policy: Policy) -> list[dict[str, Any]]:
    """Every registered rule: metadata, current thresholds, which ones the policy overrides, and what each means."""
    overrides = policy.overrides()
    described = []
    for cls in registry().all():
        params = policy.params(cls.meta.id).model_dump(mode="json")
        fields = cls.params_model.model_fields
        described.append(
            {
                **cls.meta.model_dump(mode="json"),
                "params": params,
                "defaults": cls.params_model().model_dump(mode="json"),
                "descriptions": {name: fields[name].description for name in params},
                "overridden": sorted(overrides.get(cls.meta.id, {})),
            }
        )
    return described


def _show(value: Any) -> str:
    if isinstance(value, list | tuple):
        return ", ".join(str(v) for v in value)
    return str(value)


def register(app: typer.Typer) -> None:
    app.add_typer(findings_app, name="findings")
    app.command("rules")(rules_command)
