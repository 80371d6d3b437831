"""The outbox (rendered messages waiting to be sent) and the drafts written for people to review."""

from __future__ import annotations

from collections.abc import Collection, Mapping
from datetime import datetime, timedelta
from typing import Any, Literal

from sqlalchemy import func, select, update
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.orm import Session

from chipwise.store.tables import Draft, OutboxMessage
from chipwise.store.upsert import upsert

_KEY_CHUNK = 500


# --- outbox --------------------------------------------------------------------------------------------------


def insert_outbox(session: Session, values: Mapping[str, Any]) -> OutboxMessage | None:
    """Insert one outbox row unless its ``dedupe_key`` is there already (sent or not): the new row, or None."""
    dialect = session.get_bind().dialect.name
    insert = postgresql.insert if dialect == "postgresql" else sqlite.insert
    stmt = (
        insert(OutboxMessage)
        .values(dict(values))
        .on_conflict_do_nothing(index_elements=["dedupe_key"])
        .returning(OutboxMessage.id)
    )
    new_id = session.execute(stmt).scalar_one_or_none()
    return None if new_id is None else session.get(OutboxMessage, new_id)


def outbox_keys(session: Session, keys: Collection[str]) -> set[str]:
    """Which of ``keys`` are already in the outbox."""
    found: set[str] = set()
    ordered = list(keys)
    for start in range(0, len(ordered), _KEY_CHUNK):
        chunk = ordered[start : start + _KEY_CHUNK]
        found.update(session.scalars(select(OutboxMessage.dedupe_key).where(OutboxMessage.dedupe_key.in_(chunk))))
    return found


def outbox_has_key(session: Session, key: str) -> bool:
    return session.scalar(select(OutboxMessage.id).where(OutboxMessage.dedupe_key == key)) is not None


def due_outbox_ids(
    session: Session, *, now: datetime, channels: Collection[str], limit: int, ids: Collection[int] | None = None
) -> list[int]:
    """Pending rows whose time has come, oldest first."""
    stmt = (
        select(OutboxMessage.id)
        .where(
            OutboxMessage.status == "pending",
            OutboxMessage.next_attempt_at <= now,
            OutboxMessage.channel.in_(list(channels)),
        )
        .order_by(OutboxMessage.next_attempt_at, OutboxMessage.id)
        .limit(limit)
    )
    if ids is not None:
        stmt = stmt.where(OutboxMessage.id.in_(list(ids)))
    return list(session.scalars(stmt))


def claim_outbox(session: Session, message_id: int, now: datetime, lease: timedelta) -> OutboxMessage | None:
    """Take a due pending row (one more attempt, hidden from other drains for ``lease``): the row, detached from
    the session, or None when another drain took it first."""
    result = session.execute(
        update(OutboxMessage)
        .where(
            OutboxMessage.id == message_id,
            OutboxMessage.status == "pending",
            OutboxMessage.next_attempt_at <= now,
        )
        .values(attempts=OutboxMessage.attempts + 1, next_attempt_at=now + lease)
        .execution_options(synchronize_session=False)
    )
    if result.rowcount != 1:  # type: ignore[attr-defined]
        return None
    message = session.get(OutboxMessage, message_id)
    if message is not None:
        session.expunge(message)
    return message


def get_outbox(session: Session, message_id: int) -> OutboxMessage | None:
    return session.get(OutboxMessage, message_id)


def count_undelivered(session: Session, created_before: datetime) -> int:
    """Pending or failed rows queued before ``created_before``."""
    stmt = select(func.count()).where(
        OutboxMessage.status.in_(["pending", "failed"]), OutboxMessage.created_at < created_before
    )
    return int(session.scalar(stmt) or 0)


def outbox_counts(session: Session) -> dict[tuple[str, str], int]:
    """Rows by (channel, status)."""
    rows = session.execute(
        select(OutboxMessage.channel, OutboxMessage.status, func.count()).group_by(
            OutboxMessage.channel, OutboxMessage.status
        )
    )
    return {(channel, status): int(n) for channel, status, n in rows}


def outbox_rows(
    session: Session, status: str, *, order: Literal["newest", "next_attempt"], limit: int
) -> list[OutboxMessage]:
    """Up to ``limit`` rows of one status: the newest first, or the soonest next attempt first."""
    key = OutboxMessage.id.desc() if order == "newest" else OutboxMessage.next_attempt_at
    stmt = select(OutboxMessage).where(OutboxMessage.status == status).order_by(key).limit(limit)
    return list(session.scalars(stmt))


def requeue_failed(session: Session, now: datetime, ids: Collection[int] | None = None) -> int:
    """Failed rows (all, or ``ids``) pending again with a fresh set of attempts; how many."""
    stmt = (
        update(OutboxMessage)
        .where(OutboxMessage.status == "failed")
        .values(status="pending", attempts=0, next_attempt_at=now)
        .execution_options(synchronize_session=False)
    )
    if ids is not None:
        stmt = stmt.where(OutboxMessage.id.in_(list(ids)))
    return int(session.execute(stmt).rowcount)  # type: ignore[attr-defined]


# --- drafts --------------------------------------------------------------------------------------------------


def upsert_draft(session: Session, row: Mapping[str, Any]) -> Draft:
    """Insert or update the draft of ``row["kind"]`` for ``row["subject_key"]`` (its id and created_at are kept);
    the stored row, fresh from the database."""
    upsert(
        session,
        Draft,
        [dict(row)],
        conflict=["kind", "subject_key"],
        update=["account_id", "plan_id", "title", "body", "document", "updated_at"],
    )
    stored = session.scalars(
        select(Draft).where(Draft.kind == row["kind"], Draft.subject_key == row["subject_key"])
    ).one()
    session.refresh(stored)
    return stored
