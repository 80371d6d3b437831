"""A bill's resource-days summed per resource (what ``chipwise bill show`` reads): its own module, so that a command
that reads the bill's other tables does not map it."""

from decimal import Decimal
from typing import Any

from sqlalchemy import String
from sqlalchemy.orm import Mapped, mapped_column

from chipwise.store.base import Base
from chipwise.store.tables.bill import BillPart


class BillResourceTotal(BillPart, Base):
    """A resource's resource-days of the period summed (EKS pods' shares left out: their node carries them), per
    account, region, service and tag set: what ``chipwise bill show`` reads instead of the resource-days. Written by
    the bill's writer with the resource-days, replaced with them."""

    __tablename__ = "bill_resource_totals"

    account_id: Mapped[str] = mapped_column(String(12))
    region: Mapped[str] = mapped_column(String(32))
    service: Mapped[str] = mapped_column(String(128))
    resource_id: Mapped[str] = mapped_column(String(1024))
    instance_type: Mapped[str | None] = mapped_column(String(64))  # the greatest of the days'
    effective_cost: Mapped[Decimal]
    public_on_demand_cost: Mapped[Decimal]
    usage_hours: Mapped[Decimal]
    tags: Mapped[dict[str, Any]] = mapped_column(default=dict)  # the tags these days carry (each tag set its row)
