"""the bill: billing periods ingested from AWS Data Exports and what they yielded"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

from chipwise.store.migrations import columns as col

revision: str = "0003_i23_bill"
down_revision: str | None = "0002_i18_beyond"  # chained on merge


def upgrade() -> None:
    col.create_table(
        "bill_periods",
        col.serial_id(),
        sa.Column("export_uri", sa.String(length=1024), nullable=False),
        sa.Column("billing_period", sa.String(length=7), nullable=False),
        sa.Column("table_name", sa.String(length=32), nullable=False),
        sa.Column("manifest_uri", sa.String(length=1024), nullable=False),
        sa.Column("execution_id", sa.String(length=128), nullable=False),
        sa.Column("engine", sa.String(length=16), nullable=False),
        sa.Column("line_items", sa.BigInteger(), nullable=False),
        sa.Column("bytes_read", sa.BigInteger(), nullable=False),
        col.timestamp("ingested_at"),
        unique=("export_uri", "billing_period"),
    )
    col.create_table(
        "bill_commitments",
        *col.bill_part(),
        sa.Column("arn", sa.String(length=256), nullable=False),
        col.account_id(),
        sa.Column("kind", sa.String(length=16), nullable=False),
        sa.Column("offering_type", sa.String(length=64), nullable=True),
        sa.Column("family", sa.String(length=64), nullable=True),
        col.money("hourly_commitment", nullable=True),
        sa.Column("end_date", sa.Date(), nullable=True),
        col.money("used_cost"),
        col.money("unused_cost"),
        col.money("covered_accelerator_hours"),
        col.money("accelerator_hours"),
        refers={"period_id": "bill_periods.id"},
        indexes={"ix_bill_commitments_period_id": ["period_id"]},
    )
    col.create_table(
        "bill_resource_costs",
        *col.bill_part(),
        col.account_id(),
        col.region(),
        sa.Column("day", sa.Date(), nullable=False),
        sa.Column("resource_id", sa.String(length=1024), nullable=False),
        sa.Column("parent_resource_id", sa.String(length=1024), nullable=True),
        sa.Column("service", sa.String(length=128), nullable=False),
        sa.Column("usage_type", sa.String(length=256), nullable=False),
        col.instance_type(),
        sa.Column("pricing", sa.String(length=16), nullable=False),
        sa.Column("commitment_arn", sa.String(length=256), nullable=True),
        col.money("effective_cost"),
        col.money("billed_cost"),
        col.money("public_on_demand_cost"),
        col.money("public_on_demand_rate", nullable=True),
        col.money("usage_hours"),
        col.json_value("tags"),
        refers={"period_id": "bill_periods.id"},
        indexes={
            "ix_bill_resource_costs_account_day": ["account_id", "day"],
            "ix_bill_resource_costs_period_id": ["period_id"],
            "ix_bill_resource_costs_resource": ["resource_id"],
        },
    )
    col.create_table(
        "bill_unattributed",
        *col.bill_part(),
        col.account_id(),
        col.region(),
        sa.Column("category", sa.String(length=32), nullable=False),
        sa.Column("reason", sa.String(length=256), nullable=False),
        col.money("amount"),
        refers={"period_id": "bill_periods.id"},
        indexes={"ix_bill_unattributed_period_id": ["period_id"]},
    )

    # ### end Alembic commands ###


def downgrade() -> None:
    col.drop_table("bill_unattributed", "ix_bill_unattributed_period_id")
    col.drop_table(
        "bill_resource_costs",
        "ix_bill_resource_costs_resource",
        "ix_bill_resource_costs_period_id",
        "ix_bill_resource_costs_account_day",
    )
    col.drop_table("bill_commitments", "ix_bill_commitments_period_id")
    op.drop_table("bill_periods")
    # ### end Alembic commands ###
