"""The last stage: ``findings.json``, ``report.md`` and the headline, written after every stage that can change a
finding (benchmarks confirm or withdraw, notify reads the same totals), so every artifact shows one total.

``report.md`` is the findings report a customer would read: rules by their titles, and no grading against the
demo's own ground truth (that check is the demo's, in ``summary.md``)."""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Mapping, Sequence
from decimal import Decimal

from chipwise.cli._findings_view import findings_table
from chipwise.economics import usd
from chipwise.models.findings import FindingDocument
from chipwise.presentation import Ledger, best_saving, counts_in_totals, ledger, next_step, plural, ranked
from chipwise.rules.registry import rule_title
from chipwise.spend import reconciliation
from chipwise.store import session_scope
from chipwise.store.repositories.accounts import ScanRepository
from chipwise.store.repositories.finding_rows import OPEN, WITHDRAWN
from chipwise.store.repositories.findings import FindingRepository, finding_document
from chipwise.store.repositories.realised import RealisedRecord, RealisedSavingRepository
from chipwise_devkit.demo.runner import DemoContext, Stage


def _findings(ctx: DemoContext) -> list[FindingDocument]:
    with session_scope(ctx.database_url) as session:
        rows = FindingRepository(session).find(account_id=ctx.account_id, region=ctx.region, statuses=(OPEN, WITHDRAWN))
        # the one ranking every surface uses: 12-month net value, measured first at equal value, set-apart last
        return ranked(finding_document(row) for row in rows)


def report(found: Sequence[FindingDocument], figures: Ledger | None = None) -> str:
    """``report.md``: the executive summary, the savings by rule, every finding (ranked by 12-month net value) with
    its next step when it still has one."""
    figures = figures or ledger(found)
    totals = figures.headline
    counted = [d for d in found if counts_in_totals(d)]
    by_rule: dict[str, list[FindingDocument]] = defaultdict(list)
    for d in counted:
        by_rule[d.rule_id].append(d)
    lines = [
        "# Chipwise findings: the demo account",
        "",
        "## Executive summary",
        "",
        *[f"- {line}" for line in figures.executive_summary()],
        "",
        f"Savings: **{totals.sentence()}** (monthly = 730 hours; measured where a benchmark ran).",
        "",
        "## Spend reconciled with the bill",
        "",
        *[f"- {line}" for line in reconciliation(figures.spend)],
        "",
        "| rule | findings | saving / month |",
        "| --- | ---: | ---: |",
    ]
    for rule_id, items in sorted(by_rule.items(), key=lambda kv: -sum(best_saving(d) for d in kv[1])):
        rule_saving = sum((best_saving(d) for d in items), Decimal(0))
        lines.append(f"| {rule_title(rule_id)} | {len(items)} | {usd(rule_saving)} |")
    lines += ["", "## Findings: by 12-month net value (saving × 12 − porting), not counted last", ""]
    lines += ["| resource | rule | now | saving / month | group | next step | confidence | 12-month net | payback |"]
    lines += ["| --- | --- | --- | ---: | --- | --- | --- | ---: | ---: |"]
    for row in figures.rows:
        d = row.document
        saving_cell = usd(best_saving(d)) + (" measured" if d.measured_monthly_savings_usd is not None else "")
        if d.status == "withdrawn":
            saving_cell = "withdrawn by measurement"
        elif not row.counted:
            saving_cell += f" ({row.verdict}, not counted)"
        step, confidence, net, payback = "—", "—", "—", ""
        if row.actionable:
            step, confidence, net = next_step(d), d.confidence, usd(row.net_value_12m_usd, 0)
            payback = "" if row.payback_months is None else f"{row.payback_months} months"
        lines.append(
            f"| {d.resource_name} | {rule_title(d.rule_id)} | {d.instance_count} × {d.instance_type} "
            f"| {saving_cell} | {row.group_words} | {step} | {confidence} | {net} | {payback} |"
        )
    lines += ["", "## Why", ""]
    lines += [f"- **{d.resource_name}** ({rule_title(d.rule_id)}): {d.summary}" for d in found]
    return "\n".join(lines) + "\n"


def grading(scores: Mapping[str, tuple[float, float]]) -> list[str]:
    """The demo's check of its own findings against its ground truth: for ``summary.md``, never the report."""
    lines = ["## The demo's findings against its ground truth", "", "| rule | precision | recall |"]
    lines += ["| --- | ---: | ---: |", *(f"| {rule} | {p:.2f} | {r:.2f} |" for rule, (p, r) in scores.items())]
    return [*lines, ""]


def realised_section(rows: Sequence[RealisedRecord]) -> str:
    """``report.md``'s realised savings: each resolved finding's fix measured from Cost Explorer (before vs after
    the change), and per rule how much of the estimate was realised."""
    if not rows:
        return ""
    lines = ["", "## Realised savings (Cost Explorer, before vs after the fix)", ""]
    lines += ["| resource | rule | what changed | estimated /mo | realised /mo | of the estimate | days before/after |"]
    lines += ["| --- | --- | --- | ---: | ---: | ---: | --- |"]
    for row in rows:
        realised = usd(row.realised_monthly_savings_usd) if row.realised_monthly_savings_usd is not None else "pending"
        ratio = f"{row.accuracy:.0%}" if row.accuracy is not None else ""
        lines.append(
            f"| {row.resource_name} | {rule_title(row.rule_id)} | {row.cause} | "
            f"{usd(row.estimated_monthly_savings_usd)} | "
            f"{realised} | {ratio} | {row.before_days} / {row.after_days} |"
        )
    measured = [r for r in rows if r.realised_monthly_savings_usd is not None]
    total = sum((r.realised_monthly_savings_usd or Decimal(0) for r in measured), Decimal(0))
    lines += [
        "",
        f"Realised to date: {usd(total)}/month from {plural(len(measured), 'measured fix', 'measured fixes')}.",
    ]
    return "\n".join(lines) + "\n"


def _run(ctx: DemoContext) -> None:
    found = _findings(ctx)
    scores: Mapping[str, tuple[float, float]] = ctx.results.get("scores", {})
    ctx.write("findings.json", json.dumps([d.model_dump(mode="json") for d in found], indent=2) + "\n")
    with session_scope(ctx.database_url) as session:
        realised = RealisedSavingRepository(session).listed(ctx.account_id)
        scan = ScanRepository(session).latest_document(ctx.account_id, ctx.region)
        section = realised_section(realised)
        measured = [r for r in realised if r.realised_monthly_savings_usd is not None]
    figures = ledger(found, scan.costs if scan else None, scan.window.hours if scan else 0)
    ctx.write("report.md", report(found, figures) + section)
    # The first table the demo prints: the headline's ledger, after every stage that can change a finding.
    title = f"The headline's findings in {ctx.account_id}: {figures.headline.count_words()}, by 12-month net value"
    ctx.console.print(findings_table(list(found), title=title))
    if scores:
        ctx.results["summary_sections"] = [*ctx.results.get("summary_sections", []), *grading(scores)]
    if measured:
        ctx.summary.append(
            (
                "Realised",
                f"{usd(sum((r.realised_monthly_savings_usd or Decimal(0) for r in measured), Decimal(0)))}/month "
                f"realised by {plural(len(measured), 'fix', 'fixes')} measured in Cost Explorer ("
                + ", ".join(
                    f"{r.resource_name}: {usd(r.realised_monthly_savings_usd or Decimal(0))} of "
                    f"{usd(r.estimated_monthly_savings_usd)} estimated"
                    for r in measured
                )
                + ")",
            )
        )
    ctx.summary.append(("Headline", figures.headline.sentence() + " (findings.json, report.md, digest, Slack, drafts)"))
    ctx.summary.append(("Executive summary", " · ".join(figures.executive_summary())))


STAGE = Stage("Report: one headline after the benchmarks", _run)
