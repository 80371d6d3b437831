"""The remediation audit: every apply, refusal, rollback and Slack dismissal of a finding, and what alerts earned.

An apply row keeps the calls it made and the calls that undo them (``undo``), so a rollback needs nothing but the
row. A finding has at most one live apply: an ``applied`` row whose ``rolled_back_at`` is empty.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from chipwise.store.tables import Finding, Remediation

APPLY, REFUSAL, ROLLBACK, DISMISSAL = "apply", "refusal", "rollback", "dismissal"
APPLIED, REFUSED, FAILED, ROLLED_BACK, RECORDED = "applied", "refused", "failed", "rolled_back", "recorded"


@dataclass(frozen=True)
class RemediationEvent:
    """What to record: one event on one finding."""

    event: str
    action: str
    status: str
    actor: str
    source: str
    result: str
    calls: Sequence[dict[str, Any]] = ()
    undo: Sequence[dict[str, Any]] = ()
    before: dict[str, Any] | None = None
    reverts_id: str | None = None


class RemediationRepository:
    def __init__(self, session: Session) -> None:
        self.session = session

    def record(self, finding: Finding, event: RemediationEvent, now: datetime) -> Remediation:
        row = Remediation(
            id=str(uuid.uuid4()),
            finding_id=finding.id,
            rule_id=finding.rule_id,
            account_id=finding.account_id,
            region=finding.region,
            resource_arn=finding.resource_arn,
            event=event.event,
            action=event.action,
            status=event.status,
            actor=event.actor,
            source=event.source,
            calls=list(event.calls),
            undo=list(event.undo),
            before=dict(event.before or {}),
            result=event.result,
            reverts_id=event.reverts_id,
            rolled_back_at=None,
            created_at=now,
        )
        self.session.add(row)
        self.session.flush()
        return row

    def live_apply(self, finding_id: str) -> Remediation | None:
        """The finding's apply that is in force (applied and not rolled back), if any."""
        stmt = (
            select(Remediation)
            .where(
                Remediation.finding_id == finding_id,
                Remediation.event == APPLY,
                Remediation.status == APPLIED,
                Remediation.rolled_back_at.is_(None),
            )
            .order_by(Remediation.created_at.desc())
            .limit(1)
        )
        return self.session.scalars(stmt).first()

    def mark_rolled_back(self, row: Remediation, now: datetime) -> None:
        row.rolled_back_at = now
        self.session.flush()

    def for_finding(self, finding_id: str) -> list[Remediation]:
        stmt = (
            select(Remediation)
            .where(Remediation.finding_id == finding_id)
            .order_by(Remediation.created_at, Remediation.id)
        )
        return list(self.session.scalars(stmt))

    def since(self, start: datetime, account_id: str | None = None) -> list[Remediation]:
        """Every event from ``start`` on (for the digest's audit and the rules' alert precision)."""
        stmt = select(Remediation).where(Remediation.created_at >= start)
        if account_id is not None:
            stmt = stmt.where(Remediation.account_id == account_id)
        return list(self.session.scalars(stmt.order_by(Remediation.created_at, Remediation.id)))
