"""holds part three: notified scans (a replayed ScanCompleted sends nothing new), intake mail withheld by the cap

Revision ID: 0003_i26_holds
Revises: 0002_i18_beyond
Create Date: 2026-11-27 03:10:00
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

import chipwise.store.base

revision: str = "0003_i26_holds"
down_revision: str | None = "0003_i23_bill"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "notified_scans",
        sa.Column("scan_id", sa.String(length=64), nullable=False),
        sa.Column("account_id", sa.String(length=12), nullable=False),
        sa.Column("notified_at", chipwise.store.base.UTCDateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("scan_id", name=op.f("pk_notified_scans")),
    )
    with op.batch_alter_table("intake_submissions") as batch:
        batch.add_column(sa.Column("mail_withheld", sa.Boolean(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("intake_submissions") as batch:
        batch.drop_column("mail_withheld")
    op.drop_table("notified_scans")
