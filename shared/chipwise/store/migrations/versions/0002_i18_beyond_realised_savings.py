"""realised savings: what a resolved finding's fix saved, measured from stored Cost Explorer data"""

from __future__ import annotations

import sqlalchemy as sa

from chipwise.store.migrations import columns as col

revision: str = "0002_i18_beyond"
down_revision: str | None = "0002_i16_intake"  # chained on merge


def upgrade() -> None:
    col.create_table(
        "realised_savings",
        col.uuid("finding_id"),
        col.account_id(),
        col.region(),
        sa.Column("rule_id", sa.String(length=64), nullable=False),
        sa.Column("resource_name", sa.String(length=512), nullable=False),
        col.instance_type(),
        sa.Column("cause", sa.String(length=16), nullable=False),
        sa.Column("status", sa.String(length=12), nullable=False),
        col.money("estimated_monthly_savings_usd"),
        col.money("realised_monthly_savings_usd", nullable=True),
        col.money("accuracy", nullable=True),
        col.money("before_daily_usd", nullable=True),
        col.money("after_daily_usd", nullable=True),
        sa.Column("before_days", sa.Integer(), nullable=False),
        sa.Column("after_days", sa.Integer(), nullable=False),
        sa.Column("changed_after", sa.Date(), nullable=False),
        col.timestamp("resolved_at"),
        col.timestamp("measured_at"),
        key="finding_id",
        refers={"finding_id": "findings.id"},
        indexes={"ix_realised_savings_account": ["account_id", "status"]},
    )


def downgrade() -> None:
    col.drop_table("realised_savings", "ix_realised_savings_account")
