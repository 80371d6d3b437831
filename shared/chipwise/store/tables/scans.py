"""A scan of one account and region: its window, timings, API calls and errors."""

from datetime import date, datetime
from typing import Any

from sqlalchemy import ForeignKey, Index, String
from sqlalchemy.orm import Mapped, mapped_column

from chipwise.clock import utcnow
from chipwise.store.base import Base
from chipwise.store.tables.inventory import Account  # noqa: F401  (mapped first: foreign keys name it)


class Scan(Base):
    __tablename__ = "scans"
    __table_args__ = (Index("ix_scans_account_started", "account_id", "started_at"),)

    id: Mapped[str] = mapped_column(String(36), primary_key=True)
    account_id: Mapped[str] = mapped_column(ForeignKey("accounts.account_id"))
    region: Mapped[str] = mapped_column(String(32))
    status: Mapped[str] = mapped_column(String(16), default="running")  # running|succeeded|partial|failed|abandoned
    started_at: Mapped[datetime] = mapped_column(default=utcnow)
    finished_at: Mapped[datetime | None]
    window_start: Mapped[date]
    window_end: Mapped[date]
    resource_count: Mapped[int] = mapped_column(default=0)
    api_calls: Mapped[dict[str, Any]] = mapped_column(default=dict)
    timings: Mapped[dict[str, Any]] = mapped_column(default=dict)
    errors: Mapped[list[Any]] = mapped_column(default=list)
    document: Mapped[dict[str, Any] | None]
