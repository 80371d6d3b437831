"""The bill: one row per billing period of a payer account (from whichever export last delivered it), and what it
yielded per resource and day for the compute Chipwise inventories, per account and service for the rest (its
commitments and the cost no resource carries: tables.bill_commitments). A period delivered again, by the same
export or another one (another URI, another format), replaces its rows, never adds to them."""

from datetime import date, datetime
from decimal import Decimal
from typing import Any

from sqlalchemy import BigInteger, ForeignKey, Index, String, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column

from chipwise.clock import utcnow
from chipwise.store.base import Base


class BillPeriodRow(Base):
    """One billing period of one payer account as last ingested (the export and manifest execution it came from)."""

    __tablename__ = "bill_periods"
    __table_args__ = (UniqueConstraint("payer_account_id", "billing_period"),)

    id: Mapped[int] = mapped_column(primary_key=True, autoincrement=True)
    payer_account_id: Mapped[str] = mapped_column(String(12), default="")
    export_uri: Mapped[str] = mapped_column(String(1024))
    billing_period: Mapped[str] = mapped_column(String(7))  # YYYY-MM
    table_name: Mapped[str] = mapped_column(String(32))  # COST_AND_USAGE_REPORT | FOCUS_1_0_AWS | FOCUS_1_2_AWS | ...
    data_format: Mapped[str] = mapped_column(String(16), default="parquet")  # parquet | csv
    other_providers: Mapped[dict[str, Any]] = mapped_column(default=dict)  # rows of other clouds: counted, not read
    manifest_uri: Mapped[str] = mapped_column(String(1024))
    execution_id: Mapped[str] = mapped_column(String(128))
    engine: Mapped[str] = mapped_column(String(16))
    line_items: Mapped[int] = mapped_column(BigInteger, default=0)
    bytes_read: Mapped[int] = mapped_column(BigInteger, default=0)
    ingested_at: Mapped[datetime] = mapped_column(default=utcnow)


class BillPart:
    """The leading columns of what a billing period yields: its own id and the period (its rows go with it; first
    in each table: ``sort_order``)."""

    id: Mapped[int] = mapped_column(primary_key=True, autoincrement=True, sort_order=-1)
    period_id: Mapped[int] = mapped_column(ForeignKey("bill_periods.id", ondelete="CASCADE"), index=True, sort_order=-1)


class BillResourceCost(BillPart, Base):
    """One resource's cost on one day under one pricing (an EKS pod's split share names its node as parent)."""

    __tablename__ = "bill_resource_costs"
    __table_args__ = (
        Index("ix_bill_resource_costs_account_day", "account_id", "day"),
        Index("ix_bill_resource_costs_resource", "resource_id"),
    )

    account_id: Mapped[str] = mapped_column(String(12))
    region: Mapped[str] = mapped_column(String(32))
    day: Mapped[date]
    resource_id: Mapped[str] = mapped_column(String(1024))
    parent_resource_id: Mapped[str | None] = mapped_column(String(1024))
    service: Mapped[str] = mapped_column(String(128))
    usage_type: Mapped[str] = mapped_column(String(256))
    instance_type: Mapped[str | None] = mapped_column(String(64))
    pricing: Mapped[str] = mapped_column(String(16))  # on_demand | spot | savings_plan | reservation
    commitment_arn: Mapped[str | None] = mapped_column(String(256))
    effective_cost: Mapped[Decimal]
    billed_cost: Mapped[Decimal]
    public_on_demand_cost: Mapped[Decimal]
    public_on_demand_rate: Mapped[Decimal | None]
    usage_hours: Mapped[Decimal]
    tags: Mapped[dict[str, Any]] = mapped_column(default=dict)


class BillServiceCost(BillPart, Base):
    """The usage of resources Chipwise does not inventory, per account, region and service over the period."""

    __tablename__ = "bill_service_costs"

    account_id: Mapped[str] = mapped_column(String(12))
    region: Mapped[str] = mapped_column(String(32))
    service: Mapped[str] = mapped_column(String(128))
    effective_cost: Mapped[Decimal]
    line_items: Mapped[int] = mapped_column(BigInteger, default=0)
