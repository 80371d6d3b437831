"""scan_verdicts: one row per verdict of the latest finished scan of each account and region (issue 37), so
``chipwise resources`` counts an organisation's verdicts in SQL instead of reading every latest document. The
backfill reads those scans' documents one at a time (the document's ``verdicts`` in order, each resource's ``team``
from its ``resources``).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

import sqlalchemy as sa
from alembic import op

from chipwise.store.migrations import columns as col

revision: str = "0010"
down_revision: str | None = "0009"  # after 0009 (the bill's totals)

VARIANT_KEY_MARK = "#variant/"  # a resource id: the ARN, then this and the variant's name for a variant


def _rows(scan_id: str, document: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The rows of one document (this revision's own reading of the document's JSON)."""
    teams = {r.get("id"): r.get("team") for r in document.get("resources") or []}
    rows = []
    for position, verdict in enumerate(document.get("verdicts") or []):
        resource_id = str(verdict["resource_id"])
        arn, mark, variant = resource_id.partition(VARIANT_KEY_MARK)
        rows.append(
            {
                "scan_id": scan_id,
                "position": position,
                "resource_id": resource_id,
                "resource_arn": arn,
                "resource_variant": variant if mark else "",
                "team": teams.get(resource_id),
                "verdict": str(verdict["verdict"]),
            }
        )
    return rows


def upgrade() -> None:
    op.create_table(
        "scan_verdicts",
        col.uuid("scan_id"),
        sa.Column("position", sa.Integer(), autoincrement=False, nullable=False),
        sa.Column("resource_id", sa.String(length=2400), nullable=False),
        sa.Column("resource_arn", sa.String(length=2048), nullable=False),
        sa.Column("resource_variant", sa.String(length=256), nullable=False),
        sa.Column("team", sa.String(length=256), nullable=True),
        sa.Column("verdict", sa.String(length=16), nullable=False),
        sa.ForeignKeyConstraint(
            ["scan_id"], ["scans.id"], name=op.f("fk_scan_verdicts_scan_id_scans"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("scan_id", "position", name=op.f("pk_scan_verdicts")),
    )
    op.create_index("ix_scan_verdicts_scan_id", "scan_verdicts", ["scan_id", "resource_arn", "resource_variant"])
    bind = op.get_bind()
    table = sa.table(
        "scan_verdicts",
        *(sa.column(name) for name in ("scan_id", "position", "resource_id", "resource_arn", "resource_variant")),
        sa.column("team"),
        sa.column("verdict"),
    )
    # the latest finished scan with a document of each account and region: the only one whose verdicts are kept
    finished = bind.execute(
        sa.text(
            "SELECT id, account_id, region FROM scans WHERE status IN ('succeeded', 'partial') AND document IS NOT NULL"
            " ORDER BY account_id, region, window_end DESC, started_at DESC, id DESC"
        )
    )
    latest: dict[tuple[str, str], str] = {}
    for scan_id, account_id, region in finished:
        latest.setdefault((account_id, region), scan_id)
    ids = list(latest.values())
    for scan_id in ids:  # one document in memory at a time
        stored = bind.execute(sa.text("SELECT document FROM scans WHERE id = :id"), {"id": scan_id}).scalar()
        document = json.loads(stored) if isinstance(stored, str | bytes) else stored
        rows = _rows(scan_id, document) if isinstance(document, Mapping) else []
        if rows:
            bind.execute(sa.insert(table), rows)


def downgrade() -> None:
    op.drop_index("ix_scan_verdicts_scan_id", table_name="scan_verdicts")
    op.drop_table("scan_verdicts")
