"""safe intake: rate-limit counters, submission keys, confirmation, retention"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

from chipwise.store.migrations import columns as col

revision: str = "0002_i16_intake"
down_revision: str | None = "0002_i13_billing_neuron"  # chained on merge

_NEW_COLUMNS = ("email_key", "answers_key", "link_key", "partner_referral", "confirmed_at", "expires_at")


def upgrade() -> None:
    col.create_table(
        "intake_limits",
        col.serial_id(),
        sa.Column("scope", sa.String(length=16), nullable=False),
        sa.Column("key", sa.String(length=64), nullable=False),
        col.timestamp("window_start"),
        sa.Column("count", sa.Integer(), nullable=False),
        unique=("scope", "key", "window_start"),
        indexes={"ix_intake_limits_window_start": ["window_start"]},
    )
    with op.batch_alter_table("intake_submissions") as batch:
        batch.add_column(sa.Column("email_key", sa.String(length=64), nullable=True))
        batch.add_column(sa.Column("answers_key", sa.String(length=64), nullable=True))
        batch.add_column(sa.Column("link_key", sa.String(length=64), nullable=True))
        batch.add_column(sa.Column("partner_referral", sa.Boolean(), nullable=True))
        batch.add_column(col.timestamp("confirmed_at", nullable=True))
        batch.add_column(col.timestamp("expires_at", nullable=True))
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
    col.drop_table("intake_limits", "ix_intake_limits_window_start")
