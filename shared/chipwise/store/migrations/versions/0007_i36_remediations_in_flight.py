"""remediations_in_flight: the finding an apply or a rollback holds while it re-checks and acts (one row per
finding), so a second caller is told who holds it since when

Revision ID: 0007_i36_in_flight
Revises: 0006_i34_bill
Create Date: 2026-11-29 07:30:00
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

import chipwise.store.base

revision: str = "0007_i36_in_flight"
down_revision: str | None = "0006_i34_bill"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "remediations_in_flight",
        sa.Column("finding_id", sa.String(length=36), nullable=False),
        sa.Column("operation", sa.String(length=12), nullable=False),
        sa.Column("actor", sa.String(length=256), nullable=False),
        sa.Column("source", sa.String(length=16), nullable=False),
        sa.Column("started_at", chipwise.store.base.UTCDateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["finding_id"],
            ["findings.id"],
            name=op.f("fk_remediations_in_flight_finding_id_findings"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("finding_id", name=op.f("pk_remediations_in_flight")),
    )


def downgrade() -> None:
    op.drop_table("remediations_in_flight")
