"""Realised savings: what a resolved finding's fix saved, measured from stored Cost Explorer data."""

from datetime import date, datetime
from decimal import Decimal

from sqlalchemy import ForeignKey, Index, String
from sqlalchemy.orm import Mapped, mapped_column

from chipwise.clock import utcnow
from chipwise.store.base import Base
from chipwise.store.tables.findings import Finding  # noqa: F401  (mapped first: foreign keys name it)


class RealisedSaving(Base):
    """One per resolved finding, next to its estimate: the usage type's mean daily cost before and after the change
    (see :mod:`chipwise.analyse.realised`); ``pending`` until enough days after it are stored."""

    __tablename__ = "realised_savings"
    __table_args__ = (Index("ix_realised_savings_account", "account_id", "status"),)

    finding_id: Mapped[str] = mapped_column(ForeignKey("findings.id", ondelete="CASCADE"), primary_key=True)
    account_id: Mapped[str] = mapped_column(String(12))
    region: Mapped[str] = mapped_column(String(32))
    rule_id: Mapped[str] = mapped_column(String(64))
    resource_name: Mapped[str] = mapped_column(String(512))
    instance_type: Mapped[str | None] = mapped_column(String(64))
    cause: Mapped[str] = mapped_column(String(16))  # gone|resized|unchanged
    status: Mapped[str] = mapped_column(String(12))  # pending|measured
    estimated_monthly_savings_usd: Mapped[Decimal]
    realised_monthly_savings_usd: Mapped[Decimal | None]
    accuracy: Mapped[Decimal | None]
    before_daily_usd: Mapped[Decimal | None]
    after_daily_usd: Mapped[Decimal | None]
    before_days: Mapped[int] = mapped_column(default=0)
    after_days: Mapped[int] = mapped_column(default=0)
    changed_after: Mapped[date]  # the last day the finding was seen; the change came after it
    resolved_at: Mapped[datetime]
    measured_at: Mapped[datetime] = mapped_column(default=utcnow)
