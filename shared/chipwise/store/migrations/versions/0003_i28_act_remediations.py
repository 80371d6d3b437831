"""remediations: the audit of every apply, refusal and rollback of a finding's mechanical next step"""

from __future__ import annotations

import sqlalchemy as sa

from chipwise.store.migrations.columns import JSON, UTC, account_id, create_table, drop_table, region, uuid


revision: str = "0003_i28_act"
down_revision: str | None = "0003_i26_holds"


def upgrade() -> None:
    create_table(
        "remediations",
        uuid(),
        uuid("finding_id"),
        sa.Column("rule_id", sa.String(length=64), nullable=False),
        account_id(),
        region(),
        sa.Column("resource_arn", sa.String(length=2048), nullable=False),
        sa.Column("event", sa.String(length=12), nullable=False),
        sa.Column("action", sa.String(length=32), nullable=False),
        sa.Column("status", sa.String(length=16), nullable=False),
        sa.Column("actor", sa.String(length=256), nullable=False),
        sa.Column("source", sa.String(length=16), nullable=False),
        sa.Column("calls", JSON, nullable=False),
        sa.Column("undo", JSON, nullable=False),
        sa.Column("before", JSON, nullable=False),
        sa.Column("result", sa.Text(), nullable=False),
        uuid("reverts_id", nullable=True),
        sa.Column("rolled_back_at", UTC, nullable=True),
        sa.Column("created_at", UTC, nullable=False),
        refers={"finding_id": "findings.id"},
        indexes={"ix_remediations_finding": ["finding_id", "created_at"]},
    )


def downgrade() -> None:
    drop_table("remediations", "ix_remediations_finding")
