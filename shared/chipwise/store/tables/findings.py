"""Findings (one per rule and resource) and their priced recommendations (benchmark runs: tables.benchmarks)."""

from datetime import datetime
from decimal import Decimal
from typing import Any

from sqlalchemy import Float, ForeignKey, Index, String, Text, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column

from chipwise.clock import utcnow
from chipwise.models.resources import resource_key
from chipwise.store.base import Base
from chipwise.store.tables.inventory import Account  # noqa: F401  (mapped first: foreign keys name it)


class Finding(Base):
    """Upserted by (rule_id, resource_arn, resource_variant); resolved when the condition is gone; suppressible.
    ``resource_arn`` is an ARN AWS accepts (the endpoint's for a variant), ``resource_variant`` the production
    variant of a multi-variant endpoint (empty otherwise)."""

    __tablename__ = "findings"
    __table_args__ = (
        UniqueConstraint("rule_id", "resource_arn", "resource_variant"),
        Index("ix_findings_account_status", "account_id", "status"),
    )

    id: Mapped[str] = mapped_column(String(36), primary_key=True)
    account_id: Mapped[str] = mapped_column(ForeignKey("accounts.account_id"))
    region: Mapped[str] = mapped_column(String(32))
    rule_id: Mapped[str] = mapped_column(String(64))
    resource_arn: Mapped[str] = mapped_column(String(2048))
    resource_variant: Mapped[str] = mapped_column(String(256), default="", server_default="")
    resource_kind: Mapped[str] = mapped_column(String(48))
    resource_name: Mapped[str] = mapped_column(String(512))
    instance_type: Mapped[str | None] = mapped_column(String(64))
    instance_count: Mapped[int] = mapped_column(default=1)
    monthly_cost_usd: Mapped[Decimal]
    estimated_monthly_savings_usd: Mapped[Decimal]
    measured_monthly_savings_usd: Mapped[Decimal | None]
    recommendation: Mapped[dict[str, Any]] = mapped_column(default=dict)
    confidence: Mapped[str] = mapped_column(String(8))  # high|medium|low
    signals_used: Mapped[list[Any]] = mapped_column(default=list)
    signals_missing: Mapped[list[Any]] = mapped_column(default=list)
    effort: Mapped[str] = mapped_column(String(8), default="none")  # none|days|weeks|months
    break_even_months: Mapped[float | None] = mapped_column(Float)
    summary: Mapped[str] = mapped_column(Text)
    evidence: Mapped[dict[str, Any]] = mapped_column(default=dict)
    status: Mapped[str] = mapped_column(String(12), default="open")  # open|resolved|suppressed
    first_seen: Mapped[datetime] = mapped_column(default=utcnow)
    last_seen: Mapped[datetime] = mapped_column(default=utcnow)
    resolved_at: Mapped[datetime | None]
    suppressed_until: Mapped[datetime | None]
    suppress_reason: Mapped[str | None] = mapped_column(Text)
    last_scan_id: Mapped[str | None] = mapped_column(String(36))

    @property
    def resource_key(self) -> str:
        """Chipwise's id of the finding's resource (:func:`chipwise.models.resources.resource_key`)."""
        return resource_key(self.resource_arn, self.resource_variant)


class Recommendation(Base):
    """The history of how a finding's recommendation was priced: the estimate, then measurements."""

    __tablename__ = "recommendations"
    __table_args__ = (Index("ix_recommendations_finding", "finding_id", "created_at"),)

    id: Mapped[int] = mapped_column(primary_key=True, autoincrement=True)
    finding_id: Mapped[str] = mapped_column(ForeignKey("findings.id", ondelete="CASCADE"))
    source: Mapped[str] = mapped_column(String(16))  # estimate|benchmark
    action: Mapped[str] = mapped_column(String(24))
    target_platform: Mapped[str | None] = mapped_column(String(16))
    target_instance_type: Mapped[str | None] = mapped_column(String(64))
    target_count: Mapped[int | None]
    monthly_cost_usd: Mapped[Decimal | None]
    monthly_savings_usd: Mapped[Decimal | None]
    confidence: Mapped[str] = mapped_column(String(8))
    withdrawn: Mapped[bool] = mapped_column(default=False)
    reason: Mapped[str | None] = mapped_column(Text)
    benchmark_run_id: Mapped[str | None] = mapped_column(String(36))
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
