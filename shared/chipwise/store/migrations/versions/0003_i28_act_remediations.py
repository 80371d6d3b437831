"""remediations: the audit of every apply, refusal and rollback of a finding's mechanical next step"""

from __future__ import annotations

import sqlalchemy as sa

from chipwise.store.migrations import columns as col

revision: str = "0003_i28_act"
down_revision: str | None = "0003_i26_holds"


def upgrade() -> None:
    col.create_table(
        "remediations",
        col.uuid(),
        col.uuid("finding_id"),
        sa.Column("rule_id", sa.String(length=64), nullable=False),
        col.account_id(),
        col.region(),
        sa.Column("resource_arn", sa.String(length=2048), nullable=False),
        sa.Column("event", sa.String(length=12), nullable=False),
        sa.Column("action", sa.String(length=32), nullable=False),
        sa.Column("status", sa.String(length=16), nullable=False),
        sa.Column("actor", sa.String(length=256), nullable=False),
        sa.Column("source", sa.String(length=16), nullable=False),
        col.json_value("calls"),
        col.json_value("undo"),
        col.json_value("before"),
        sa.Column("result", sa.Text(), nullable=False),
        col.uuid("reverts_id", nullable=True),
        col.timestamp("rolled_back_at", nullable=True),
        col.timestamp("created_at"),
        refers={"finding_id": "findings.id"},
        indexes={"ix_remediations_finding": ["finding_id", "created_at"]},
    )


def downgrade() -> None:
    col.drop_table("remediations", "ix_remediations_finding")
