"""One verdict per resource, from one source: the rules' outcomes on it, settled by its findings as the ledger
counts them (after the benchmarks). ``chipwise resources``, ``chipwise findings explain``, the scan document, the
report and the CSV all read :func:`settle_verdicts`; none words a verdict of its own.

- **waste** only with a counted finding, the reason naming it with its dollars;
- **efficient** when a benchmark withdrew the move (the reason says what it measured), or the rules checked the
  resource and none fired (the reason quotes what they read);
- **cannot judge** when the only outcomes are missing inputs or a "cannot judge" finding (the reason says what
  would let Chipwise judge: the finding's fix, or the missing input);
- **not counted** when every finding is set apart from the totals (a price quote, committed capacity, a measurement
  to review, a move not worth it within 12 months), the reason saying why;
- **out of scope** when no rule judges the resource (CPU, serverless, stopped, an EC2 instance an AWS Batch compute
  environment launched: judged on the environment, which the reason names; or every rule stood aside, with why).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, Literal, cast

from chipwise.economics import usd
from chipwise.models.findings import FindingDocument
from chipwise.models.scan import ScanResource
from chipwise.models.verdicts import VERDICT_WORDS, ResourceVerdict, VerdictKind
from chipwise.presentation import (
    CANNOT_JUDGE,
    CountingFacts,
    LedgerRow,
    action_words,
    benchmark_status,
    exclusion_of,
    is_counted,
    ledger_row,
)

Titles = Callable[[str], str]
SETTLED_STATUSES = ("open", "withdrawn", "suppressed")  # a resolved finding no longer speaks for its resource


def every_verdict(verdicts: Iterable[ResourceVerdict], resources: Sequence[ScanResource]) -> list[ResourceVerdict]:
    """One verdict per inventoried resource: the rules', and out of scope (with why) for a resource no rule was
    run on (CPU capacity is not profiled). Ordered by kind, name, id."""
    found = {v.resource_id: v for v in verdicts}
    for r in resources:
        if r.id not in found:
            cpu = r.platform == "cpu"
            why = f"{r.platform} capacity: not an AI accelerator" if cpu else "not profiled by the rules"
            found[r.id] = ResourceVerdict(
                resource_id=r.id,
                name=r.name,
                kind=r.kind,
                platform=r.platform,
                instance_type=r.instance_type,
                verdict="out_of_scope",
                reason=why,
            )
    return sorted(found.values(), key=lambda v: (v.kind, v.name, v.resource_id))


def settle_verdicts(
    verdicts: Iterable[ResourceVerdict], findings: Iterable[FindingDocument], title: Titles
) -> list[ResourceVerdict]:
    """Each resource's verdict settled by its findings as the ledger counts them (``title`` names a rule)."""
    rows: dict[str, list[LedgerRow]] = defaultdict(list)
    for document in findings:
        if document.status in SETTLED_STATUSES:
            rows[document.resource_id].append(ledger_row(document))
    return [settle(v, rows.get(v.resource_id, []), title) for v in verdicts]


SHOWN_PARTS = 3  # a reason quotes at most this many findings, then says how many more


def _joined(parts: Sequence[str]) -> str:
    more = len(parts) - SHOWN_PARTS
    return "; ".join(parts[:SHOWN_PARTS]) + (f"; and {more} more" if more > 0 else "")


def _money(row: LedgerRow) -> str:
    return f"{usd(row.saving_usd)} a month"


def _measured(document: FindingDocument) -> str:
    benchmark = document.evidence.get("benchmark") or {}
    return str(benchmark.get("reason") or "its measurement showed no saving")


def _fix(document: FindingDocument) -> str:
    evidence = document.evidence
    reason, fix = evidence.get("reason"), evidence.get("fix")
    if reason and fix:
        return f"{reason}; to judge it: {fix}"
    return f"{document.summary.rstrip('.')}; to judge it: {action_words(document.recommendation.action)}"


Settled = tuple[VerdictKind, str, Sequence[LedgerRow]]


SettlingClass = Literal["counted", "withdrawn", "unjudged", "other"]
# The verdict a resource's findings decide: the first of these classes any of them is in (else "not counted").
_DECIDING: tuple[tuple[SettlingClass, VerdictKind], ...] = (
    ("counted", "waste"),
    ("withdrawn", "efficient"),
    ("unjudged", "cannot_judge"),
)


def settling_class(facts: CountingFacts) -> SettlingClass:
    """What one finding says of its resource's verdict: counted (waste), withdrawn by a benchmark (efficient),
    open but unable to judge (cannot judge), or set apart another way (not counted)."""
    return _settling_class(facts.status, exclusion_of(facts), facts.evidence)


def _settling_class(status: str, excluded: str | None, evidence: Mapping[str, Any]) -> SettlingClass:
    """:func:`settling_class` of a finding's status, its exclusion (:func:`exclusion_of`) and its evidence."""
    if is_counted(status, excluded):
        return "counted"
    if status == "withdrawn" or benchmark_status(evidence) == "withdrawn":
        return "withdrawn"
    if status == "open" and excluded == CANNOT_JUDGE:  # the ledger's "cannot judge (an input is missing)"
        return "unjudged"
    return "other"


def kind_of_classes(classes: Iterable[SettlingClass]) -> VerdictKind | None:
    """The verdict findings of these classes decide (None without a finding)."""
    present = set(classes)
    for wanted, kind in _DECIDING:
        if wanted in present:
            return kind
    return "not_counted" if present else None


def deciding_findings(rows: Sequence[LedgerRow]) -> tuple[VerdictKind, Sequence[LedgerRow]] | None:
    """The verdict a resource's findings (its ledger rows) decide and the rows that decide it; None without a
    finding (the rules' outcomes decide). What :func:`verdict_of_findings` words."""
    # the exclusion each row was counted with (not worked out again from its document)
    classes = [_settling_class(r.document.status, r.exclusion, r.document.evidence) for r in rows]
    kind = kind_of_classes(classes)
    if kind is None:
        return None
    wanted = next((c for c, k in _DECIDING if k == kind), None)
    return kind, [r for r, c in zip(rows, classes, strict=True) if wanted is None or c == wanted]


def verdict_of_findings(rows: Sequence[LedgerRow], title: Titles) -> Settled | None:
    """The verdict a resource's findings (its ledger rows) decide, the reason quoting them, and the rows that
    decided it; None without a finding (the rules' outcomes decide)."""
    found = deciding_findings(rows)
    if found is None:
        return None
    kind, chosen = found
    if kind == "waste":
        parts = [f"{title(r.document.rule_id)}: {_money(r)} ({r.basis}, {r.group_words})" for r in chosen]
    elif kind == "efficient":
        parts = [f"a benchmark withdrew {title(r.document.rule_id)}: {_measured(r.document)}" for r in chosen]
    elif kind == "cannot_judge":
        parts = [f"{title(r.document.rule_id)}: {_fix(r.document)}" for r in chosen]
    else:
        parts = [f"{title(r.document.rule_id)}: {_money(r)} not counted: {r.verdict}" for r in chosen]
    return kind, _joined(parts), chosen


def settled_kind(stored: str, classes: Iterable[SettlingClass]) -> VerdictKind:
    """The kind :func:`settle` gives a verdict stored as ``stored`` whose resource's findings are of ``classes``
    (the reason not worded)."""
    kind = kind_of_classes(classes)
    if kind is not None:
        return kind
    return "not_counted" if stored == "waste" else cast(VerdictKind, stored)


def verdicts_by_resource(rows: Iterable[LedgerRow], title: Titles) -> dict[str, Settled]:
    """Each resource's verdict from its findings' ledger rows (the CSV's ``resource_verdict``), by resource id."""
    grouped: dict[str, list[LedgerRow]] = defaultdict(list)
    for row in rows:
        if row.document.status in SETTLED_STATUSES:
            grouped[row.document.resource_id].append(row)
    return {key: found for key, group in grouped.items() if (found := verdict_of_findings(group, title))}


def verdict_words_by_resource(rows: Iterable[LedgerRow], title: Titles) -> dict[str, tuple[str, str]]:
    """:func:`verdicts_by_resource` as the CSV prints it: resource id -> (the verdict in words, why)."""
    return {key: (VERDICT_WORDS[kind], why) for key, (kind, why, _) in verdicts_by_resource(rows, title).items()}


def settle(verdict: ResourceVerdict, rows: Sequence[LedgerRow], title: Titles) -> ResourceVerdict:
    """One resource's verdict from its rule outcomes and its findings' ledger rows."""
    found = verdict_of_findings(rows, title)
    if found is not None:
        kind, reason, chosen = found
        rules = [r.document.rule_id for r in chosen]
        return verdict.model_copy(update={"verdict": kind, "reason": reason, "finding_rules": rules})
    if verdict.verdict == "waste":  # the rules fired but no finding stands any more (resolved since)
        return verdict.model_copy(update={"verdict": "not_counted", "reason": f"{verdict.reason}: no open finding"})
    return verdict
