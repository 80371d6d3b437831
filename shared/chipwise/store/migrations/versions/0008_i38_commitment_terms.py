"""bill_commitments: each commitment's terms (issue 38): its start date, Region, reserved count, the public
on-demand cost of the usage it covered and its own effective rate (effective cost per covered instance hour), read
from CUR 2.0's savings_plan_* and reservation_* columns. Rows stored before have none: ingesting the period again
fills them.

Revision ID: 0008_i38_commit
Revises: 0007_i36_in_flight
Create Date: 2026-11-29 08:25:00
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

import chipwise.store.base

revision: str = "0008_i38_commit"
down_revision: str | None = "0007_i36_in_flight"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

MONEY = chipwise.store.base.Money(precision=18, scale=6)


def upgrade() -> None:
    with op.batch_alter_table("bill_commitments") as batch:
        batch.add_column(sa.Column("start_date", sa.Date(), nullable=True))
        batch.add_column(sa.Column("region", sa.String(length=32), nullable=True))
        batch.add_column(sa.Column("reserved_count", sa.Integer(), nullable=True))
        batch.add_column(sa.Column("covered_on_demand_cost", MONEY, nullable=True))
        batch.add_column(sa.Column("effective_rate", MONEY, nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("bill_commitments") as batch:
        for column in ("effective_rate", "covered_on_demand_cost", "reserved_count", "region", "start_date"):
            batch.drop_column(column)
