"""realised savings: what a resolved finding's fix saved, measured from stored Cost Explorer data

Revision ID: 0002_i18_beyond
Revises: 0001_initial
Create Date: 2026-11-25 23:30:00
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

import chipwise.store.base

revision: str = "0002_i18_beyond"
down_revision: str | None = "0002_i16_intake"  # chained on merge
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "realised_savings",
        sa.Column("finding_id", sa.String(length=36), nullable=False),
        sa.Column("account_id", sa.String(length=12), nullable=False),
        sa.Column("region", sa.String(length=32), nullable=False),
        sa.Column("rule_id", sa.String(length=64), nullable=False),
        sa.Column("resource_name", sa.String(length=512), nullable=False),
        sa.Column("instance_type", sa.String(length=64), nullable=True),
        sa.Column("cause", sa.String(length=16), nullable=False),
        sa.Column("status", sa.String(length=12), nullable=False),
        sa.Column("estimated_monthly_savings_usd", chipwise.store.base.Money(precision=18, scale=6), nullable=False),
        sa.Column("realised_monthly_savings_usd", chipwise.store.base.Money(precision=18, scale=6), nullable=True),
        sa.Column("accuracy", chipwise.store.base.Money(precision=18, scale=6), nullable=True),
        sa.Column("before_daily_usd", chipwise.store.base.Money(precision=18, scale=6), nullable=True),
        sa.Column("after_daily_usd", chipwise.store.base.Money(precision=18, scale=6), nullable=True),
        sa.Column("before_days", sa.Integer(), nullable=False),
        sa.Column("after_days", sa.Integer(), nullable=False),
        sa.Column("changed_after", sa.Date(), nullable=False),
        sa.Column("resolved_at", chipwise.store.base.UTCDateTime(timezone=True), nullable=False),
        sa.Column("measured_at", chipwise.store.base.UTCDateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["finding_id"], ["findings.id"], name=op.f("fk_realised_savings_finding_id_findings"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("finding_id", name=op.f("pk_realised_savings")),
    )
    with op.batch_alter_table("realised_savings", schema=None) as batch_op:
        batch_op.create_index("ix_realised_savings_account", ["account_id", "status"], unique=False)


def downgrade() -> None:
    with op.batch_alter_table("realised_savings", schema=None) as batch_op:
        batch_op.drop_index("ix_realised_savings_account")
    op.drop_table("realised_savings")
