"""Stage 3: the findings. The scan already ran the rules; this stage reads the open findings back from the store
and checks them against the demo's ground truth (precision and recall per rule). It prints no table: the first
table the demo prints is the headline's, after the benchmarks (the report stage).
``findings.json`` and ``report.md`` are written by the last stage, after the benchmarks changed what they had to."""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence

from chipwise.economics import usd
from chipwise.models.findings import FindingDocument
from chipwise.presentation import headline
from chipwise.rules import registry
from chipwise.rules.registry import rule_title
from chipwise.store import session_scope
from chipwise.store.repositories.findings import FindingRepository, finding_document
from chipwise_devkit.demo.account import ground_truth
from chipwise_devkit.demo.runner import DemoContext, Stage


def _findings(ctx: DemoContext) -> list[FindingDocument]:
    with session_scope(ctx.database_url) as session:
        rows = FindingRepository(session).find(account_id=ctx.account_id, region=ctx.region)
        return [finding_document(row) for row in rows]


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


def open_truth(retired: Collection[str]) -> dict[str, list[str]]:
    """The ground truth of the resources still there at today's scan: one retired between the earlier daily scans
    (the scan stage names them) had its finding then, resolved since (its saving is realised, see the report)."""
    return {name: rules for name, rules in ground_truth().items() if name not in retired}


def _run(ctx: DemoContext) -> None:
    found = _findings(ctx)
    scores = score(found, open_truth(ctx.results.get("retired", ())))
    ctx.results["findings"] = found
    ctx.results["scores"] = scores
    # No table here: the first table the demo prints is the headline's, after the benchmarks (the report stage).
    totals = headline(found)
    perfect = all(p == 1.0 and r == 1.0 for p, r in scores.values())
    counted = [f for f in found if f.recommendation.excluded_from_totals is None]  # committed or quoted: set apart
    top = counted[0] if counted else None
    ctx.summary.append(
        (
            "Findings",
            f"{len(found)} open before benchmarks, {usd(totals.estimated_usd)}/month estimated"
            + (
                f"; top: {rule_title(top.rule_id)} on {top.resource_name} ({usd(top.estimated_monthly_savings_usd)})"
                if top
                else ""
            )
            + f"; ground truth: {'precision and recall 1.0 for every rule' if perfect else 'MISMATCH, see below'}",
        )
    )


STAGE = Stage("Judge the spend: findings with dollars, evidence and a next step", _run)
