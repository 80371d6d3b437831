"""metric_series: each (resource, namespace, metric)'s hourly rollups packed into one row, read by the profiles
instead of one row per hour (filled as scans write rollups; a resource not packed yet is read from its rows)

Revision ID: 0005_i22_packed
Revises: 0004_i25_ids
Create Date: 2026-11-27 06:40:00
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0005_i22_packed"
down_revision: str | None = "0004_i25_ids"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "metric_series",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("resource_id", sa.Integer(), nullable=False),
        sa.Column("namespace", sa.String(length=128), nullable=False),
        sa.Column("metric", sa.String(length=128), nullable=False),
        sa.Column("first_hour", sa.BigInteger(), nullable=False),
        sa.Column("since_hour", sa.BigInteger(), nullable=True),
        sa.Column("present", sa.LargeBinary(), nullable=False),
        sa.Column("average", sa.LargeBinary(), nullable=False),
        sa.Column("maximum", sa.LargeBinary(), nullable=False),
        sa.Column("sum", sa.LargeBinary(), nullable=False),
        sa.ForeignKeyConstraint(
            ["resource_id"], ["resources.id"], name=op.f("fk_metric_series_resource_id_resources"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_metric_series")),
        sa.UniqueConstraint(
            "resource_id", "namespace", "metric", name=op.f("uq_metric_series_resource_id_namespace_metric")
        ),
    )


def downgrade() -> None:
    op.drop_table("metric_series")
