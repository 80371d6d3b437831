"""metric_series: each (resource, namespace, metric)'s hourly rollups packed into one row, read by the profiles
instead of one row per hour (filled as scans write rollups; a resource not packed yet is read from its rows)
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

from chipwise.store.migrations import columns as col

revision: str = "0005_i22_packed"
down_revision: str | None = "0004_i25_ids"


def upgrade() -> None:
    col.create_table(
        "metric_series",
        *col.metric_key(),
        sa.Column("first_hour", sa.BigInteger(), nullable=False),
        sa.Column("since_hour", sa.BigInteger(), nullable=True),
        sa.Column("present", sa.LargeBinary(), nullable=False),
        sa.Column("average", sa.LargeBinary(), nullable=False),
        sa.Column("maximum", sa.LargeBinary(), nullable=False),
        sa.Column("sum", sa.LargeBinary(), nullable=False),
        refers={"resource_id": "resources.id"},
        unique=("resource_id", "namespace", "metric"),
    )


def downgrade() -> None:
    op.drop_table("metric_series")
