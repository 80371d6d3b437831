"""bill_periods: one bill per payer account and billing period (whichever export delivered it: another URI or
another format replaces it), with the export's data format and the rows of other providers it counted apart;
bill_service_costs: the usage of resources Chipwise does not inventory, per account, region and service

Rows stored before carry no payer (''): of those, each billing period keeps only its latest ingest (two of them
were the same bill counted twice, the fault this fixes); ingesting the period again sets its payer.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

from chipwise.store.migrations import columns as col

revision: str = "0006_i34_bill"
down_revision: str | None = "0005_i22_packed"


def upgrade() -> None:
    with op.batch_alter_table("bill_periods") as batch:
        batch.add_column(sa.Column("payer_account_id", sa.String(length=12), nullable=False, server_default=""))
        batch.add_column(sa.Column("data_format", sa.String(length=16), nullable=False, server_default="parquet"))
        batch.add_column(sa.Column("other_providers", col.JSON, nullable=False, server_default=sa.text("'{}'")))
    periods = sa.table(
        "bill_periods",
        sa.column("id", sa.Integer()),
        sa.column("billing_period", sa.String()),
        sa.column("ingested_at", sa.DateTime()),
    )
    bind = op.get_bind()
    latest: dict[str, tuple[object, int]] = {}
    stale: list[int] = []
    for row_id, period, at in bind.execute(sa.select(periods.c.id, periods.c.billing_period, periods.c.ingested_at)):
        kept = latest.get(period)
        if kept is None:
            latest[period] = (at, row_id)
            continue
        newer = (str(at), row_id) > (str(kept[0]), kept[1])
        stale.append(kept[1] if newer else row_id)
        if newer:
            latest[period] = (at, row_id)
    for table in ("bill_resource_costs", "bill_commitments", "bill_unattributed"):
        if stale:
            op.execute(sa.table(table, sa.column("period_id")).delete().where(sa.column("period_id").in_(stale)))
    if stale:
        op.execute(periods.delete().where(periods.c.id.in_(stale)))
    with op.batch_alter_table("bill_periods") as batch:
        batch.drop_constraint("uq_bill_periods_export_uri_billing_period", type_="unique")
        batch.create_unique_constraint(
            "uq_bill_periods_payer_account_id_billing_period", ["payer_account_id", "billing_period"]
        )
    col.create_table(
        "bill_service_costs",
        *col.bill_part(),
        col.account_id(),
        col.region(),
        sa.Column("service", sa.String(length=128), nullable=False),
        col.money("effective_cost"),
        sa.Column("line_items", sa.BigInteger(), nullable=False),
        refers={"period_id": "bill_periods.id"},
        indexes={"ix_bill_service_costs_period_id": ["period_id"]},
    )


def downgrade() -> None:
    col.drop_table("bill_service_costs", "ix_bill_service_costs_period_id")
    with op.batch_alter_table("bill_periods") as batch:
        batch.drop_constraint("uq_bill_periods_payer_account_id_billing_period", type_="unique")
        batch.create_unique_constraint("uq_bill_periods_export_uri_billing_period", ["export_uri", "billing_period"])
        batch.drop_column("other_providers")
        batch.drop_column("data_format")
        batch.drop_column("payer_account_id")
