"""bill_commitments: each commitment's terms (issue 38): its start date, Region, reserved count, the public
on-demand cost of the usage it covered and its own effective rate (effective cost per covered instance hour), read
from CUR 2.0's savings_plan_* and reservation_* columns. Rows stored before have none: ingesting the period again
fills them.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

from chipwise.store.migrations import columns as col

revision: str = "0008_i38_commit"
down_revision: str | None = "0007_i36_in_flight"


def upgrade() -> None:
    with op.batch_alter_table("bill_commitments") as batch:
        batch.add_column(sa.Column("start_date", sa.Date(), nullable=True))
        batch.add_column(col.region(nullable=True))
        batch.add_column(sa.Column("reserved_count", sa.Integer(), nullable=True))
        batch.add_column(col.money("covered_on_demand_cost", nullable=True))
        batch.add_column(col.money("effective_rate", nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("bill_commitments") as batch:
        for column in ("effective_rate", "covered_on_demand_cost", "reserved_count", "region", "start_date"):
            batch.drop_column(column)
