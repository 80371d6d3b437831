"""Intake submissions, their plans and the rate-limit counters of the public form."""

from __future__ import annotations

from collections.abc import Collection, Sequence
from datetime import datetime

from sqlalchemy import delete, select, update
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.orm import Session

from chipwise.store.tables import Draft, IntakeLimit, IntakeSubmission, OutboxMessage, Plan


def recent_plan_for_answers(session: Session, answers_key: str, since: datetime) -> Plan | None:
    """The newest plan of a submission with these answers received at or after ``since``."""
    return session.scalars(
        select(Plan)
        .join(IntakeSubmission, Plan.submission_id == IntakeSubmission.id)
        .where(IntakeSubmission.answers_key == answers_key, IntakeSubmission.received_at >= since)
        .order_by(IntakeSubmission.received_at.desc())
        .limit(1)
    ).first()


def add_submission(session: Session, submission: IntakeSubmission, plan: Plan, draft: Draft | None = None) -> None:
    """A submission with its plan (and the referral draft when asked for), in the caller's transaction."""
    session.add(submission)
    session.flush()  # the plan row refers to the submission
    session.add(plan)
    if draft is not None:
        session.add(draft)


def get_plan(session: Session, plan_id: str) -> Plan | None:
    return session.get(Plan, plan_id)


def get_submission(session: Session, submission_id: str) -> IntakeSubmission | None:
    return session.get(IntakeSubmission, submission_id)


def plan_ids_of(session: Session, submission_id: str) -> list[str]:
    return list(session.scalars(select(Plan.id).where(Plan.submission_id == submission_id)))


def delete_plans(session: Session, plan_ids: Collection[str]) -> None:
    """Plans with their drafts."""
    if plan_ids:
        session.execute(delete(Draft).where(Draft.plan_id.in_(list(plan_ids))))
        session.execute(delete(Plan).where(Plan.id.in_(list(plan_ids))))


def delete_submission(session: Session, submission_id: str, plan_ids: Collection[str]) -> None:
    """The submission with its plans, their drafts and every outbox row made for it (dedupe keys
    ``intake:<submission id>:…``)."""
    delete_plans(session, plan_ids)
    session.execute(delete(OutboxMessage).where(OutboxMessage.dedupe_key.like(f"intake:{submission_id}:%")))
    session.execute(delete(IntakeSubmission).where(IntakeSubmission.id == submission_id))


def expired_submission_ids(session: Session, now: datetime, cutoff: datetime) -> list[str]:
    """Submissions past their expiry, or without one and received at or before ``cutoff``."""
    return list(
        session.execute(
            select(IntakeSubmission.id).where(
                (IntakeSubmission.expires_at <= now)
                | (IntakeSubmission.expires_at.is_(None) & (IntakeSubmission.received_at <= cutoff))
            )
        ).scalars()
    )


def orphan_plan_ids(session: Session, cutoff: datetime) -> list[str]:
    """Plans without a submission made at or before ``cutoff``."""
    return list(session.scalars(select(Plan.id).where(Plan.submission_id.is_(None), Plan.created_at <= cutoff)))


def delete_outbox_before(session: Session, kinds: Sequence[str], cutoff: datetime) -> int:
    """Outbox rows of ``kinds`` created at or before ``cutoff``; how many."""
    result = session.execute(
        delete(OutboxMessage).where(OutboxMessage.kind.in_(list(kinds)), OutboxMessage.created_at <= cutoff)
    )
    return int(getattr(result, "rowcount", 0) or 0)


def delete_limits_before(session: Session, cutoff: datetime) -> int:
    """Rate-limit counters whose window started at or before ``cutoff``; how many."""
    result = session.execute(delete(IntakeLimit).where(IntakeLimit.window_start <= cutoff))
    return int(getattr(result, "rowcount", 0) or 0)


def submissions_with_plans(session: Session, start: datetime, end: datetime) -> list[tuple[IntakeSubmission, Plan]]:
    """Submissions received in [start, end) with their plans, oldest first."""
    return [
        (row[0], row[1])
        for row in session.execute(
            select(IntakeSubmission, Plan)
            .join(Plan, Plan.submission_id == IntakeSubmission.id)
            .where(IntakeSubmission.received_at >= start, IntakeSubmission.received_at < end)
            .order_by(IntakeSubmission.received_at)
        )
    ]


def take_limit(session: Session, scope: str, key: str, window_start: datetime, limit: int) -> bool:
    """Use one of ``limit`` places of the counter (scope, key, window): an insert-if-absent, then one conditional
    ``UPDATE … SET count = count + 1 WHERE count < limit`` (PostgreSQL locks the row and re-checks the condition
    for a waiting transaction, SQLite serialises writers). True when a place was taken."""
    dialect = session.get_bind().dialect.name
    insert = postgresql.insert if dialect == "postgresql" else sqlite.insert
    session.execute(
        insert(IntakeLimit)
        .values(scope=scope, key=key, window_start=window_start, count=0)
        .on_conflict_do_nothing(index_elements=["scope", "key", "window_start"])
    )
    taken = session.execute(
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
