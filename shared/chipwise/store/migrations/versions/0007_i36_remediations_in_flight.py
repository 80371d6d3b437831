"""remediations_in_flight: the finding an apply or a rollback holds while it re-checks and acts (one row per
finding), so a second caller is told who holds it since when
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

from chipwise.store.migrations import columns as col

revision: str = "0007_i36_in_flight"
down_revision: str | None = "0006_i34_bill"


def upgrade() -> None:
    col.create_table(
        "remediations_in_flight",
        col.uuid("finding_id"),
        sa.Column("operation", sa.String(length=12), nullable=False),
        sa.Column("actor", sa.String(length=256), nullable=False),
        sa.Column("source", sa.String(length=16), nullable=False),
        col.timestamp("started_at"),
        key="finding_id",
        refers={"finding_id": "findings.id"},
    )


def downgrade() -> None:
    op.drop_table("remediations_in_flight")
