"""remediations: the audit of every apply, refusal and rollback of a finding's mechanical next step

Revision ID: 0003_i28_act
Revises: 0002_i18_beyond
Create Date: 2026-11-27 03:30:00
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

import chipwise.store.base

revision: str = "0003_i28_act"
down_revision: str | None = "0003_i26_holds"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_JSON = sa.JSON().with_variant(postgresql.JSONB(astext_type=sa.Text()), "postgresql")


def upgrade() -> None:
    op.create_table(
        "remediations",
        sa.Column("id", sa.String(length=36), nullable=False),
        sa.Column("finding_id", sa.String(length=36), nullable=False),
        sa.Column("rule_id", sa.String(length=64), nullable=False),
        sa.Column("account_id", sa.String(length=12), nullable=False),
        sa.Column("region", sa.String(length=32), nullable=False),
        sa.Column("resource_arn", sa.String(length=2048), nullable=False),
        sa.Column("event", sa.String(length=12), nullable=False),
        sa.Column("action", sa.String(length=32), nullable=False),
        sa.Column("status", sa.String(length=16), nullable=False),
        sa.Column("actor", sa.String(length=256), nullable=False),
        sa.Column("source", sa.String(length=16), nullable=False),
        sa.Column("calls", _JSON, nullable=False),
        sa.Column("undo", _JSON, nullable=False),
        sa.Column("before", _JSON, nullable=False),
        sa.Column("result", sa.Text(), nullable=False),
        sa.Column("reverts_id", sa.String(length=36), nullable=True),
        sa.Column("rolled_back_at", chipwise.store.base.UTCDateTime(timezone=True), nullable=True),
        sa.Column("created_at", chipwise.store.base.UTCDateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["finding_id"], ["findings.id"], name=op.f("fk_remediations_finding_id_findings"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_remediations")),
    )
    with op.batch_alter_table("remediations", schema=None) as batch_op:
        batch_op.create_index("ix_remediations_finding", ["finding_id", "created_at"], unique=False)


def downgrade() -> None:
    with op.batch_alter_table("remediations", schema=None) as batch_op:
        batch_op.drop_index("ix_remediations_finding")
    op.drop_table("remediations")
