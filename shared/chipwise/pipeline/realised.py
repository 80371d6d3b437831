"""Realised savings after each scan: every finding resolved in the last weeks is measured against the stored Cost
Explorer data (:mod:`chipwise.analyse.realised`) and its figure stored next to the estimate."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

from chipwise.analyse.realised import realised_saving
from chipwise.store import Session
from chipwise.store.repositories.findings import FindingRecord
from chipwise.store.repositories.inventory import ResourceRecord
from chipwise.store.repositories.realised import RealisedSavingRepository
from chipwise.store.repositories.usage import stored_cost_days

DAYS_COMPARED = 14
MIN_DAYS_AFTER = 3
GONE = "gone"


def measure_realised(session: Session, *, account_id: str, region: str, now: datetime) -> int:
    """Measure (or refine) the realised saving of the account's findings resolved in the last 2 × 14 days whose
    resource is gone or was resized; returns how many were written. A finding without an instance type or without
    stored costs before the change is left, and so is one whose rule stopped firing on unchanged capacity."""
    repository = RealisedSavingRepository(session)
    since = now - timedelta(days=2 * DAYS_COMPARED + MIN_DAYS_AFTER)
    rows: list[dict[str, Any]] = []
    for finding, resource in repository.to_measure(account_id, region, since, DAYS_COMPARED):
        if not finding.instance_type or finding.resolved_at is None:
            continue
        last_seen = finding.last_seen.date()
        resolved_on = finding.resolved_at.date()
        start = last_seen - timedelta(days=DAYS_COMPARED)
        end = resolved_on + timedelta(days=DAYS_COMPARED + 1)
        daily = repository.daily_cost(account_id, finding.region, finding.instance_type, start, end)
        known = stored_cost_days(session, account_id, start, min(end, now.date()))
        figure = realised_saving(
            daily,
            known,
            last_seen=last_seen,
            resolved_on=resolved_on,
            estimated_monthly_usd=finding.estimated_monthly_savings_usd,
            days=DAYS_COMPARED,
            min_days_after=MIN_DAYS_AFTER,
        )
        cause = _cause(finding, resource)
        if figure is None or cause == "unchanged":
            continue  # nothing stored to compare with, or no fix: the rule stopped firing on the same capacity
        rows.append(
            {
                "finding_id": finding.id,
                "account_id": account_id,
                "region": finding.region,
                "rule_id": finding.rule_id,
                "resource_name": finding.resource_name,
                "instance_type": finding.instance_type,
                "cause": cause,
                "status": figure.status,
                "estimated_monthly_savings_usd": finding.estimated_monthly_savings_usd,
                "realised_monthly_savings_usd": figure.realised_monthly_usd,
                "accuracy": figure.accuracy,
                "before_daily_usd": figure.before_daily_usd,
                "after_daily_usd": figure.after_daily_usd,
                "before_days": figure.before_days,
                "after_days": figure.after_days,
                "changed_after": last_seen,
                "resolved_at": finding.resolved_at,
                "measured_at": now,
            }
        )
    return repository.save(rows) if rows else 0


def _cause(finding: FindingRecord, resource: ResourceRecord | None) -> str:
    """gone: the resource was deleted or stopped for good; resized: its type or count changed; unchanged: the rule
    no longer fires on the same capacity (its load changed)."""
    if resource is None or resource.state == GONE:
        return "gone"
    if (resource.instance_type or "").lower() != (finding.instance_type or "").lower():
        return "resized"
    if resource.instance_count != finding.instance_count:
        return "resized"
    return "unchanged"
