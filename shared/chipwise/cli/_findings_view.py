"""How findings look on the command line: the table (shared with the demo), one finding's facts and evidence, and
the CSV. Imported when a findings command prints, never by ``chipwise --help``."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from rich.markup import escape
from rich.table import Table
from rich.text import Text

from chipwise.cli.common import out
from chipwise.economics import usd
from chipwise.links import short_id
from chipwise.links import suppress_command as suppress_hint
from chipwise.models.findings import FindingDocument
from chipwise.models.resources import split_key
from chipwise.presentation import benchmark_verdict, best_saving, headline, ledger_row, next_step
from chipwise.rules.titles import rule_title

CONFIDENCE_COLOUR = {"high": "green", "medium": "yellow", "low": "red"}


def findings_table(documents: list[FindingDocument], title: str, shown_of: int | None = None) -> Table:
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
        these = "" if shown_of is None or shown_of <= len(documents) else f" of these {len(documents)}"
        table.caption = f"savings{these}: {headline(documents).sentence()}"
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


def _show(value: Any) -> str:
    if isinstance(value, list | tuple):
        return ", ".join(str(v) for v in value)
    return str(value)


def print_history(
    document: FindingDocument,
    suppression: dict[str, Any],
    link: str,
    history: list[dict[str, Any]],
    audit: list[dict[str, Any]],
) -> None:
    """``chipwise findings show``: the finding, the history of its recommendation and its remediation audit."""
    from decimal import Decimal

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
