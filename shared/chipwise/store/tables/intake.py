"""Intake-form submissions and the plans made from them."""

from datetime import datetime
from decimal import Decimal
from typing import Any

from sqlalchemy import ForeignKey, Index, String, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column

from chipwise.clock import utcnow
from chipwise.store.base import Base


class IntakeSubmission(Base):
    __tablename__ = "intake_submissions"

    id: Mapped[str] = mapped_column(String(36), primary_key=True)
    received_at: Mapped[datetime] = mapped_column(default=utcnow)
    company_name: Mapped[str] = mapped_column(String(256))
    contact_email: Mapped[str] = mapped_column(String(320))
    payload: Mapped[dict[str, Any]] = mapped_column(default=dict)
    # Added by the safe-intake work (all nullable: rows from before it have none of them).
    email_key: Mapped[str | None] = mapped_column(String(64), index=True)  # sha256 of the normalised address
    answers_key: Mapped[str | None] = mapped_column(String(64), index=True)  # sha256 of the answers
    link_key: Mapped[str | None] = mapped_column(String(64))  # per-submission secret that signs its links
    partner_referral: Mapped[bool | None] = mapped_column(default=False)
    confirmed_at: Mapped[datetime | None]
    expires_at: Mapped[datetime | None] = mapped_column(index=True)
    # The day's global cap on confirmation emails was reached: the plan was shown, not mailed (issue 26).
    mail_withheld: Mapped[bool | None] = mapped_column(default=False)


class Plan(Base):
    """A credits-and-migration plan; ``id`` is an unguessable token (it is the page's address)."""

    __tablename__ = "plans"

    id: Mapped[str] = mapped_column(String(64), primary_key=True)
    submission_id: Mapped[str | None] = mapped_column(ForeignKey("intake_submissions.id"))
    company: Mapped[str] = mapped_column(String(256))
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
    total_monthly_savings_usd: Mapped[Decimal]
    document: Mapped[dict[str, Any]] = mapped_column(default=dict)


class IntakeLimit(Base):
    """One rate-limit counter: how many times ``scope`` was used for ``key`` in the window starting then.

    Keys are sha256 digests (of a normalised address or a client IP), never the address itself. A counter is
    taken with one conditional UPDATE (``count < limit``), so concurrent requests can never exceed the limit.
    """

    __tablename__ = "intake_limits"
    __table_args__ = (
        UniqueConstraint("scope", "key", "window_start"),
        Index("ix_intake_limits_window_start", "window_start"),
    )

    id: Mapped[int] = mapped_column(primary_key=True, autoincrement=True)
    scope: Mapped[str] = mapped_column(String(16))  # client|address|email|mail (the global daily cap)
    key: Mapped[str] = mapped_column(String(64))
    window_start: Mapped[datetime]
    count: Mapped[int] = mapped_column(default=0)
