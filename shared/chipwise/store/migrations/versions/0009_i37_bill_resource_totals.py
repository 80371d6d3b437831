"""bill_resource_totals (issue 37): each stored bill's resource-days summed per account, region, service, resource
and tag set (EKS pods' shares left out), what ``chipwise bill show`` reads instead of grouping the resource-days.
The bills stored before are summed here, from their resource-days, as the bill's writer sums a period it stores.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

from chipwise.store.migrations import columns as col

revision: str = "0009"
down_revision: str | None = "0008_i38_commit"

SUMMED = ("account_id", "region", "service", "resource_id")


def upgrade() -> None:
    col.create_table(
        "bill_resource_totals",
        *col.bill_part(),
        col.account_id(),
        col.region(),
        sa.Column("service", sa.String(length=128), nullable=False),
        sa.Column("resource_id", sa.String(length=1024), nullable=False),
        col.instance_type(),
        col.money("effective_cost"),
        col.money("public_on_demand_cost"),
        col.money("usage_hours"),
        col.json_value("tags"),
        refers={"period_id": "bill_periods.id"},
        indexes={"ix_bill_resource_totals_period_id": ["period_id"]},
    )
    days = sa.table(
        "bill_resource_costs",
        *(sa.column(name, sa.String()) for name in (*SUMMED, "instance_type", "parent_resource_id")),
        sa.column("period_id", sa.Integer()),
        *(sa.column(name, col.MONEY) for name in ("effective_cost", "public_on_demand_cost", "usage_hours")),
        sa.column("tags", col.JSON),
    )
    totals = sa.table(
        "bill_resource_totals",
        *(sa.column(name) for name in ("period_id", *SUMMED, "instance_type")),
        *(sa.column(name) for name in ("effective_cost", "public_on_demand_cost", "usage_hours", "tags")),
    )
    key = (days.c.period_id, *(days.c[name] for name in SUMMED), days.c.tags)
    summed = (
        sa.select(
            *key[:-1],
            sa.func.max(days.c.instance_type),
            sa.func.sum(days.c.effective_cost),
            sa.func.sum(days.c.public_on_demand_cost),
            sa.func.sum(days.c.usage_hours),
            days.c.tags,
        )
        .where(days.c.parent_resource_id.is_(None))
        .group_by(*key)
    )
    names = ["period_id", *SUMMED, "instance_type", "effective_cost", "public_on_demand_cost", "usage_hours", "tags"]
    op.execute(totals.insert().from_select(names, summed))


def downgrade() -> None:
    col.drop_table("bill_resource_totals", "ix_bill_resource_totals_period_id")
