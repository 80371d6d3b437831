"""cost_records.usage_kind holds every billing kind (ReservedHostUsage, ServerlessInf, unknown, ...): 32 characters;
neuron_rollups.reports_missing counts reports whose driver or device failed (utilisation unknown, not 0 %)
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision: str = "0002_i13_billing_neuron"
down_revision: str | None = "0001_initial"


def upgrade() -> None:
    with op.batch_alter_table("cost_records") as batch:
        batch.alter_column(
            "usage_kind", existing_type=sa.String(length=16), type_=sa.String(length=32), existing_nullable=True
        )
    op.add_column("neuron_rollups", sa.Column("reports_missing", sa.Integer(), nullable=False, server_default="0"))


def downgrade() -> None:
    with op.batch_alter_table("neuron_rollups") as batch:
        batch.drop_column("reports_missing")
    with op.batch_alter_table("cost_records") as batch:
        batch.alter_column(
            "usage_kind", existing_type=sa.String(length=32), type_=sa.String(length=16), existing_nullable=True
        )
