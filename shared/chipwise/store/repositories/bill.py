"""The bill in the store: one bill per payer account and billing period, replaced whole (written by
:mod:`chipwise.store.repositories.bill_writer`), and what scans and ``chipwise bill show`` read back:
per-resource effective costs, the account's public on-demand rates, spend, commitments."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from datetime import date, datetime
from decimal import Decimal
from typing import TYPE_CHECKING, Any

from sqlalchemy import ColumnElement, func, literal, null, or_, select, union_all

from chipwise.models.bill import ResourceBill, Unattributed
from chipwise.store.repositories.bill_writer import INSERT_CHUNK, PeriodWriter, StoredPeriod
from chipwise.store.repositories.records import Repository, record_of
from chipwise.store.tables import BillPeriodRow, BillResourceCost

if TYPE_CHECKING:
    from chipwise.models.bill import BillPeriod


@dataclass(frozen=True)
class SpendLine:
    account_id: str
    service: str
    resource_id: str
    instance_type: str | None
    effective_cost: Decimal
    public_on_demand_cost: Decimal
    usage_hours: Decimal
    team: str | None


@dataclass(frozen=True)
class SpendTotal:
    """The effective spend of an account's resources of one service and team (None: no team tag), and how many."""

    account_id: str
    service: str
    team: str | None
    effective_cost: Decimal
    resources: int


STREAM_ROWS = 2_000  # rows fetched at a time when a listing is streamed


@dataclass(frozen=True)
class StoredServiceCost:
    billing_period: str
    account_id: str
    region: str
    service: str
    effective_cost: Decimal
    line_items: int


def _dec(value: Any) -> Decimal:
    return Decimal(str(value or 0))


def _largest_first(lines: Any) -> tuple[ColumnElement[Any], ...]:
    """The order of :meth:`BillRepository.iter_spend`'s lines: the largest effective spend first (to the micro-dollar
    the store keeps: SQLite sums floats, whose last bits must not break a tie), then account, resource, service."""
    c = lines.c
    return func.round(c.effective, 6).desc(), c.account_id, c.resource_id, c.service


@dataclass(frozen=True)
class ResourceDay:
    """One compute resource's day in the bill (EKS pods' shares left out: their node carries the day)."""

    resource_id: str
    region: str
    day: date
    service: str
    instance_type: str | None
    pricing: str
    commitment_arn: str | None
    effective_cost: Decimal
    public_on_demand_cost: Decimal
    usage_hours: Decimal


@dataclass(frozen=True, slots=True)
class BillPeriodRecord:
    """One stored bill: a payer's billing period from one export."""

    id: int
    payer_account_id: str
    export_uri: str
    billing_period: str
    table_name: str
    data_format: str
    other_providers: dict[str, Any]
    manifest_uri: str
    execution_id: str
    engine: str
    line_items: int
    bytes_read: int
    ingested_at: datetime


@dataclass(frozen=True, slots=True)
class CommitmentRecord:
    """A Savings Plan or reservation as one billing period shows it."""

    arn: str
    account_id: str
    kind: str  # savings_plan | reservation
    offering_type: str | None
    family: str | None
    hourly_commitment: Decimal | None
    end_date: date | None
    used_cost: Decimal
    unused_cost: Decimal
    covered_accelerator_hours: Decimal
    accelerator_hours: Decimal
    start_date: date | None
    region: str | None
    reserved_count: int | None
    covered_on_demand_cost: Decimal | None
    effective_rate: Decimal | None


@dataclass(frozen=True, slots=True)
class UnattributedRecord:
    """Spend the bill does not tie to a resource, by account, region and category."""

    account_id: str
    region: str
    category: str
    reason: str
    amount: Decimal


class BillRepository(Repository):
    """The stored bill: a period replaced whole, and what scans and ``chipwise bill show`` read back."""

    def replace_period(self, period: BillPeriod, now: datetime) -> StoredPeriod:
        """Store one billing period read whole (its resource-days in ``period.resources``) in place of any earlier
        bill of its payer and period. Runs in the caller's transaction: everything or nothing."""
        writer = PeriodWriter(self.session, now)
        writer.begin(period)
        for start in range(0, len(period.resources), INSERT_CHUNK):
            writer.resources(period.resources[start : start + INSERT_CHUNK])
        kept, period.resources = period.resources, []
        try:
            return writer.finish(period)
        finally:
            period.resources = kept

    def stored_periods(self) -> list[BillPeriodRecord]:
        rows = self.session.scalars(select(BillPeriodRow).order_by(BillPeriodRow.billing_period))
        return [record_of(BillPeriodRecord, row) for row in rows]

    def periods_with_account(self, account_id: str, periods: Sequence[str]) -> set[str]:
        """The billing periods among ``periods`` whose stored bill has lines of ``account_id``."""
        stmt = (
            select(BillPeriodRow.billing_period)
            .join(BillResourceCost, BillResourceCost.period_id == BillPeriodRow.id)
            .where(BillPeriodRow.billing_period.in_(list(periods)), BillResourceCost.account_id == account_id)
            .distinct()
        )
        return set(self.session.scalars(stmt))

    def resource_bills(
        self, account_id: str, start: date, end: date, region: str | None = None
    ) -> dict[str, ResourceBill]:
        """Per resource id, its bill over ``[start, end)`` (EKS pods included, each naming its node)."""
        # the columns it sums, not each resource-day loaded as an object (a scan report reads three windows)
        stmt = (
            select(
                BillResourceCost.resource_id,
                BillResourceCost.instance_type,
                BillResourceCost.service,
                BillResourceCost.parent_resource_id,
                BillResourceCost.effective_cost,
                BillResourceCost.billed_cost,
                BillResourceCost.public_on_demand_cost,
                BillResourceCost.usage_hours,
                BillResourceCost.pricing,
                BillResourceCost.tags,
                BillPeriodRow.billing_period,
            )
            .join(BillPeriodRow, BillPeriodRow.id == BillResourceCost.period_id)
            .where(BillResourceCost.account_id == account_id, BillResourceCost.day >= start, BillResourceCost.day < end)
        )
        if region is not None:
            stmt = stmt.where(or_(BillResourceCost.region == region, BillResourceCost.region == ""))
        found: dict[str, ResourceBill] = {}
        for cost in self.session.execute(stmt).all():
            period = cost.billing_period
            item = found.get(cost.resource_id)
            if item is None:
                item = found[cost.resource_id] = ResourceBill(
                    cost.resource_id, cost.instance_type, cost.service, parent_resource_id=cost.parent_resource_id
                )
            item.effective_cost += cost.effective_cost
            item.billed_cost += cost.billed_cost
            item.public_on_demand_cost += cost.public_on_demand_cost
            item.usage_hours += cost.usage_hours
            item.pricings.add(cost.pricing)
            item.periods.add(period)
            item.tags.update({str(k): str(v) for k, v in (cost.tags or {}).items()})
        return found

    def bill_days(self, account_id: str, periods: Sequence[str]) -> dict[str, set[date]]:
        """Per billing period of ``periods``, the days the stored bill has lines of ``account_id`` for (the days the
        export covers so far: a period still open ends at its last delivered day)."""
        stmt = (
            select(BillPeriodRow.billing_period, BillResourceCost.day)
            .join(BillPeriodRow, BillPeriodRow.id == BillResourceCost.period_id)
            .where(BillPeriodRow.billing_period.in_(list(periods)), BillResourceCost.account_id == account_id)
            .distinct()
        )
        found: dict[str, set[date]] = defaultdict(set)
        for period, day in self.session.execute(stmt):
            found[str(period)].add(day)
        return dict(found)

    def unattributed_costs(
        self, account_id: str, periods: Sequence[str], region: str | None = None
    ) -> list[tuple[str, Unattributed]]:
        """What no resource carries in ``periods`` (a commitment's unused part, tax, credits, usage with no resource
        id), per period, in ``region`` and the global rows (tax has no region) when a region is given."""
        from chipwise.store.tables import BillUnattributed

        stmt = (
            select(BillUnattributed, BillPeriodRow.billing_period)
            .join(BillPeriodRow, BillPeriodRow.id == BillUnattributed.period_id)
            .where(BillPeriodRow.billing_period.in_(list(periods)), BillUnattributed.account_id == account_id)
            .order_by(BillPeriodRow.billing_period, BillUnattributed.category, BillUnattributed.region)
        )
        if region is not None:
            stmt = stmt.where(or_(BillUnattributed.region == region, BillUnattributed.region == ""))
        return [
            (str(period), Unattributed(row.account_id, row.region, row.category, row.reason, _dec(row.amount)))
            for row, period in self.session.execute(stmt)
        ]

    def window_bill(
        self, account_id: str, start: date, end: date, periods: Sequence[str], region: str | None = None
    ) -> tuple[dict[str, ResourceBill], list[tuple[str, Unattributed]], dict[str, set[date]]]:
        """What :func:`chipwise.analyse.ledger.bill_window` needs for ``[start, end)``: each resource's bill over the
        window, the cost no resource carries in ``periods``, and the days each period's export covers."""
        return (
            self.resource_bills(account_id, start, end, region=region),
            self.unattributed_costs(account_id, periods, region),
            self.bill_days(account_id, periods),
        )

    def public_rates(self, account_id: str, region: str | None = None) -> dict[str, tuple[Decimal, str]]:
        """Per lower-case instance type, the public on-demand rate the account's bill states (its latest billing
        period, in ``region`` when given) and that period."""
        stmt = (
            select(BillResourceCost.instance_type, BillResourceCost.public_on_demand_rate, BillPeriodRow.billing_period)
            .join(BillPeriodRow, BillPeriodRow.id == BillResourceCost.period_id)
            .where(
                BillResourceCost.account_id == account_id,
                BillResourceCost.instance_type.is_not(None),
                BillResourceCost.public_on_demand_rate.is_not(None),
                BillResourceCost.public_on_demand_rate > 0,
            )
            .order_by(BillPeriodRow.billing_period)
        )
        if region is not None:
            stmt = stmt.where(BillResourceCost.region == region)
        rates: dict[str, tuple[Decimal, str]] = {}
        for instance_type, rate, period in self.session.execute(stmt):
            if instance_type and rate is not None:
                rates[str(instance_type).lower()] = (rate, str(period))
        return rates

    def spend(self, account_id: str | None = None, team_keys: Sequence[str] = ()) -> list[SpendLine]:
        """Effective spend by account, service and resource over every stored period, largest first (a list: see
        :func:`iter_spend` to stream it)."""
        return list(self.iter_spend(account_id, team_keys))

    def iter_spend(
        self, account_id: str | None = None, team_keys: Sequence[str] = (), region: str | None = None
    ) -> Iterator[SpendLine]:
        """Effective spend by account, service and resource over every stored period (pods are shares of their nodes:
        left out so that nothing is counted twice), largest first, fetched a few thousand rows at a time; read from
        each bill's per-resource totals (``bill_resource_totals``), not its resource-days."""
        per = self._spend_by_resource(account_id, team_keys, region)
        stmt = select(per).order_by(*_largest_first(per))
        for a, svc, r, t, e, o, h, tm in self.session.execute(stmt.execution_options(yield_per=STREAM_ROWS)):
            yield SpendLine(str(a), str(svc), str(r), t, _dec(e), _dec(o), _dec(h), None if tm is None else str(tm))

    def spend_table(
        self,
        account_id: str | None = None,
        team_keys: Sequence[str] = (),
        *,
        region: str | None = None,
        team: str | None = None,
        limit: int | None,
    ) -> tuple[list[SpendLine], list[SpendTotal]]:
        """``chipwise bill show``'s table in one statement: the first ``limit`` lines of :meth:`iter_spend` (of
        ``team`` when given; every line when ``limit`` is None), and every line summed per account, service and team
        with how many resources each sum holds, in the order their first line comes. The database sums and cuts the
        bills' per-resource totals: the other lines never reach Python."""
        per = self._spend_by_resource(account_id, team_keys, region)
        if team is not None:
            per = select(per).where(per.c.team == team).subquery("of_team")
        # each line's place in iter_spend's order: the top lines are the first places, and a group's first place
        # says where its team first appears
        place = func.row_number().over(order_by=_largest_first(per))
        placed = select(per, place.label("place")).cte("placed")
        c = placed.c
        top = select(
            literal("line").label("kind"), c.account_id, c.service, c.resource_id, c.instance_type, c.effective,
            c.public, c.hours, c.team, literal(1).label("resources"), c.place,
        )  # fmt: skip
        if limit is not None:
            top = top.where(c.place <= limit)
        totals = select(
            literal("total"), c.account_id, c.service, null(), null(), func.sum(c.effective), null(), null(), c.team,
            func.count(), func.min(c.place),
        ).group_by(c.account_id, c.service, c.team)  # fmt: skip
        lines: list[tuple[int, SpendLine]] = []
        groups: list[tuple[int, SpendTotal]] = []
        for kind, a, svc, r, t, e, o, h, tm, n, at in self.session.execute(union_all(top, totals)):
            team_of = None if tm is None else str(tm)
            if kind == "line":
                lines.append((int(at), SpendLine(str(a), str(svc), str(r), t, _dec(e), _dec(o), _dec(h), team_of)))
            else:
                groups.append((int(at), SpendTotal(str(a), str(svc), team_of, _dec(e), int(n))))
        lines.sort(key=lambda item: item[0])
        groups.sort(key=lambda item: item[0])
        return [line for _, line in lines], [group for _, group in groups]

    def _spend_by_resource(self, account_id: str | None, team_keys: Sequence[str], region: str | None) -> Any:
        """The lines of :meth:`iter_spend` as a subquery (account_id, service, resource_id, instance_type, effective,
        public, hours, team) over the bills' per-resource totals (one row per period, account, region, service,
        resource and tag set); the team found by the database: per key, the least non-empty value over the
        resource's tag sets (every region's), the first key that has one."""
        from chipwise.store.tables import BillResourceTotal

        keys = list(dict.fromkeys(team_keys))
        rows = BillResourceTotal
        where: list[ColumnElement[bool]] = [] if account_id is None else [rows.account_id == account_id]
        tags = [func.min(func.nullif(rows.tags[key].as_string(), "")).label(f"tag{i}") for i, key in enumerate(keys)]
        columns: list[ColumnElement[Any]] = [
            rows.account_id.label("account_id"),
            rows.service.label("service"),
            rows.resource_id.label("resource_id"),
            func.max(rows.instance_type).label("instance_type"),
            func.sum(rows.effective_cost).label("effective"),
            func.sum(rows.public_on_demand_cost).label("public"),
            func.sum(rows.usage_hours).label("hours"),
        ]
        group = (rows.account_id, rows.service, rows.resource_id)
        if region is None:  # the lines read every region's totals: the tags come with them, one pass over the rows
            per = select(*columns, *tags).where(*where).group_by(*group).subquery("per")
            found: list[ColumnElement[Any]] = [
                func.min(per.c[f"tag{i}"]).over(partition_by=per.c.resource_id) for i in range(len(keys))
            ]
            source: Any = per
        else:  # the lines of one region, the tags of every region's totals (a resource's team is not regional)
            per = select(*columns).where(*where, rows.region == region).group_by(*group).subquery("per")
            by_resource = select(rows.resource_id.label("resource_id"), *tags).where(*where).group_by(rows.resource_id)
            tagged = by_resource.subquery("tags")
            found = [tagged.c[f"tag{i}"] for i in range(len(keys))]
            source = per.outerjoin(tagged, tagged.c.resource_id == per.c.resource_id)
        team = (func.coalesce(*found) if len(found) > 1 else found[0]) if found else null()
        names = ("account_id", "service", "resource_id", "instance_type", "effective", "public", "hours")
        return select(*(per.c[name] for name in names), team.label("team")).select_from(source).subquery("spend")

    def service_costs(self, account_id: str | None = None) -> list[StoredServiceCost]:
        """The usage of resources Chipwise does not inventory, per period, account, region and service."""
        from chipwise.store.tables import BillServiceCost

        stmt = select(
            BillPeriodRow.billing_period,
            BillServiceCost.account_id,
            BillServiceCost.region,
            BillServiceCost.service,
            BillServiceCost.effective_cost,
            BillServiceCost.line_items,
        ).join(BillPeriodRow, BillPeriodRow.id == BillServiceCost.period_id)
        if account_id is not None:
            stmt = stmt.where(BillServiceCost.account_id == account_id)
        stmt = stmt.order_by(BillPeriodRow.billing_period, BillServiceCost.account_id, BillServiceCost.service)
        return [
            StoredServiceCost(str(period), str(account), str(region), str(service), _dec(cost), int(lines or 0))
            for period, account, region, service, cost, lines in self.session.execute(stmt)
        ]

    def resource_tags(self, account_id: str, resource_ids: Iterable[str]) -> dict[str, dict[str, str]]:
        """The cost allocation tags the bill carries for each of ``resource_ids`` of the account (compared without
        case, keyed in lower case; an id the bill does not name is absent): the tags of its resource-days merged
        day by day, so a tag retagged within the bill takes its latest day's value, the same on every run. Only
        those resources' rows are read, ``IN`` lists of 500, not every resource-day of the account."""
        wanted = sorted({r.lower() for r in resource_ids})
        found: dict[str, dict[str, str]] = defaultdict(dict)
        lowered = func.lower(BillResourceCost.resource_id)
        for start in range(0, len(wanted), 500):
            stmt = (
                select(lowered, BillResourceCost.tags)
                .where(BillResourceCost.account_id == account_id, lowered.in_(wanted[start : start + 500]))
                .order_by(BillResourceCost.day, BillResourceCost.id)
            )
            for resource_id, tags in self.session.execute(stmt):
                if tags:
                    found[str(resource_id)].update({str(k): str(v) for k, v in tags.items()})
        return dict(found)

    def commitments(self, account_id: str | None = None) -> list[tuple[CommitmentRecord, str]]:
        """Every stored commitment with its billing period, the latest period first."""
        from chipwise.store.tables import BillCommitment

        stmt = select(BillCommitment, BillPeriodRow.billing_period).join(
            BillPeriodRow, BillPeriodRow.id == BillCommitment.period_id
        )
        if account_id is not None:
            stmt = stmt.where(BillCommitment.account_id == account_id)
        stmt = stmt.order_by(BillPeriodRow.billing_period.desc(), BillCommitment.arn)
        return [(record_of(CommitmentRecord, row[0]), str(row[1])) for row in self.session.execute(stmt)]

    def unattributed(self, account_id: str | None = None) -> list[UnattributedRecord]:
        from chipwise.store.tables import BillUnattributed

        stmt = select(BillUnattributed)
        if account_id is not None:
            stmt = stmt.where(BillUnattributed.account_id == account_id)
        rows = self.session.scalars(stmt.order_by(BillUnattributed.account_id, BillUnattributed.category))
        return [record_of(UnattributedRecord, row) for row in rows]

    def teams_by_arn(self, account_id: str, arns: Iterable[str], keys: Sequence[str]) -> dict[str, str]:
        """The team of each stored resource of ``arns``: its live tags first, else the cost allocation tags the bill
        carries for it (by EC2 instance id, else ARN); resources with neither are absent. The bill's tags are read
        only when a resource has no live team tag (an organisation's report asks once per account)."""
        from chipwise.models.common import first_tag
        from chipwise.store.tables import Resource

        wanted = list(set(arns))
        if not keys or not wanted:
            return {}
        found: list[tuple[str, str | None, str]] = []  # (ARN, its live team, its id in the bill), in row order
        if self.session.autoflush:
            self.session.flush()  # as the session's own execute would (the reads below run on its connection)
        for start in range(0, len(wanted), 500):
            chunk = wanted[start : start + 500]
            # the details' instance id alone, extracted in SQL as text (the whole details decoded for it cost as
            # much as the tags, and the value as JSON a decode per row; an organisation's report asks this of every
            # finding)
            rows = self.session.connection().execute(  # columns: no ORM loading of the rows
                select(Resource.arn, Resource.tags, Resource.details["instance_id"].as_string()).where(
                    Resource.arn.in_(chunk)
                )
            )
            for arn, tags, instance_id in rows.all():  # fetched at once, not a row at a time
                live = {str(k): str(v) for k, v in (tags or {}).items()}
                found.append((str(arn), first_tag(live, keys), str(instance_id or arn).lower()))
        # the bill's tags of the resources no live tag names a team for (those alone)
        billed = self.resource_tags(account_id, (bill_id for _, team, bill_id in found if team is None))
        teams: dict[str, str] = {}
        for arn, live_team, bill_id in found:
            team = live_team or first_tag(billed.get(bill_id, {}), keys)
            if team:
                teams[arn] = team
        return teams

    def resource_days(self, account_id: str) -> Iterator[ResourceDay]:
        """Every stored resource-day of an account with an instance type (the commitments' usage, issue 38)."""
        stmt = select(
            BillResourceCost.resource_id, BillResourceCost.region, BillResourceCost.day, BillResourceCost.service,
            BillResourceCost.instance_type, BillResourceCost.pricing, BillResourceCost.commitment_arn,
            BillResourceCost.effective_cost, BillResourceCost.public_on_demand_cost, BillResourceCost.usage_hours,
        ).where(
            BillResourceCost.account_id == account_id,
            BillResourceCost.parent_resource_id.is_(None),
            BillResourceCost.instance_type.is_not(None),
        )  # fmt: skip
        for row in self.session.execute(stmt):
            yield ResourceDay(
                str(row[0]), str(row[1]), row[2], str(row[3]), row[4], str(row[5]), row[6],
                _dec(row[7]), _dec(row[8]), _dec(row[9]),
            )  # fmt: skip
