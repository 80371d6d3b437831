"""the bill: billing periods ingested from AWS Data Exports and what they yielded"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

from chipwise.store.migrations.columns import (
    JSON,
    MONEY,
    UTC,
    account_id,
    bill_part,
    create_table,
    drop_table,
    instance_type,
    region,
    serial_id,
)


revision: str = "0003_i23_bill"
down_revision: str | None = "0002_i18_beyond"  # chained on merge


def upgrade() -> None:
    create_table(
        "bill_periods",
        serial_id(),
        sa.Column("export_uri", sa.String(length=1024), nullable=False),
        sa.Column("billing_period", sa.String(length=7), nullable=False),
        sa.Column("table_name", sa.String(length=32), nullable=False),
        sa.Column("manifest_uri", sa.String(length=1024), nullable=False),
        sa.Column("execution_id", sa.String(length=128), nullable=False),
        sa.Column("engine", sa.String(length=16), nullable=False),
        sa.Column("line_items", sa.BigInteger(), nullable=False),
        sa.Column("bytes_read", sa.BigInteger(), nullable=False),
        sa.Column("ingested_at", UTC, nullable=False),
        unique=("export_uri", "billing_period"),
    )
    create_table(
        "bill_commitments",
        *bill_part(),
        sa.Column("arn", sa.String(length=256), nullable=False),
        account_id(),
        sa.Column("kind", sa.String(length=16), nullable=False),
        sa.Column("offering_type", sa.String(length=64), nullable=True),
        sa.Column("family", sa.String(length=64), nullable=True),
        sa.Column("hourly_commitment", MONEY, nullable=True),
        sa.Column("end_date", sa.Date(), nullable=True),
        sa.Column("used_cost", MONEY, nullable=False),
        sa.Column("unused_cost", MONEY, nullable=False),
        sa.Column("covered_accelerator_hours", MONEY, nullable=False),
        sa.Column("accelerator_hours", MONEY, nullable=False),
        refers={"period_id": "bill_periods.id"},
        indexes={"ix_bill_commitments_period_id": ["period_id"]},
    )
    create_table(
        "bill_resource_costs",
        *bill_part(),
        account_id(),
        region(),
        sa.Column("day", sa.Date(), nullable=False),
        sa.Column("resource_id", sa.String(length=1024), nullable=False),
        sa.Column("parent_resource_id", sa.String(length=1024), nullable=True),
        sa.Column("service", sa.String(length=128), nullable=False),
        sa.Column("usage_type", sa.String(length=256), nullable=False),
        instance_type(),
        sa.Column("pricing", sa.String(length=16), nullable=False),
        sa.Column("commitment_arn", sa.String(length=256), nullable=True),
        sa.Column("effective_cost", MONEY, nullable=False),
        sa.Column("billed_cost", MONEY, nullable=False),
        sa.Column("public_on_demand_cost", MONEY, nullable=False),
        sa.Column("public_on_demand_rate", MONEY, nullable=True),
        sa.Column("usage_hours", MONEY, nullable=False),
        sa.Column("tags", JSON, nullable=False),
        refers={"period_id": "bill_periods.id"},
        indexes={
            "ix_bill_resource_costs_account_day": ["account_id", "day"],
            "ix_bill_resource_costs_period_id": ["period_id"],
            "ix_bill_resource_costs_resource": ["resource_id"],
        },
    )
    create_table(
        "bill_unattributed",
        *bill_part(),
        account_id(),
        region(),
        sa.Column("category", sa.String(length=32), nullable=False),
        sa.Column("reason", sa.String(length=256), nullable=False),
        sa.Column("amount", MONEY, nullable=False),
        refers={"period_id": "bill_periods.id"},
        indexes={"ix_bill_unattributed_period_id": ["period_id"]},
    )

    # ### end Alembic commands ###


def downgrade() -> None:
    drop_table("bill_unattributed", "ix_bill_unattributed_period_id")
    drop_table(
        "bill_resource_costs",
        "ix_bill_resource_costs_resource",
        "ix_bill_resource_costs_period_id",
        "ix_bill_resource_costs_account_day",
    )
    drop_table("bill_commitments", "ix_bill_commitments_period_id")
    op.drop_table("bill_periods")
    # ### end Alembic commands ###
