"""What a billing period yields beyond resources: commitments (Savings Plans, reservations) and the cost no
resource carries. Only the bill ingest and the commitment and unattributed listings read or write them."""

from datetime import date
from decimal import Decimal

from sqlalchemy import String
from sqlalchemy.orm import Mapped, mapped_column

from chipwise.store.base import Base
from chipwise.store.tables.bill import BillPart, BillPeriodRow  # noqa: F401  (mapped first: foreign keys name it)


class BillCommitment(BillPart, Base):
    """A Savings Plan or reservation over one billing period."""

    __tablename__ = "bill_commitments"

    arn: Mapped[str] = mapped_column(String(256))
    account_id: Mapped[str] = mapped_column(String(12))
    kind: Mapped[str] = mapped_column(String(16))  # savings_plan | reservation
    offering_type: Mapped[str | None] = mapped_column(String(64))
    family: Mapped[str | None] = mapped_column(String(64))
    hourly_commitment: Mapped[Decimal | None]
    end_date: Mapped[date | None]
    used_cost: Mapped[Decimal]
    unused_cost: Mapped[Decimal]
    covered_accelerator_hours: Mapped[Decimal]
    accelerator_hours: Mapped[Decimal]
    start_date: Mapped[date | None]
    region: Mapped[str | None] = mapped_column(String(32))
    reserved_count: Mapped[int | None]
    covered_on_demand_cost: Mapped[Decimal | None]
    effective_rate: Mapped[Decimal | None]


class BillUnattributed(BillPart, Base):
    """Cost of one billing period no resource carries, by account, region and category, with the reason."""

    __tablename__ = "bill_unattributed"

    account_id: Mapped[str] = mapped_column(String(12))
    region: Mapped[str] = mapped_column(String(32))
    category: Mapped[str] = mapped_column(String(32))
    reason: Mapped[str] = mapped_column(String(256))
    amount: Mapped[Decimal]
