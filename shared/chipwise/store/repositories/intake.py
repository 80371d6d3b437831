"""Intake submissions, their plans and the rate-limit counters of the public form: :class:`IntakeRepository`
returns :class:`SubmissionRecord` and :class:`PlanRecord` and offers the verbs (``add_submission``,
``withhold_mail``, ``confirm``, the deletions of the retention sweep)."""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass
from datetime import datetime
from decimal import Decimal
from typing import Any

from sqlalchemy import delete, select, update
from sqlalchemy.dialects import postgresql, sqlite

from chipwise.store.repositories.messaging import DraftRecord
from chipwise.store.repositories.records import Repository, record_of, values_of
from chipwise.store.tables import Draft, IntakeLimit, IntakeSubmission, OutboxMessage, Plan


@dataclass(frozen=True, slots=True)
class SubmissionRecord:
    """One submission of the public form (its contact data goes with it at the retention sweep)."""

    id: str
    received_at: datetime
    company_name: str
    contact_email: str
    payload: dict[str, Any]
    email_key: str | None
    answers_key: str | None
    link_key: str | None  # the per-submission secret that signs its links
    partner_referral: bool | None
    confirmed_at: datetime | None
    expires_at: datetime | None
    mail_withheld: bool | None


@dataclass(frozen=True, slots=True)
class PlanRecord:
    id: str
    submission_id: str | None
    company: str
    created_at: datetime
    total_monthly_savings_usd: Decimal
    document: dict[str, Any]


class IntakeRepository(Repository):
    def recent_plan_for_answers(self, answers_key: str, since: datetime) -> PlanRecord | None:
        """The newest plan of a submission with these answers received at or after ``since``."""
        row = self.session.scalars(
            select(Plan)
            .join(IntakeSubmission, Plan.submission_id == IntakeSubmission.id)
            .where(IntakeSubmission.answers_key == answers_key, IntakeSubmission.received_at >= since)
            .order_by(IntakeSubmission.received_at.desc())
            .limit(1)
        ).first()
        return None if row is None else record_of(PlanRecord, row)

    def add_submission(self, submission: SubmissionRecord, plan: PlanRecord, draft: DraftRecord | None = None) -> None:
        """A submission with its plan (and the referral draft when asked for), in the caller's transaction."""
        self.session.add(IntakeSubmission(**values_of(submission)))
        self.session.flush()  # the plan row refers to the submission
        self.session.add(Plan(**values_of(plan)))
        if draft is not None:
            self.session.add(Draft(**values_of(draft)))

    def withhold_mail(self, submission_id: str) -> None:
        """Mark the submission's confirmation email as withheld (the day's global cap was reached)."""
        self.session.execute(
            update(IntakeSubmission).where(IntakeSubmission.id == submission_id).values(mail_withheld=True)
        )

    def confirm(self, submission_id: str, when: datetime) -> None:
        """Record that the submission's address was confirmed at ``when``."""
        self.session.execute(
            update(IntakeSubmission).where(IntakeSubmission.id == submission_id).values(confirmed_at=when)
        )

    def get_plan(self, plan_id: str) -> PlanRecord | None:
        row = self.session.get(Plan, plan_id)
        return None if row is None else record_of(PlanRecord, row)

    def get_submission(self, submission_id: str) -> SubmissionRecord | None:
        row = self.session.get(IntakeSubmission, submission_id)
        return None if row is None else record_of(SubmissionRecord, row)

    def plan_ids_of(self, submission_id: str) -> list[str]:
        return list(self.session.scalars(select(Plan.id).where(Plan.submission_id == submission_id)))

    def delete_plans(self, plan_ids: Collection[str]) -> None:
        """Plans with their drafts."""
        if plan_ids:
            self.session.execute(delete(Draft).where(Draft.plan_id.in_(list(plan_ids))))
            self.session.execute(delete(Plan).where(Plan.id.in_(list(plan_ids))))

    def delete_submission(self, submission_id: str, plan_ids: Collection[str]) -> None:
        """The submission with its plans, their drafts and every outbox row made for it (dedupe keys
        ``intake:<submission id>:…``)."""
        self.delete_plans(plan_ids)
        self.session.execute(delete(OutboxMessage).where(OutboxMessage.dedupe_key.like(f"intake:{submission_id}:%")))
        self.session.execute(delete(IntakeSubmission).where(IntakeSubmission.id == submission_id))

    def expired_submission_ids(self, now: datetime, cutoff: datetime) -> list[str]:
        """Submissions past their expiry, or without one and received at or before ``cutoff``."""
        return list(
            self.session.execute(
                select(IntakeSubmission.id).where(
                    (IntakeSubmission.expires_at <= now)
                    | (IntakeSubmission.expires_at.is_(None) & (IntakeSubmission.received_at <= cutoff))
                )
            ).scalars()
        )

    def orphan_plan_ids(self, cutoff: datetime) -> list[str]:
        """Plans without a submission made at or before ``cutoff``."""
        stmt = select(Plan.id).where(Plan.submission_id.is_(None), Plan.created_at <= cutoff)
        return list(self.session.scalars(stmt))

    def delete_outbox_before(self, kinds: Sequence[str], cutoff: datetime) -> int:
        """Outbox rows of ``kinds`` created at or before ``cutoff``; how many."""
        result = self.session.execute(
            delete(OutboxMessage).where(OutboxMessage.kind.in_(list(kinds)), OutboxMessage.created_at <= cutoff)
        )
        return int(getattr(result, "rowcount", 0) or 0)

    def delete_limits_before(self, cutoff: datetime) -> int:
        """Rate-limit counters whose window started at or before ``cutoff``; how many."""
        result = self.session.execute(delete(IntakeLimit).where(IntakeLimit.window_start <= cutoff))
        return int(getattr(result, "rowcount", 0) or 0)

    def submissions_with_plans(self, start: datetime, end: datetime) -> list[tuple[SubmissionRecord, PlanRecord]]:
        """Submissions received in [start, end) with their plans, oldest first."""
        return [
            (record_of(SubmissionRecord, row[0]), record_of(PlanRecord, row[1]))
            for row in self.session.execute(
                select(IntakeSubmission, Plan)
                .join(Plan, Plan.submission_id == IntakeSubmission.id)
                .where(IntakeSubmission.received_at >= start, IntakeSubmission.received_at < end)
                .order_by(IntakeSubmission.received_at)
            )
        ]

    def take_limit(self, scope: str, key: str, window_start: datetime, limit: int) -> bool:
        """Use one of ``limit`` places of the counter (scope, key, window): an insert-if-absent, then one conditional
        ``UPDATE … SET count = count + 1 WHERE count < limit`` (PostgreSQL locks the row and re-checks the condition
        for a waiting transaction, SQLite serialises writers). True when a place was taken."""
        dialect = self.session.get_bind().dialect.name
        insert = postgresql.insert if dialect == "postgresql" else sqlite.insert
        self.session.execute(
            insert(IntakeLimit)
            .values(scope=scope, key=key, window_start=window_start, count=0)
            .on_conflict_do_nothing(index_elements=["scope", "key", "window_start"])
        )
        taken = self.session.execute(
            update(IntakeLimit)
            .where(
                IntakeLimit.scope == scope,
                IntakeLimit.key == key,
                IntakeLimit.window_start == window_start,
                IntakeLimit.count < limit,
            )
            .values(count=IntakeLimit.count + 1)
            .execution_options(synchronize_session=False)
        )
        return getattr(taken, "rowcount", 0) == 1
