"""The rows of the findings lifecycle (:meth:`chipwise.store.repositories.findings.FindingRepository.apply`): what a
draft writes for a new finding or over a stored one, whether the stored row changes at all, and the recommendation
history row of a new or re-priced estimate. Pure functions over drafts and what the store holds."""

from __future__ import annotations

import uuid
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from decimal import Decimal
from typing import Any

from chipwise.models.findings import FindingDraft

OPEN, RESOLVED, SUPPRESSED, WITHDRAWN = "open", "resolved", "suppressed", "withdrawn"
ESTIMATE_SOURCE = "estimate"
BENCHMARK_EVIDENCE_KEY = "benchmark"
DRAFT_FIELDS = (
    "resource_kind",
    "resource_name",
    "instance_type",
    "instance_count",
    "monthly_cost_usd",
    "estimated_monthly_savings_usd",
    "confidence",
    "effort",
    "break_even_months",
    "summary",
)
# What an UPDATE of an existing finding writes besides ``last_seen`` and ``last_scan_id``: when every one of these
# is what the store holds already, only those two are written (one statement for all such findings).
COMPARED = (
    *DRAFT_FIELDS,
    "recommendation",
    "signals_used",
    "signals_missing",
    "evidence",
    "measured_monthly_savings_usd",
    "status",
    "resolved_at",
    "suppressed_until",
    "suppress_reason",
)


@dataclass(frozen=True)
class Existing:
    id: str
    status: str
    suppressed_until: datetime | None
    suppress_reason: str | None
    recommendation: Mapping[str, Any]
    estimated_monthly_savings_usd: Decimal
    measured_monthly_savings_usd: Decimal | None
    confidence: str
    evidence: Mapping[str, Any]
    summary: str
    stored: Mapping[str, Any]  # the columns of COMPARED as the store holds them


def draft_key(draft: FindingDraft) -> tuple[str, str, str]:
    """The (rule_id, resource_arn, resource_variant) a draft's finding is stored under."""
    return (draft.rule_id, draft.resource_arn, draft.resource_variant or "")


def draft_values(draft: FindingDraft) -> dict[str, Any]:
    values = {name: getattr(draft, name) for name in DRAFT_FIELDS}
    values["recommendation"] = draft.recommendation.model_dump(mode="json")
    values["signals_used"] = list(draft.signals_used)
    values["signals_missing"] = list(draft.signals_missing)
    values["evidence"] = draft.evidence.as_json()
    return values


def new_row(draft: FindingDraft, now: datetime, scan_id: str | None) -> dict[str, Any]:
    return {
        "id": str(uuid.uuid4()),
        "account_id": draft.account_id,
        "region": draft.region,
        "rule_id": draft.rule_id,
        "resource_arn": draft.resource_arn,
        "resource_variant": draft.resource_variant or "",
        **draft_values(draft),
        "measured_monthly_savings_usd": None,
        "status": OPEN,
        "first_seen": now,
        "last_seen": now,
        "resolved_at": None,
        "suppressed_until": None,
        "suppress_reason": None,
        "last_scan_id": scan_id,
    }


def updated_row(before: Existing, draft: FindingDraft, now: datetime, scan_id: str | None) -> dict[str, Any]:
    values = draft_values(draft)
    same_target = target_of(before.recommendation) == draft.recommendation.target_instance_type
    measured = before.measured_monthly_savings_usd if same_target else None
    if same_target and BENCHMARK_EVIDENCE_KEY in before.evidence:
        values["evidence"][BENCHMARK_EVIDENCE_KEY] = before.evidence[BENCHMARK_EVIDENCE_KEY]
        if measured is not None:
            values["confidence"] = before.confidence  # the measurement earned it
    until = before.suppressed_until
    still_suppressed = before.status == SUPPRESSED and until is not None and until > now
    # A measurement that withdrew this very recommendation keeps it withdrawn (and its measured summary) while the
    # rules still recommend the same target; a different target is a new recommendation, open again.
    still_withdrawn = before.status == WITHDRAWN and same_target
    benchmark = before.evidence.get(BENCHMARK_EVIDENCE_KEY) if same_target else None
    held = isinstance(benchmark, dict) and benchmark.get("status") == "needs_review"
    if benchmark is not None and (measured is not None or held):
        values["summary"] = before.summary  # the measured sentence, or why the run is held for review
    status = WITHDRAWN if still_withdrawn else SUPPRESSED if still_suppressed else OPEN
    row = {
        "id": before.id,
        **values,
        "measured_monthly_savings_usd": measured,
        "status": status,
        "last_seen": now,
        "resolved_at": None,
        "suppressed_until": before.suppressed_until if still_suppressed else None,
        "suppress_reason": before.suppress_reason if still_suppressed else None,
    }
    if scan_id is not None:
        row["last_scan_id"] = scan_id
    return row


def target_of(recommendation: Mapping[str, Any]) -> str | None:
    value = recommendation.get("target_instance_type")
    return str(value) if value else None


def unchanged(before: Existing, row: Mapping[str, Any]) -> bool:
    """Whether the UPDATE ``row`` would leave every compared column as the store holds it."""
    return all(before.stored[c] == row[c] for c in COMPARED)


def repriced(before: Existing, draft: FindingDraft) -> bool:
    """Whether the estimate changed enough to record: another action or target, or another saving."""
    old = before.recommendation
    new = draft.recommendation
    return (
        old.get("action") != new.action
        or target_of(old) != new.target_instance_type
        or old.get("target_count") != new.target_count
        or before.estimated_monthly_savings_usd != draft.estimated_monthly_savings_usd
    )


def history_row(finding_id: str, draft: FindingDraft, now: datetime) -> dict[str, Any]:
    target_cost = draft.monthly_cost_usd - draft.estimated_monthly_savings_usd
    return {
        "finding_id": finding_id,
        "source": ESTIMATE_SOURCE,
        "action": draft.recommendation.action,
        "target_platform": draft.recommendation.target_platform,
        "target_instance_type": draft.recommendation.target_instance_type,
        "target_count": draft.recommendation.target_count,
        "monthly_cost_usd": max(Decimal(0), target_cost),
        "monthly_savings_usd": draft.estimated_monthly_savings_usd,
        "confidence": draft.confidence,
        "withdrawn": False,
        "reason": draft.summary,
        "benchmark_run_id": None,
        "created_at": now,
    }
