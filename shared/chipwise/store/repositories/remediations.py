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

from sqlalchemy import delete, select, update
from sqlalchemy.dialects import postgresql, sqlite

from chipwise.errors import InvalidInput
from chipwise.store.repositories.findings import FindingRecord
from chipwise.store.repositories.records import Repository, record_of, values_of
from chipwise.store.tables import Finding, OutboxMessage, Remediation, RemediationInFlight

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


@dataclass(frozen=True, slots=True)
class RemediationRecord:
    """One recorded event on a finding (:mod:`chipwise.store.tables.remediations` says what each column holds)."""

    id: str
    finding_id: str
    rule_id: str
    account_id: str
    region: str
    resource_arn: str
    event: str  # apply|refusal|rollback|dismissal
    action: str
    status: str  # applied|refused|failed|rolled_back|recorded
    actor: str
    source: str  # cli|slack
    calls: list[Any]
    undo: list[Any]
    before: dict[str, Any]
    result: str
    reverts_id: str | None
    rolled_back_at: datetime | None
    created_at: datetime


def _record(row: Remediation) -> RemediationRecord:
    return record_of(RemediationRecord, row)


@dataclass(frozen=True)
class InFlight:
    """Who holds a finding (applying or rolling it back) and since when."""

    finding_id: str
    operation: str  # apply|rollback
    actor: str
    source: str
    started_at: datetime

    def describe(self) -> str:
        doing = "applied" if self.operation == "apply" else "rolled back"
        return f"being {doing} by {self.actor} ({self.source}) since {self.started_at:%Y-%m-%d %H:%M:%S} UTC"


class FindingBusy(InvalidInput):
    """Another caller holds the finding: the message says who and since when."""

    def __init__(self, finding_id: str, holder: InFlight | None) -> None:
        self.holder = holder
        said = holder.describe() if holder else "being applied or rolled back by another caller (just finished)"
        super().__init__(f"finding {finding_id[:8]} is {said}: try again when it is done")


class RemediationRepository(Repository):
    # --- one apply or rollback at a time ------------------------------------------------------------------------

    def claim(
        self, finding_id: str, operation: str, actor: str, source: str, now: datetime, *, stale_before: datetime
    ) -> InFlight:
        """Take the finding for an apply or a rollback: its in-flight record inserted (the primary key admits one, on
        both databases; a second insert waits for the first one's transaction and then finds it). The caller commits,
        so the record is seen by every other caller until :meth:`release` (in the transaction that writes the audit
        row, which holds the finding's row lock: :meth:`hold`). A record from before ``stale_before`` is a caller
        that died half-way: it is taken over. Raises :class:`FindingBusy` naming the holder."""
        self.session.execute(
            delete(RemediationInFlight).where(
                RemediationInFlight.finding_id == finding_id, RemediationInFlight.started_at < stale_before
            )
        )
        insert = postgresql.insert if self._dialect() == "postgresql" else sqlite.insert
        values = {"finding_id": finding_id, "operation": operation, "actor": actor, "source": source}
        stmt = (
            insert(RemediationInFlight)
            .values(**values, started_at=now)
            .on_conflict_do_nothing(index_elements=["finding_id"])
            .returning(RemediationInFlight.finding_id)
        )
        if self.session.execute(stmt).first() is None:  # another caller's record stands
            raise FindingBusy(finding_id, self.in_flight(finding_id))
        return InFlight(finding_id, operation, actor, source, now)

    def hold(self, finding_id: str) -> None:
        """Lock the finding for the rest of the transaction: the checks, the calls and the audit row run under it.
        PostgreSQL: its row ``FOR UPDATE``. SQLite: the transaction starts as the writer (a write to the in-flight
        record), so the audit row after the calls can never lose to another writer's newer snapshot."""
        if self._dialect() == "postgresql":
            self.session.execute(select(Finding.id).where(Finding.id == finding_id).with_for_update())
            return
        self.session.execute(
            update(RemediationInFlight)
            .where(RemediationInFlight.finding_id == finding_id)
            .values(started_at=RemediationInFlight.started_at)
        )

    def in_flight(self, finding_id: str) -> InFlight | None:
        row = self.session.get(RemediationInFlight, finding_id, populate_existing=True)
        if row is None:
            return None
        return InFlight(row.finding_id, row.operation, row.actor, row.source, row.started_at)

    def release(self, finding_id: str) -> None:
        """End the hold on the finding (in the transaction that records what was done)."""
        self.session.execute(delete(RemediationInFlight).where(RemediationInFlight.finding_id == finding_id))

    def _dialect(self) -> str:
        return self.session.get_bind().dialect.name

    def record(self, finding: FindingRecord, event: RemediationEvent, now: datetime) -> RemediationRecord:
        """The event on the finding as an audit row (the finding's place and resource copied: the row outlives
        any change to the finding)."""
        where = {name: getattr(finding, name) for name in ("rule_id", "account_id", "region", "resource_arn")}
        what = values_of(event) | {
            "calls": list(event.calls),
            "undo": list(event.undo),
            "before": dict(event.before or {}),
        }
        row = Remediation(
            id=str(uuid.uuid4()), finding_id=finding.id, **where, **what, rolled_back_at=None, created_at=now
        )
        self.session.add(row)
        self.session.flush()
        return _record(row)

    def live_apply(self, finding_id: str) -> RemediationRecord | None:
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
        row = self.session.scalars(stmt).first()
        return None if row is None else _record(row)

    def mark_rolled_back(self, remediation_id: str, now: datetime) -> None:
        """The apply ``remediation_id`` was undone at ``now`` (it is no longer in force)."""
        row = self.session.get(Remediation, remediation_id)
        if row is None:  # pragma: no cover - an apply is rolled back only after it was read
            raise LookupError(f"no remediation {remediation_id}")
        row.rolled_back_at = now
        self.session.flush()

    def for_finding(self, finding_id: str) -> list[RemediationRecord]:
        stmt = (
            select(Remediation)
            .where(Remediation.finding_id == finding_id)
            .order_by(Remediation.created_at, Remediation.id)
        )
        return [_record(row) for row in self.session.scalars(stmt)]

    def since(self, start: datetime, account_id: str | None = None) -> list[RemediationRecord]:
        """Every event from ``start`` on (for the digest's audit and the rules' alert precision)."""
        stmt = select(Remediation).where(Remediation.created_at >= start)
        if account_id is not None:
            stmt = stmt.where(Remediation.account_id == account_id)
        return [_record(row) for row in self.session.scalars(stmt.order_by(Remediation.created_at, Remediation.id))]

    def alert_precision(self, since: datetime, account_id: str | None = None) -> list[RulePrecision]:
        """Per rule, what became of the findings alerted since ``since`` (an alert's outbox key is
        ``alert:<finding id>:…``). A finding both applied and later suppressed counts as acted on."""
        stmt = select(OutboxMessage.dedupe_key).where(OutboxMessage.kind == "alert", OutboxMessage.created_at >= since)
        if account_id is not None:
            stmt = stmt.where(OutboxMessage.account_id == account_id)
        alerted = {key.split(":", 2)[1] for key in self.session.scalars(stmt) if key.count(":") >= 2}
        if not alerted:
            return []
        findings = self.session.execute(
            select(Finding.id, Finding.rule_id, Finding.status).where(Finding.id.in_(alerted))
        )
        events = self.session.execute(
            select(Remediation.finding_id, Remediation.event, Remediation.status).where(
                Remediation.finding_id.in_(alerted), Remediation.created_at >= since
            )
        )
        applied = {f for f, event, status in events if event == APPLY and status == APPLIED}
        dismissed_events = set(
            self.session.scalars(
                select(Remediation.finding_id).where(
                    Remediation.finding_id.in_(alerted), Remediation.event == DISMISSAL, Remediation.created_at >= since
                )
            )
        )
        counts: dict[str, list[int]] = {}
        for finding_id, rule_id, status in findings:
            row = counts.setdefault(rule_id, [0, 0, 0])
            row[0] += 1
            if finding_id in applied or status == "resolved":
                row[1] += 1
            elif finding_id in dismissed_events or status == "suppressed":
                row[2] += 1
        return [RulePrecision(rule, *values) for rule, values in sorted(counts.items())]


# --- alert precision --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class RulePrecision:
    """Of one rule's findings alerted in the window: how many were acted on (applied, or resolved) and how many
    dismissed ("Not waste", or suppressed); ``precision`` is acted / (acted + dismissed), None before any decision."""

    rule_id: str
    alerted: int
    acted: int
    dismissed: int

    @property
    def decided(self) -> int:
        return self.acted + self.dismissed

    @property
    def precision(self) -> float | None:
        return self.acted / self.decided if self.decided else None
