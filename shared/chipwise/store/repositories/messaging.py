"""The outbox (rendered messages waiting to be sent) and the drafts written for people to review:
:class:`OutboxRepository` returns :class:`OutboxRecord` and offers the verbs of a message's life (``insert``,
``claim``, ``mark_sent``, ``retry_later``, ``mark_failed``, ``requeue_failed``); :class:`DraftRepository` stores
:class:`DraftRecord`."""

from __future__ import annotations

from collections.abc import Collection, Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any, Literal

from sqlalchemy import func, select, update
from sqlalchemy.dialects import postgresql, sqlite

from chipwise.store.repositories.records import Repository, record_of
from chipwise.store.tables import Draft, OutboxMessage
from chipwise.store.upsert import upsert

_KEY_CHUNK = 500


@dataclass(frozen=True, slots=True)
class OutboxRecord:
    """A rendered message waiting to be sent (or sent, or failed); its dedupe key is never sent twice."""

    id: int
    channel: str  # email|slack
    kind: str
    recipient: str
    dedupe_key: str
    subject: str | None
    payload: dict[str, Any]
    status: str  # pending|sent|failed
    attempts: int
    last_error: str | None
    account_id: str | None
    created_at: datetime
    next_attempt_at: datetime
    sent_at: datetime | None


@dataclass(frozen=True, slots=True)
class DraftRecord:
    """A credits application or partner referral, for a person to review and file."""

    id: str
    kind: str
    subject_key: str  # "account:<id>" or "plan:<id>"
    account_id: str | None
    plan_id: str | None
    title: str
    body: str
    document: dict[str, Any]
    created_at: datetime
    updated_at: datetime


def _outbox(row: OutboxMessage | None) -> OutboxRecord | None:
    return None if row is None else record_of(OutboxRecord, row)


class OutboxRepository(Repository):
    def insert(self, values: Mapping[str, Any]) -> OutboxRecord | None:
        """Insert one message unless its ``dedupe_key`` is there already (sent or not): the new one, or None."""
        dialect = self.session.get_bind().dialect.name
        insert = postgresql.insert if dialect == "postgresql" else sqlite.insert
        stmt = (
            insert(OutboxMessage)
            .values(dict(values))
            .on_conflict_do_nothing(index_elements=["dedupe_key"])
            .returning(OutboxMessage.id)
        )
        new_id = self.session.execute(stmt).scalar_one_or_none()
        return None if new_id is None else self.get(new_id)

    def keys(self, keys: Collection[str]) -> set[str]:
        """Which of ``keys`` are already in the outbox."""
        found: set[str] = set()
        ordered = list(keys)
        for start in range(0, len(ordered), _KEY_CHUNK):
            chunk = ordered[start : start + _KEY_CHUNK]
            stmt = select(OutboxMessage.dedupe_key).where(OutboxMessage.dedupe_key.in_(chunk))
            found.update(self.session.scalars(stmt))
        return found

    def has_key(self, key: str) -> bool:
        return self.session.scalar(select(OutboxMessage.id).where(OutboxMessage.dedupe_key == key)) is not None

    def due_ids(
        self, *, now: datetime, channels: Collection[str], limit: int, ids: Collection[int] | None = None
    ) -> list[int]:
        """Pending messages whose time has come, oldest first."""
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
        return list(self.session.scalars(stmt))

    def claim(self, message_id: int, now: datetime, lease: timedelta) -> OutboxRecord | None:
        """Take a due pending message (one more attempt, hidden from other drains for ``lease``): the message, or
        None when another drain took it first."""
        result = self.session.execute(
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
        return self.get(message_id)

    def get(self, message_id: int) -> OutboxRecord | None:
        stmt = select(OutboxMessage).where(OutboxMessage.id == message_id)
        # fresh from the database: a claim updates the row without the session's copy
        return _outbox(self.session.scalars(stmt.execution_options(populate_existing=True)).first())

    def _set(self, message_id: int, **values: Any) -> None:
        stmt = update(OutboxMessage).where(OutboxMessage.id == message_id).values(**values)
        self.session.execute(stmt.execution_options(synchronize_session=False))

    def mark_sent(self, message_id: int, now: datetime) -> None:
        self._set(message_id, status="sent", sent_at=now, last_error=None)

    def mark_failed(self, message_id: int, error: str) -> None:
        """Failed for good (retrying cannot help, or it waited too long): ``chipwise notify retry`` requeues it."""
        self._set(message_id, status="failed", last_error=error)

    def retry_later(self, message_id: int, error: str, next_attempt_at: datetime) -> None:
        self._set(message_id, status="pending", last_error=error, next_attempt_at=next_attempt_at)

    def count_undelivered(self, created_before: datetime) -> int:
        """Pending or failed messages queued before ``created_before``."""
        stmt = select(func.count()).where(
            OutboxMessage.status.in_(["pending", "failed"]), OutboxMessage.created_at < created_before
        )
        return int(self.session.scalar(stmt) or 0)

    def counts(self) -> dict[tuple[str, str], int]:
        """Messages by (channel, status)."""
        rows = self.session.execute(
            select(OutboxMessage.channel, OutboxMessage.status, func.count()).group_by(
                OutboxMessage.channel, OutboxMessage.status
            )
        )
        return {(channel, status): int(n) for channel, status, n in rows}

    def of_status(self, status: str, *, order: Literal["newest", "next_attempt"], limit: int) -> list[OutboxRecord]:
        """Up to ``limit`` messages of one status: the newest first, or the soonest next attempt first."""
        key = OutboxMessage.id.desc() if order == "newest" else OutboxMessage.next_attempt_at
        stmt = select(OutboxMessage).where(OutboxMessage.status == status).order_by(key).limit(limit)
        return [record_of(OutboxRecord, row) for row in self.session.scalars(stmt)]

    def requeue_failed(self, now: datetime, ids: Collection[int] | None = None) -> int:
        """Failed messages (all, or ``ids``) pending again with a fresh set of attempts; how many."""
        stmt = (
            update(OutboxMessage)
            .where(OutboxMessage.status == "failed")
            .values(status="pending", attempts=0, next_attempt_at=now)
            .execution_options(synchronize_session=False)
        )
        if ids is not None:
            stmt = stmt.where(OutboxMessage.id.in_(list(ids)))
        return int(self.session.execute(stmt).rowcount)  # type: ignore[attr-defined]


class DraftRepository(Repository):
    def upsert(self, row: Mapping[str, Any]) -> DraftRecord:
        """Insert or update the draft of ``row["kind"]`` for ``row["subject_key"]`` (its id and created_at are
        kept); the stored draft, fresh from the database."""
        upsert(
            self.session,
            Draft,
            [dict(row)],
            conflict=["kind", "subject_key"],
            update=["account_id", "plan_id", "title", "body", "document", "updated_at"],
        )
        stored = self.session.scalars(
            select(Draft).where(Draft.kind == row["kind"], Draft.subject_key == row["subject_key"])
        ).one()
        self.session.refresh(stored)
        return record_of(DraftRecord, stored)
