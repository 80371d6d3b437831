"""holds part three: notified scans (a replayed ScanCompleted sends nothing new), intake mail withheld by the cap"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

from chipwise.store.migrations import columns as col

revision: str = "0003_i26_holds"
down_revision: str | None = "0003_i23_bill"


def upgrade() -> None:
    col.create_table(
        "notified_scans",
        sa.Column("scan_id", sa.String(length=64), nullable=False),
        col.account_id(),
        col.timestamp("notified_at"),
        key="scan_id",
    )
    with op.batch_alter_table("intake_submissions") as batch:
        batch.add_column(sa.Column("mail_withheld", sa.Boolean(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("intake_submissions") as batch:
        batch.drop_column("mail_withheld")
    op.drop_table("notified_scans")
