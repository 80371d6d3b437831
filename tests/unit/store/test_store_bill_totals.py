"""The bill's per-resource totals (``bill_resource_totals``), what ``chipwise bill show`` reads: the writer stores
with each bill its resource-days grouped per account, region, service, resource and tag set (EKS pods' shares left
out), on a store of two payers, two billing periods, three accounts and several teams; a period ingested again
replaces its totals with its resource-days; the lines read from them are the resource-days summed per resource, with
the team the tags say, whatever the filters; and the migration that adds the table sums the bills stored before."""

from __future__ import annotations

from collections import defaultdict
from datetime import UTC, date, datetime, timedelta
from decimal import Decimal
from itertools import product
from typing import Any

from alembic import command
from sqlalchemy import func, inspect, select
from sqlalchemy.orm import Session, sessionmaker

from chipwise.models.bill import BillPeriod, ResourceCost
from chipwise.store.engine import get_engine
from chipwise.store.repositories.bill import BillRepository, SpendLine
from chipwise.store.session import alembic_config, get_session_factory, upgrade
from chipwise.store.tables import BillPeriodRow, BillResourceCost, BillResourceTotal

KEYS = ("user:team", "user:squad")
PAYER_A, PAYER_B = "111111111111", "222222222222"
MEMBER = "333333333333"  # an account of payer A's organisation


def _day(
    when: date, resource: str, account: str, region: str, cost: str, tags: dict[str, str], **extra: Any
) -> ResourceCost:
    value = Decimal(cost)
    return ResourceCost(
        account_id=account,
        region=region,
        day=when,
        resource_id=resource,
        service="AmazonEC2" if resource.startswith("i-") else "AmazonSageMaker",
        usage_type="BoxUsage:g5.xlarge",
        instance_type=extra.pop("instance_type", "g5.xlarge"),
        pricing=extra.pop("pricing", "on_demand"),
        effective_cost=value,
        billed_cost=value,
        public_on_demand_cost=value * 3,
        public_on_demand_rate=Decimal("1.006"),
        usage_hours=Decimal("23.5"),
        tags=tags,
        **extra,
    )


def _days(period: str, payer: str, scale: str = "1") -> list[ResourceCost]:
    """A payer's resource-days of one period: teams by the first key or the second, tags changing between days or
    empty, a resource in two regions, two pricings on one day, an instance type that changes, ties, a pod's share."""
    first = date.fromisoformat(f"{period}-01")
    found: list[ResourceCost] = []
    k = Decimal(scale)
    for n in range(4):
        when = first + timedelta(days=n)
        if payer == PAYER_A:
            found += [
                _day(when, "i-a1", PAYER_A, "us-east-1", str(k * Decimal("10.123456")), {"user:team": "ml"}),
                _day(when, "i-a2", PAYER_A, "us-east-1", "10.123456", {"user:team": "ml" if n else "zeta"}),
                _day(when, "i-a3", PAYER_A, "us-west-2", "7.5", {"user:team": "", "user:squad": "search"}),
                _day(when, "i-a4", PAYER_A, "us-west-2", "0.333333", {}, instance_type=f"g5.{n + 1}xlarge"),
                _day(when, "i-m1", MEMBER, "eu-west-1", "3.000007", {"user:squad": "infra"}),
                _day(when, "i-m1", MEMBER, "eu-west-1", "1.1", {"user:squad": "infra"}, pricing="spot"),
                _day(when, "pod-1", MEMBER, "eu-west-1", "5", {"user:team": "ml"}, parent_resource_id="i-m1"),
            ]
        else:
            found += [
                _day(when, "ep-b1", PAYER_B, "us-east-1", "20.000001", {"user:squad": "search"}),
                _day(when, "i-b2", PAYER_B, "us-east-1", "10.123456", {"user:team": "ml"}),
                _day(when, "i-a1", PAYER_B, "us-east-1", "0.5", {"user:team": "alpha"}),  # another account's id
            ]
    if payer == PAYER_A:
        found.append(_day(first + timedelta(days=5), "i-a3", PAYER_A, "us-east-1", "1.25", {"user:team": "infra"}))
    return found


def _store(session: Session, period: str, payer: str, days: list[ResourceCost], uri: str = "s3://bills/cur2") -> None:
    BillRepository(session).replace_period(
        BillPeriod(
            billing_period=period,
            table="COST_AND_USAGE_REPORT",
            export_uri=f"{uri}/{payer}",
            manifest_uri=f"{uri}/{payer}/m.json",
            execution_id=f"{period}-{payer}",
            engine="duckdb",
            payer_account_id=payer,
            resources=days,
        ),
        datetime(2026, 12, 1, tzinfo=UTC),
    )


def _organisation(session_factory: sessionmaker[Session]) -> dict[tuple[str, str], list[ResourceCost]]:
    bills = {
        (period, payer): _days(period, payer) for period, payer in product(("2026-10", "2026-11"), (PAYER_A, PAYER_B))
    }
    for (period, payer), days in bills.items():
        with session_factory.begin() as session:
            _store(session, period, payer, days)
    return bills


def _canonical(tags: Any) -> tuple[tuple[str, str], ...]:
    return tuple(sorted((tags or {}).items()))


def _totals(session: Session) -> list[tuple[Any, ...]]:
    t = BillResourceTotal
    names = ("period_id", "account_id", "region", "service", "resource_id", "instance_type", "effective_cost")
    rows = session.execute(
        select(*(getattr(t, name) for name in names), t.public_on_demand_cost, t.usage_hours, t.tags)
    )
    return sorted((*row[:-1], _canonical(row[-1])) for row in rows)


def _grouped_days(session: Session) -> list[tuple[Any, ...]]:
    """The resource-days grouped as the totals should be: a GROUP BY, here."""
    d = BillResourceCost
    key = (d.period_id, d.account_id, d.region, d.service, d.resource_id, d.tags)
    rows = session.execute(
        select(
            *key[:-1], func.max(d.instance_type), func.sum(d.effective_cost), func.sum(d.public_on_demand_cost),
            func.sum(d.usage_hours), d.tags,
        ).where(d.parent_resource_id.is_(None)).group_by(*key)
    )  # fmt: skip
    return sorted((*row[:-1], _canonical(row[-1])) for row in rows)


def _expected(
    bills: dict[tuple[str, str], list[ResourceCost]], account: str | None, region: str | None
) -> list[SpendLine]:
    """``bill show``'s lines computed here from the resource-days themselves: per account, service and resource,
    the days of ``region`` summed; the team per resource id, over its days in every region (of ``account``)."""
    days = [d for ds in bills.values() for d in ds if d.parent_resource_id is None]
    days = [d for d in days if account is None or d.account_id == account]
    values: dict[str, dict[str, list[str]]] = defaultdict(lambda: defaultdict(list))
    for d in days:
        for key, value in d.tags.items():
            if value:
                values[d.resource_id][key].append(value)
    teams = {r: next((min(v[k]) for k in KEYS if v[k]), None) for r, v in values.items()}
    sums: dict[tuple[str, str, str], list[Any]] = {}
    for d in days:
        if region is not None and d.region != region:
            continue
        line = sums.setdefault((d.account_id, d.service, d.resource_id), [None, Decimal(0), Decimal(0), Decimal(0)])
        line[0] = max(filter(None, (line[0], d.instance_type)))
        line[1] += d.effective_cost
        line[2] += d.public_on_demand_cost
        line[3] += d.usage_hours
    lines = [SpendLine(a, s, r, t, e, o, h, teams.get(r)) for (a, s, r), (t, e, o, h) in sums.items()]
    return sorted(lines, key=lambda x: (-x.effective_cost, x.account_id, x.resource_id, x.service))


def test_each_bills_totals_are_its_resource_days_grouped(session_factory: sessionmaker[Session]) -> None:
    # Given two payers' bills of two periods, stored through the bill's writer
    _organisation(session_factory)
    with session_factory() as session:
        # Then the totals stored with them are the resource-days grouped per period, account, region, service,
        # resource and tag set (the pod's share left out), to the micro-dollar
        totals = _totals(session)
        assert totals == _grouped_days(session)
        assert len({row[0] for row in totals}) == 4
        assert not any(row[4] == "pod-1" for row in totals)
        # a resource whose tags change between days has a total per tag set; its two pricings are summed
        a2 = [row for row in totals if row[4] == "i-a2"]
        assert len(a2) == 4 and {row[-1] for row in a2} == {(("user:team", "ml"),), (("user:team", "zeta"),)}
        m1 = {row[6] for row in totals if row[4] == "i-m1"}
        assert m1 == {Decimal("16.400028")}


def test_the_lines_read_from_the_totals_are_the_resource_days_summed(session_factory: sessionmaker[Session]) -> None:
    # Given the organisation's bills
    bills = _organisation(session_factory)
    # When bill show's lines are read (from the totals), under every filter
    with session_factory() as session:
        repository = BillRepository(session)
        for account, region in product((None, PAYER_A, MEMBER, PAYER_B), (None, "us-east-1", "eu-west-1")):
            lines = list(repository.iter_spend(account, KEYS, region=region))
            # Then they are the resource-days summed per resource, largest first, each with its team
            assert lines == _expected(bills, account, region), (account, region)
            top, _ = repository.spend_table(account, KEYS, region=region, limit=None)
            assert top == lines, (account, region)
    # And the teams are the ones the tags say: the least non-empty value of the first key that has one (i-a1 is
    # two accounts' id: its team is read over both when no account is chosen)
    with session_factory() as session:
        teams = {(x.account_id, x.resource_id): x.team for x in BillRepository(session).iter_spend(None, KEYS)}
    assert teams == {
        (PAYER_A, "i-a1"): "alpha", (PAYER_B, "i-a1"): "alpha", (PAYER_A, "i-a2"): "ml", (PAYER_A, "i-a3"): "infra",
        (PAYER_A, "i-a4"): None, (MEMBER, "i-m1"): "infra", (PAYER_B, "ep-b1"): "search", (PAYER_B, "i-b2"): "ml",
    }  # fmt: skip


def test_a_period_ingested_again_replaces_its_totals(session_factory: sessionmaker[Session]) -> None:
    # Given the organisation's bills
    bills = _organisation(session_factory)
    with session_factory() as session:
        kept = [row for row in _totals(session) if row[0] != _period_id(session, "2026-11", PAYER_A)]
    # When payer A's November is delivered again, by another export, with other figures
    bills[("2026-11", PAYER_A)] = again = _days("2026-11", PAYER_A, scale="2")
    with session_factory.begin() as session:
        _store(session, "2026-11", PAYER_A, again, uri="s3://bills/focus")
    # Then its totals are the new resource-days grouped, the other bills' totals are untouched, and the lines read
    # count the new figures once
    with session_factory() as session:
        new_id = _period_id(session, "2026-11", PAYER_A)
        totals = _totals(session)
        assert totals == _grouped_days(session)
        assert [row for row in totals if row[0] != new_id] == kept
        a1 = sum((row[6] for row in totals if row[0] == new_id and row[4] == "i-a1"), Decimal(0))
        assert a1 == Decimal("80.987648")
        assert list(BillRepository(session).iter_spend(None, KEYS)) == _expected(bills, None, None)


def _period_id(session: Session, period: str, payer: str) -> int:
    return session.scalars(
        select(BillPeriodRow.id).where(BillPeriodRow.billing_period == period, BillPeriodRow.payer_account_id == payer)
    ).one()


def test_the_migration_sums_the_bills_stored_before_it(empty_url: str) -> None:
    # Given the organisation's bills stored at the head, and what the writer summed
    upgrade(empty_url)
    factory = get_session_factory(empty_url)
    bills = _organisation(factory)
    with factory() as session:
        written = _totals(session)
    # When the store goes back to the revision before the totals (as a store of yesterday's code) and up again
    command.downgrade(alembic_config(empty_url), "0008_i38_commit")
    assert "bill_resource_totals" not in inspect(get_engine(empty_url)).get_table_names()
    upgrade(empty_url)
    # Then the migration's totals are the writer's: the resource-days grouped, read as the same lines
    with factory() as session:
        assert _totals(session) == written == _grouped_days(session)
        assert list(BillRepository(session).iter_spend(None, KEYS)) == _expected(bills, None, None)
