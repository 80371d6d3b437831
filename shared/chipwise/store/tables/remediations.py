"""Remediations: every apply, refusal and rollback of a finding's mechanical next step (the audit)."""

from datetime import datetime
from typing import Any

from sqlalchemy import ForeignKey, Index, String, Text
from sqlalchemy.orm import Mapped, mapped_column

from chipwise.clock import utcnow
from chipwise.store.base import Base
from chipwise.store.tables.findings import Finding  # noqa: F401  (mapped first: foreign keys name it)


class Remediation(Base):
    """One event on a finding: ``apply`` (status applied|failed), ``refusal`` (refused) or ``rollback``
    (rolled_back|failed). An applied row keeps the calls made and the calls that undo them; ``rolled_back_at`` is set
    when a rollback restored it."""

    __tablename__ = "remediations"
    __table_args__ = (Index("ix_remediations_finding", "finding_id", "created_at"),)

    id: Mapped[str] = mapped_column(String(36), primary_key=True)
    finding_id: Mapped[str] = mapped_column(ForeignKey("findings.id", ondelete="CASCADE"))
    rule_id: Mapped[str] = mapped_column(String(64))
    account_id: Mapped[str] = mapped_column(String(12))
    region: Mapped[str] = mapped_column(String(32))
    resource_arn: Mapped[str] = mapped_column(String(2048))
    event: Mapped[str] = mapped_column(String(12))  # apply|refusal|rollback|dismissal
    action: Mapped[str] = mapped_column(String(32))  # ec2_stop|variant_capacity|component_copies|not_waste|snooze
    status: Mapped[str] = mapped_column(String(16))  # applied|refused|failed|rolled_back|recorded
    actor: Mapped[str] = mapped_column(String(256))
    source: Mapped[str] = mapped_column(String(16))  # cli|slack
    calls: Mapped[list[Any]] = mapped_column(default=list)  # the calls made, in order
    undo: Mapped[list[Any]] = mapped_column(default=list)  # the calls that restore them, in order
    before: Mapped[dict[str, Any]] = mapped_column(default=dict)  # the state read just before
    result: Mapped[str] = mapped_column(Text)
    reverts_id: Mapped[str | None] = mapped_column(String(36))  # a rollback: the apply it undid
    rolled_back_at: Mapped[datetime | None]
    created_at: Mapped[datetime] = mapped_column(default=utcnow)


class RemediationInFlight(Base):
    """A finding being applied or rolled back right now: at most one row per finding (the primary key), written
    (and committed) before the re-checks and removed in the transaction that writes the audit row. A second caller
    finds it and is told who holds the finding since when."""

    __tablename__ = "remediations_in_flight"

    finding_id: Mapped[str] = mapped_column(ForeignKey("findings.id", ondelete="CASCADE"), primary_key=True)
    operation: Mapped[str] = mapped_column(String(12))  # apply|rollback
    actor: Mapped[str] = mapped_column(String(256))
    source: Mapped[str] = mapped_column(String(16))  # cli|slack
    started_at: Mapped[datetime] = mapped_column(default=utcnow)
