"""``chipwise findings`` (list, show, suppress, evaluate) and ``chipwise rules`` (the registry and its thresholds)."""

from __future__ import annotations

import re
from datetime import UTC, datetime, time, timedelta
from decimal import Decimal
from pathlib import Path
from typing import Any

import typer
from rich.table import Table

from chipwise.cli.common import err, out, print_json, settings, store_session
from chipwise.economics import parse_day, parse_utc
from chipwise.errors import InvalidInput
from chipwise.models.findings import FindingDocument
from chipwise.pipeline.evaluate import evaluate_account
from chipwise.pipeline.policy import load_policy
from chipwise.presentation import benchmark_verdict, headline, next_step, rank, saving_facts
from chipwise.rules import registry
from chipwise.rules.policy import Policy
from chipwise.store.base import utcnow
from chipwise.store.repositories.findings import FindingRepository, finding_document

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


@findings_app.callback()
def findings_command(
    ctx: typer.Context,
    json_output: bool = typer.Option(False, "--json", help="Print the findings (JSON documents) on stdout."),
    min_savings: float | None = typer.Option(
        None, "--min-savings", min=0, help="Only findings saving at least this many USD a month."
    ),
    status: str = typer.Option("open", "--status", help="open, suppressed, resolved or all."),
    account: str | None = typer.Option(None, "--account", help="Only this account."),
    region: str | None = typer.Option(None, "--region", help="Only this region."),
    rule: list[str] | None = typer.Option(None, "--rule", help="Only this rule id; repeat for several."),
) -> None:
    """List findings, largest monthly saving first."""
    if ctx.invoked_subcommand is not None:
        return
    with store_session() as session:
        rows = FindingRepository(session).find(
            account_id=account,
            region=region,
            statuses=_statuses(status),
            min_savings=Decimal(str(min_savings)) if min_savings is not None else None,
            rule_ids=rule or None,
        )
        documents = sorted((finding_document(row) for row in rows), key=lambda d: rank(saving_facts(d)))
    if json_output:
        print_json([d.model_dump(mode="json") for d in documents])
        return
    out.print(findings_table(documents, title=f"{len(documents)} {status} finding(s)"))


def findings_table(documents: list[FindingDocument], title: str) -> Table:
    """The findings as a table, in the order given (shared with the demo); fits an 80-column terminal."""
    table = Table(title=title, title_justify="left")
    table.add_column("id", no_wrap=True)
    table.add_column("resource · rule · now", ratio=3, overflow="fold")
    table.add_column("saving / month", justify="right", no_wrap=True)
    table.add_column("next step", ratio=2, overflow="fold")
    table.add_column("confidence · effort", ratio=2)
    for d in documents:
        table.add_row(*finding_cells(d))
    if documents:
        table.caption = f"savings: {headline(documents).sentence()}"
    return table


def _saving_cell(d: FindingDocument) -> str:
    if d.measured_monthly_savings_usd is None:
        return f"[bold]{d.estimated_monthly_savings_usd:,.2f}[/]\n[dim]of {d.monthly_cost_usd:,.2f}[/]"
    verdict = benchmark_verdict(d)
    label = "[red]withdrawn[/]" if verdict == "withdrawn" else "[green]measured[/]"
    return (
        f"[bold]{d.measured_monthly_savings_usd:,.2f}[/] {label}\n"
        f"[dim]est. {d.estimated_monthly_savings_usd:,.2f} of {d.monthly_cost_usd:,.2f}[/]"
    )


def finding_cells(d: FindingDocument) -> list[str]:
    now = f"{d.instance_count} × {d.instance_type}" if d.instance_type else "-"
    break_even = "" if d.break_even_months is None else f", break-even {d.break_even_months:g} mo"
    return [
        d.finding_id[:8],
        f"[bold]{d.resource_name}[/]\n[dim]{d.rule_id}\n{now}[/]",
        _saving_cell(d),
        next_step(d),
        f"[{CONFIDENCE_COLOUR[d.confidence]}]{d.confidence}[/]\n[dim]{d.effort}{break_even}[/]",
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
    if json_output:
        print_json({**document.model_dump(mode="json"), "suppression": suppression, "history": history})
        return
    out.print(f"[bold]{document.rule_id}[/] on {document.resource_name} ({document.finding_id})", highlight=False)
    out.print(document.summary, highlight=False)
    evidence = Table("evidence", "value", title="evidence", title_justify="left")
    for key, value in document.evidence.items():
        evidence.add_row(key, str(value))
    out.print(evidence)
    trail = Table("at", "source", "action", "target", "saving/month", "confidence", title="history")
    for h in history:
        target = f"{h['count']} × {h['target']}" if h["target"] else "-"
        saving = str(h["monthly_savings_usd"] or "-")
        trail.add_row(str(h["at"]), str(h["source"]), str(h["action"]), target, saving, str(h["confidence"]))
    out.print(trail)


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


@findings_app.command("suppress")
def suppress_command(
    finding_id: str = typer.Argument(..., help="The finding id (or at least six of its first characters)."),
    until: str = typer.Option(..., "--until", help="Suppress through this date (YYYY-MM-DD, UTC)."),
    reason: str = typer.Option(..., "--reason", help="Why (kept with the finding)."),
) -> None:
    """Hide a finding until a date; after it, the next scan reopens it if the condition still holds."""
    with store_session() as session:
        finding = FindingRepository(session).suppress(finding_id, until=parse_until(until), reason=reason, now=utcnow())
        label = f"{finding.rule_id} on {finding.resource_name}"
        ends = finding.suppressed_until
    out.print(f"suppressed {label} until {ends.isoformat() if ends else '?'}", highlight=False)


@findings_app.command("evaluate")
def evaluate_command(
    account: str = typer.Option(..., "--account", help="Account whose stored data to evaluate."),
    region: str | None = typer.Option(None, "--region", help="Region (default: the home region)."),
    config: Path | None = typer.Option(None, "--config", help="Policy file with [rules.<rule_id>] thresholds."),
    json_output: bool = typer.Option(False, "--json", help="Print the open findings (JSON) on stdout."),
) -> None:
    """Run the rules again on what the store holds (no AWS calls): try a policy without rescanning."""
    policy = load_policy(config)
    with store_session() as session:
        documents = evaluate_account(
            session, account_id=account, region=region or settings().region, now=utcnow(), policy=policy
        )
    if json_output:
        print_json([d.model_dump(mode="json") for d in documents])
        return
    out.print(findings_table(documents, title=f"{len(documents)} open finding(s) for {account}"))


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
