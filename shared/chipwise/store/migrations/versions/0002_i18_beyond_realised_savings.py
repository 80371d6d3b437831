"""realised savings: what a resolved finding's fix saved, measured from stored Cost Explorer data"""

from __future__ import annotations

import sqlalchemy as sa

from chipwise.store.migrations.columns import (
    MONEY,
    UTC,
    account_id,
    create_table,
    drop_table,
    instance_type,
    region,
    uuid,
)


revision: str = "0002_i18_beyond"
down_revision: str | None = "0002_i16_intake"  # chained on merge


def upgrade() -> None:
    create_table(
        "realised_savings",
        uuid("finding_id"),
        account_id(),
        region(),
        sa.Column("rule_id", sa.String(length=64), nullable=False),
        sa.Column("resource_name", sa.String(length=512), nullable=False),
        instance_type(),
        sa.Column("cause", sa.String(length=16), nullable=False),
        sa.Column("status", sa.String(length=12), nullable=False),
        sa.Column("estimated_monthly_savings_usd", MONEY, nullable=False),
        sa.Column("realised_monthly_savings_usd", MONEY, nullable=True),
        sa.Column("accuracy", MONEY, nullable=True),
        sa.Column("before_daily_usd", MONEY, nullable=True),
        sa.Column("after_daily_usd", MONEY, nullable=True),
        sa.Column("before_days", sa.Integer(), nullable=False),
        sa.Column("after_days", sa.Integer(), nullable=False),
        sa.Column("changed_after", sa.Date(), nullable=False),
        sa.Column("resolved_at", UTC, nullable=False),
        sa.Column("measured_at", UTC, nullable=False),
        key="finding_id",
        refers={"finding_id": "findings.id"},
        indexes={"ix_realised_savings_account": ["account_id", "status"]},
    )


def downgrade() -> None:
    drop_table("realised_savings", "ix_realised_savings_account")
