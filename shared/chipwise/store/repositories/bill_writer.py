"""Writing the bill: one billing period replaced whole in the caller's transaction (any earlier bill of the same
payer and period dropped, from whichever export), its resource-days stored in batches as they are read, then summed
per resource (``bill_resource_totals``, what ``chipwise bill show`` reads) by the database."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any, cast

from sqlalchemy import Table, delete, func, insert, or_, select
from sqlalchemy.orm import Session

from chipwise.store.tables import BillPeriodRow, BillResourceCost

if TYPE_CHECKING:
    from chipwise.models.bill import BillPeriod, ResourceCost
    from chipwise.store.tables import BillCommitment, BillResourceTotal, BillServiceCost, BillUnattributed

    BillTable = (
        type[BillResourceCost]
        | type[BillResourceTotal]
        | type[BillCommitment]
        | type[BillUnattributed]
        | type[BillServiceCost]
    )

INSERT_CHUNK = 5_000
# A resource-day's fields as stored (``asdict`` would deep-copy each one's tags: a plain read is enough).
RESOURCE_FIELDS = (
    "account_id", "region", "day", "resource_id", "service", "usage_type", "instance_type", "pricing",
    "effective_cost", "billed_cost", "public_on_demand_cost", "public_on_demand_rate", "usage_hours",
    "commitment_arn", "parent_resource_id", "tags",
)  # fmt: skip
# A resource's total (bill_resource_totals) as its statement selects it: the key, the greatest type, three sums, tags.
TOTAL_FIELDS = (
    "period_id", "account_id", "region", "service", "resource_id", "instance_type",
    "effective_cost", "public_on_demand_cost", "usage_hours", "tags",
)  # fmt: skip


@dataclass(frozen=True)
class StoredPeriod:
    export_uri: str
    billing_period: str
    table_name: str
    engine: str
    execution_id: str
    line_items: int
    resources: int
    commitments: int
    unattributed: int
    ingested_at: datetime
    payer_account_id: str = ""
    data_format: str = "parquet"
    other_providers: dict[str, int] = field(default_factory=dict)
    service_costs: int = 0


class PeriodWriter:
    """Stores one billing period as it is read, in the caller's transaction (everything or nothing): ``begin``
    replaces any earlier bill of the same payer and period (from this export or another one, in any format), the
    resource-days arrive in batches, ``finish`` adds the rest. One bill per payer account and billing period."""

    def __init__(self, session: Session, now: datetime) -> None:
        self.session = session
        self.now = now
        self.row: BillPeriodRow | None = None
        self.resource_rows = 0

    def begin(self, period: BillPeriod) -> None:
        self._drop(period.billing_period, period.payer_account_id, period.export_uri)
        self.row = BillPeriodRow(
            payer_account_id=period.payer_account_id,
            export_uri=period.export_uri,
            billing_period=period.billing_period,
            table_name=period.table,
            data_format=period.data_format,
            manifest_uri=period.manifest_uri,
            execution_id=period.execution_id,
            engine=period.engine,
            line_items=0,
            bytes_read=0,
            other_providers={},
            ingested_at=self.now,
        )
        self.session.add(self.row)
        self.session.flush()

    def resources(self, batch: Sequence[ResourceCost]) -> None:
        assert self.row is not None, "begin first"
        period_id = self.row.id
        names = RESOURCE_FIELDS
        rows = [{"period_id": period_id, **{name: getattr(r, name) for name in names}} for r in batch]
        self.session.execute(insert(_table(BillResourceCost)), rows)  # Core: one executemany (see _insert)
        self.resource_rows += len(batch)

    def finish(self, period: BillPeriod) -> StoredPeriod:
        from chipwise.store.tables import BillCommitment, BillServiceCost, BillUnattributed

        if self.row is None:
            self.begin(period)
        row = self.row
        assert row is not None
        if row.payer_account_id != period.payer_account_id:  # known only from the rows (Athena)
            self._drop(period.billing_period, period.payer_account_id, period.export_uri, keep=row.id)
            row.payer_account_id = period.payer_account_id
        row.line_items = period.line_items
        row.bytes_read = period.bytes_read
        row.other_providers = dict(period.other_providers)
        self._insert(BillCommitment, [{"period_id": row.id, **asdict(c)} for c in period.commitments])
        self._insert(BillUnattributed, [{"period_id": row.id, **asdict(u)} for u in period.unattributed])
        self._insert(BillServiceCost, [{"period_id": row.id, **asdict(c)} for c in period.service_costs])
        self._sum_resources(row.id)
        self.session.flush()
        return StoredPeriod(
            period.export_uri,
            period.billing_period,
            period.table,
            period.engine,
            period.execution_id,
            period.line_items,
            self.resource_rows + len(period.resources),
            len(period.commitments),
            len(period.unattributed),
            self.now,
            period.payer_account_id,
            period.data_format,
            dict(period.other_providers),
            len(period.service_costs),
        )

    def _insert(self, table: BillTable, rows: list[dict[str, Any]]) -> None:
        """Rows in chunks, through the table (Core): the ORM's bulk insert splits a chunk wherever the pattern of its
        NULL values changes (a resource-day with a commitment, one without), a statement every two rows."""
        for start in range(0, len(rows), INSERT_CHUNK):
            self.session.execute(insert(_table(table)), rows[start : start + INSERT_CHUNK])

    def _sum_resources(self, period_id: int) -> None:
        """The period's resource-days summed per account, region, service, resource and tag set (pods' shares left
        out), by the database in one statement: ``bill show`` reads these sums, not the resource-days."""
        from chipwise.store.tables import BillResourceTotal

        days = BillResourceCost
        key = (days.account_id, days.region, days.service, days.resource_id)
        summed = (
            select(
                days.period_id,
                *key,
                func.max(days.instance_type),
                func.sum(days.effective_cost),
                func.sum(days.public_on_demand_cost),
                func.sum(days.usage_hours),
                days.tags,
            )
            .where(days.period_id == period_id, days.parent_resource_id.is_(None))
            .group_by(days.period_id, *key, days.tags)
        )
        self.session.execute(insert(_table(BillResourceTotal)).from_select(TOTAL_FIELDS, summed))

    def _drop(self, billing_period: str, payer: str, export_uri: str, keep: int | None = None) -> None:
        from chipwise.store.tables import BillCommitment, BillResourceTotal, BillServiceCost, BillUnattributed

        old = select(BillPeriodRow.id).where(
            BillPeriodRow.billing_period == billing_period,
            or_(BillPeriodRow.payer_account_id == payer, BillPeriodRow.export_uri == export_uri),
        )
        old_ids = [i for i in self.session.scalars(old) if i != keep]
        if not old_ids:
            return
        for table in (BillResourceCost, BillResourceTotal, BillCommitment, BillUnattributed, BillServiceCost):
            self.session.execute(delete(table).where(table.period_id.in_(old_ids)))
        self.session.execute(delete(BillPeriodRow).where(BillPeriodRow.id.in_(old_ids)))
        self.session.flush()


def _table(mapped: BillTable) -> Table:
    return cast("Table", mapped.__table__)
