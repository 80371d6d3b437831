"""safe intake: rate-limit counters, submission keys, confirmation, retention

Revision ID: 0002_i16_intake
Revises: 0001_initial
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

import chipwise.store.base

revision: str = "0002_i16_intake"
down_revision: str | None = "0002_i13_billing_neuron"  # chained on merge
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_NEW_COLUMNS = ("email_key", "answers_key", "link_key", "partner_referral", "confirmed_at", "expires_at")


def upgrade() -> None:
    op.create_table(
        "intake_limits",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("scope", sa.String(length=16), nullable=False),
        sa.Column("key", sa.String(length=64), nullable=False),
        sa.Column("window_start", chipwise.store.base.UTCDateTime(timezone=True), nullable=False),
        sa.Column("count", sa.Integer(), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_intake_limits")),
        sa.UniqueConstraint("scope", "key", "window_start", name=op.f("uq_intake_limits_scope_key_window_start")),
    )
    op.create_index("ix_intake_limits_window_start", "intake_limits", ["window_start"], unique=False)
    with op.batch_alter_table("intake_submissions") as batch:
        batch.add_column(sa.Column("email_key", sa.String(length=64), nullable=True))
        batch.add_column(sa.Column("answers_key", sa.String(length=64), nullable=True))
        batch.add_column(sa.Column("link_key", sa.String(length=64), nullable=True))
        batch.add_column(sa.Column("partner_referral", sa.Boolean(), nullable=True))
        batch.add_column(sa.Column("confirmed_at", chipwise.store.base.UTCDateTime(timezone=True), nullable=True))
        batch.add_column(sa.Column("expires_at", chipwise.store.base.UTCDateTime(timezone=True), nullable=True))
        batch.create_index(batch.f("ix_intake_submissions_email_key"), ["email_key"], unique=False)
        batch.create_index(batch.f("ix_intake_submissions_answers_key"), ["answers_key"], unique=False)
        batch.create_index(batch.f("ix_intake_submissions_expires_at"), ["expires_at"], unique=False)


def downgrade() -> None:
    with op.batch_alter_table("intake_submissions") as batch:
        batch.drop_index(batch.f("ix_intake_submissions_expires_at"))
        batch.drop_index(batch.f("ix_intake_submissions_answers_key"))
        batch.drop_index(batch.f("ix_intake_submissions_email_key"))
        for column in reversed(_NEW_COLUMNS):
            batch.drop_column(column)
    op.drop_index("ix_intake_limits_window_start", table_name="intake_limits")
    op.drop_table("intake_limits")
