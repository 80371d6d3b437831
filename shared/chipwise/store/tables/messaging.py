"""The notification outbox and the drafts (credit applications, partner referrals)."""

from datetime import datetime
from typing import Any

from sqlalchemy import Index, String, Text, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column

from chipwise.clock import utcnow
from chipwise.store.base import Base


class OutboxMessage(Base):
    """A rendered message waiting to be sent; the dedupe key is never sent twice."""

    __tablename__ = "notification_outbox"
    __table_args__ = (UniqueConstraint("dedupe_key"), Index("ix_outbox_status_next", "status", "next_attempt_at"))

    id: Mapped[int] = mapped_column(primary_key=True, autoincrement=True)
    channel: Mapped[str] = mapped_column(String(16))  # email|slack
    kind: Mapped[str] = mapped_column(String(24))  # digest|alert|plan|draft
    recipient: Mapped[str] = mapped_column(String(512))
    dedupe_key: Mapped[str] = mapped_column(String(256))
    subject: Mapped[str | None] = mapped_column(String(998))
    payload: Mapped[dict[str, Any]] = mapped_column(default=dict)
    status: Mapped[str] = mapped_column(String(12), default="pending")  # pending|sent|failed
    attempts: Mapped[int] = mapped_column(default=0)
    last_error: Mapped[str | None] = mapped_column(Text)
    account_id: Mapped[str | None] = mapped_column(String(12))
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
    next_attempt_at: Mapped[datetime] = mapped_column(default=utcnow)
    sent_at: Mapped[datetime | None]


class NotifiedScan(Base):
    """A ``ScanCompleted`` whose notifications were decided: a replay of the event (EventBridge delivers at least
    once) decides nothing again and sends nothing new. Written in the transaction that enqueues its messages."""

    __tablename__ = "notified_scans"

    scan_id: Mapped[str] = mapped_column(String(64), primary_key=True)
    account_id: Mapped[str] = mapped_column(String(12))
    notified_at: Mapped[datetime] = mapped_column(default=utcnow)


class Draft(Base):
    """A credits application or partner referral, for human review. Never submitted automatically."""

    __tablename__ = "drafts"
    __table_args__ = (UniqueConstraint("kind", "subject_key"),)

    id: Mapped[str] = mapped_column(String(36), primary_key=True)
    kind: Mapped[str] = mapped_column(String(32))  # credits_application|partner_referral
    subject_key: Mapped[str] = mapped_column(String(256))  # "account:<id>" or "plan:<id>"
    account_id: Mapped[str | None] = mapped_column(String(12))
    plan_id: Mapped[str | None] = mapped_column(String(64))
    title: Mapped[str] = mapped_column(String(512))
    body: Mapped[str] = mapped_column(Text)
    document: Mapped[dict[str, Any]] = mapped_column(default=dict)
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
    updated_at: Mapped[datetime] = mapped_column(default=utcnow)
