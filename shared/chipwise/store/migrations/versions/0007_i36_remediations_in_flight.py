"""remediations_in_flight: the finding an apply or a rollback holds while it re-checks and acts (one row per
finding), so a second caller is told who holds it since when
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

from chipwise.store.migrations.columns import UTC, create_table, uuid


revision: str = "0007_i36_in_flight"
down_revision: str | None = "0006_i34_bill"


def upgrade() -> None:
    create_table(
        "remediations_in_flight",
        uuid("finding_id"),
        sa.Column("operation", sa.String(length=12), nullable=False),
        sa.Column("actor", sa.String(length=256), nullable=False),
        sa.Column("source", sa.String(length=16), nullable=False),
        sa.Column("started_at", UTC, nullable=False),
        key="finding_id",
        refers={"finding_id": "findings.id"},
    )


def downgrade() -> None:
    op.drop_table("remediations_in_flight")
