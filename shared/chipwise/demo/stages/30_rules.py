"""Stage 3: the findings. The scan already ran the rules; this stage reads the open findings back from the store,
prints them top savings first, checks them against the demo's ground truth (precision and recall per rule) and
writes ``findings.json`` and ``report.md``."""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Mapping, Sequence
from decimal import Decimal

from chipwise.cli.findings import findings_table, next_step
from chipwise.demo.account import ground_truth
from chipwise.demo.runner import DemoContext, Stage
from chipwise.models.findings import FindingDocument
from chipwise.rules import registry
from chipwise.store import session_scope
from chipwise.store.repositories.findings import FindingRepository


def _findings(ctx: DemoContext) -> list[FindingDocument]:
    with session_scope(ctx.database_url) as session:
        rows = FindingRepository(session).find(account_id=ctx.account_id, region=ctx.region)
        return [FindingDocument.from_row(row) for row in rows]


def score(found: Sequence[FindingDocument], truth: Mapping[str, Sequence[str]]) -> dict[str, tuple[float, float]]:
    """Precision and recall per rule id against ``truth`` (resource name -> rule ids that must fire)."""
    expected = {(name, rule) for name, rules in truth.items() for rule in rules}
    fired = {(d.resource_name, d.rule_id) for d in found}
    scores: dict[str, tuple[float, float]] = {}
    for rule_id in registry().ids():
        want = {pair for pair in expected if pair[1] == rule_id}
        got = {pair for pair in fired if pair[1] == rule_id}
        hit = len(want & got)
        scores[rule_id] = (hit / len(got) if got else 1.0, hit / len(want) if want else 1.0)
    return scores


def report(found: Sequence[FindingDocument], scores: Mapping[str, tuple[float, float]]) -> str:
    """``report.md``: the savings by rule, every finding with its next step, and the check against ground truth."""
    total = sum((d.estimated_monthly_savings_usd for d in found), Decimal(0))
    by_rule: dict[str, list[FindingDocument]] = defaultdict(list)
    for d in found:
        by_rule[d.rule_id].append(d)
    lines = [
        "# Chipwise findings: the demo account",
        "",
        f"{len(found)} open findings, **${total:,.2f} a month** of estimated savings (monthly = 730 hours).",
        "",
        "| rule | findings | saving / month |",
        "| --- | ---: | ---: |",
    ]
    for rule_id, items in sorted(by_rule.items(), key=lambda kv: -sum(d.estimated_monthly_savings_usd for d in kv[1])):
        saving = sum((d.estimated_monthly_savings_usd for d in items), Decimal(0))
        lines.append(f"| {rule_id} | {len(items)} | ${saving:,.2f} |")
    lines += ["", "## Findings, top savings first", ""]
    lines += ["| resource | rule | now | saving / month | next step | confidence | effort | break-even |"]
    lines += ["| --- | --- | --- | ---: | --- | --- | --- | ---: |"]
    for d in found:
        step = next_step(d)
        months = "" if d.break_even_months is None else f"{d.break_even_months:g} months"
        lines.append(
            f"| {d.resource_name} | {d.rule_id} | {d.instance_count} × {d.instance_type} "
            f"| ${d.estimated_monthly_savings_usd:,.2f} | {step} | {d.confidence} | {d.effort} | {months} |"
        )
    lines += ["", "## Why", ""]
    lines += [f"- **{d.resource_name}** ({d.rule_id}): {d.summary}" for d in found]
    lines += ["", "## Against the demo's ground truth", "", "| rule | precision | recall |", "| --- | ---: | ---: |"]
    lines += [f"| {rule} | {p:.2f} | {r:.2f} |" for rule, (p, r) in scores.items()]
    return "\n".join(lines) + "\n"


def _run(ctx: DemoContext) -> None:
    found = _findings(ctx)
    scores = score(found, ground_truth())
    ctx.results["findings"] = found
    ctx.console.print(findings_table(found, title=f"{len(found)} findings in {ctx.account_id}, top savings first"))
    ctx.write("findings.json", json.dumps([d.model_dump(mode="json") for d in found], indent=2) + "\n")
    ctx.write("report.md", report(found, scores))
    total = sum((d.estimated_monthly_savings_usd for d in found), Decimal(0))
    perfect = all(p == 1.0 and r == 1.0 for p, r in scores.values())
    top = found[0] if found else None
    ctx.summary.append(
        (
            "Findings",
            f"{len(found)} open, ${total:,.2f}/month estimated savings"
            + (
                f"; top: {top.rule_id} on {top.resource_name} (${top.estimated_monthly_savings_usd:,.2f})"
                if top
                else ""
            )
            + f"; ground truth: {'precision and recall 1.0 for every rule' if perfect else 'MISMATCH, see report.md'}",
        )
    )


STAGE = Stage("Judge the spend: findings with dollars, evidence and a next step", _run)
