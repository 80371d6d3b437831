"""``chipwise findings`` (list, show, suppress, evaluate) and ``chipwise rules`` (the registry and its thresholds)."""

from __future__ import annotations

from datetime import UTC, date, datetime, time, timedelta
from decimal import Decimal
from pathlib import Path
from typing import Any

import typer
from rich.table import Table

from chipwise.cli.common import err, out, print_json, settings, store_session
from chipwise.errors import InvalidInput
from chipwise.models.findings import FindingDocument
from chipwise.rules import evaluate_account, load_policy, registry
from chipwise.rules.policy import Policy
from chipwise.store.base import utcnow
from chipwise.store.repositories.findings import FindingRepository

STATUSES = ("open", "suppressed", "resolved")
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
        documents = [FindingDocument.from_row(row) for row in rows]
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
        total = sum((_best_saving(d) for d in documents), Decimal(0))
        table.caption = f"savings (measured where benchmarked, else estimated): ${total:,.2f} a month"
    return table


def next_step(d: FindingDocument) -> str:
    """``migrate → 2 × inf2.xlarge``, ``migrate → bedrock``, ``stop``."""
    rec = d.recommendation
    if rec.target_instance_type is not None:
        return f"{rec.action} → {rec.target_count or 1} × {rec.target_instance_type}"
    return str(rec.action) + (f" → {rec.target_platform}" if rec.target_platform else "")


def _best_saving(d: FindingDocument) -> Decimal:
    """The measured saving when a benchmark replaced the estimate (0 when it withdrew the recommendation)."""
    return d.estimated_monthly_savings_usd if d.measured_monthly_savings_usd is None else d.measured_monthly_savings_usd


def _saving_cell(d: FindingDocument) -> str:
    if d.measured_monthly_savings_usd is None:
        return f"[bold]{d.estimated_monthly_savings_usd:,.2f}[/]\n[dim]of {d.monthly_cost_usd:,.2f}[/]"
    verdict = (
        (d.evidence.get("benchmark") or {}).get("status") if isinstance(d.evidence.get("benchmark"), dict) else None
    )
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
        document = FindingDocument.from_row(row)
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


def parse_until(value: str) -> datetime:
    """``2026-12-31`` (suppressed through that day, UTC) or an ISO time with a zone."""
    try:
        day = date.fromisoformat(value)
    except ValueError:
        pass
    else:
        return datetime.combine(day + timedelta(days=1), time(0), tzinfo=UTC)
    try:
        moment = datetime.fromisoformat(value)
    except ValueError as exc:
        raise InvalidInput(f"--until {value!r} is not a date (YYYY-MM-DD) or an ISO time") from exc
    if moment.tzinfo is None:
        raise InvalidInput(f"--until {value!r} needs a time zone (or give a date)")
    return moment.astimezone(UTC)


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
