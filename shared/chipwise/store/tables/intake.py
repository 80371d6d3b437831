"""Intake-form submissions and the plans made from them."""

from __future__ import annotations

from datetime import datetime
from decimal import Decimal
from typing import Any

from sqlalchemy import ForeignKey, String
from sqlalchemy.orm import Mapped, mapped_column

from chipwise.store.base import Base, utcnow


class IntakeSubmission(Base):
    __tablename__ = "intake_submissions"

    id: Mapped[str] = mapped_column(String(36), primary_key=True)
    received_at: Mapped[datetime] = mapped_column(default=utcnow)
    company_name: Mapped[str] = mapped_column(String(256))
    contact_email: Mapped[str] = mapped_column(String(320))
    payload: Mapped[dict[str, Any]] = mapped_column(default=dict)


class Plan(Base):
    """A credits-and-migration plan; ``id`` is an unguessable token (it is the page's address)."""

    __tablename__ = "plans"

    id: Mapped[str] = mapped_column(String(64), primary_key=True)
    submission_id: Mapped[str | None] = mapped_column(ForeignKey("intake_submissions.id"))
    company: Mapped[str] = mapped_column(String(256))
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
    total_monthly_savings_usd: Mapped[Decimal]
    document: Mapped[dict[str, Any]] = mapped_column(default=dict)
