"""``chipwise bill show``'s table read from the database: its totals (per account, service and team) and its top
lines are what summing and cutting every streamed line (``iter_spend``) gives, whatever the filters."""

from __future__ import annotations

from collections import defaultdict
from datetime import UTC, date, datetime, timedelta
from decimal import Decimal
from itertools import product

from sqlalchemy.orm import Session, sessionmaker

from chipwise.models.bill import BillPeriod, ResourceCost
from chipwise.store.repositories.bill import BillRepository, SpendLine, SpendTotal

KEYS = ("user:team", "user:squad")
FIRST = date(2026, 11, 1)


def _day(
    n: int, resource: str, account: str, region: str, cost: str, tags: dict[str, str], **extra: str
) -> ResourceCost:
    value = Decimal(cost)
    return ResourceCost(
        account_id=account,
        region=region,
        day=FIRST + timedelta(days=n),
        resource_id=resource,
        service="AmazonEC2" if resource.startswith("i-") else "AmazonSageMaker",
        usage_type="BoxUsage:g5.xlarge",
        instance_type="g5.xlarge",
        pricing="on_demand",
        effective_cost=value,
        billed_cost=value,
        public_on_demand_cost=value * 2,
        public_on_demand_rate=Decimal("1.006"),
        usage_hours=Decimal(24),
        tags=tags,
        **extra,  # type: ignore[arg-type]
    )


def _bill(session: Session) -> None:
    """Two accounts, two regions; teams by the first key or the second, tags that change between days or are
    empty, a resource with none, equal spends (ties), and an EKS pod's share (left out)."""
    days = []
    for n in range(3):
        days += [
            _day(n, "i-a1", "111111111111", "us-east-1", "10.123456", {"user:team": "ml"}),
            _day(n, "i-a2", "111111111111", "us-east-1", "10.123456", {"user:team": "ml" if n else "zeta"}),
            _day(n, "i-a3", "111111111111", "us-west-2", "7.5", {"user:team": "", "user:squad": "search"}),
            _day(n, "i-a4", "111111111111", "us-west-2", "0.333333", {}),
            _day(n, "ep-b1", "222222222222", "us-east-1", "20.000001", {"user:squad": "search"}),
            _day(n, "i-b2", "222222222222", "us-east-1", "10.123456", {"user:team": "ml"}),
            _day(n, "pod-1", "222222222222", "us-east-1", "5", {"user:team": "ml"}, parent_resource_id="i-b2"),
        ]
    days.append(_day(3, "i-a3", "111111111111", "us-east-1", "1.25", {"user:team": "infra"}))
    BillRepository(session).replace_period(
        BillPeriod(
            billing_period="2026-11",
            table="COST_AND_USAGE_REPORT",
            export_uri="s3://bills/cur2",
            manifest_uri="s3://bills/cur2/m.json",
            execution_id="x",
            engine="duckdb",
            payer_account_id="111111111111",
            resources=days,
        ),
        datetime(2026, 12, 1, tzinfo=UTC),
    )


def _summed(lines: list[SpendLine]) -> list[SpendTotal]:
    groups: dict[tuple[str, str, str | None], list[SpendLine]] = defaultdict(list)
    for line in lines:  # in the lines' order: a group comes where its first line does
        groups[(line.account_id, line.service, line.team)].append(line)
    return [
        SpendTotal(a, s, t, sum((x.effective_cost for x in group), Decimal(0)), len(group))
        for (a, s, t), group in groups.items()
    ]


def test_the_databases_totals_and_top_lines_are_the_streamed_lines_summed_and_cut(
    session_factory: sessionmaker[Session],
) -> None:
    # Given a bill with teams found by two keys, two accounts and regions, ties and a pod's share
    with session_factory.begin() as session:
        _bill(session)
    # When it is read whole (every line streamed) and by the database, under every filter
    with session_factory() as session:
        bills = BillRepository(session)
        for account, region, team in product(
            (None, "111111111111"), (None, "us-east-1", "us-west-2"), (None, "ml", "search", "infra", "nobody")
        ):
            lines = [x for x in bills.iter_spend(account, KEYS, region=region) if team is None or x.team == team]
            # Then the database's totals are the lines' sums, in the order their groups first come, and its lines
            # the first of the stream
            for limit in (1, 2, 100, None):
                top, totals = bills.spend_table(account, KEYS, region=region, team=team, limit=limit)
                assert totals == _summed(lines), (account, region, team, limit)
                assert top == lines[:limit], (account, region, team, limit)
    # And the teams are the ones the tags say: the least non-empty value of the first key that has one
    with session_factory() as session:
        teams = {x.resource_id: x.team for x in BillRepository(session).spend_table(None, KEYS, limit=None)[0]}
    assert teams == {"i-a1": "ml", "i-a2": "ml", "i-a3": "infra", "i-a4": None, "ep-b1": "search", "i-b2": "ml"}


def test_a_resource_without_a_live_team_takes_its_bills_latest_tags(session_factory: sessionmaker[Session]) -> None:
    """``teams_by_arn``: a resource whose live tags name no team takes the cost allocation tags the bill carries
    for it (by instance id, whatever its case), merged day by day so that a tag retagged within the bill takes its
    latest day's value (the same on every run); a live team tag comes first; a resource the bill does not name
    and no live tag names has no team."""
    from chipwise.store.tables import Account, Resource

    def arn(name: str) -> str:
        return f"arn:aws:ec2:us-east-1:111111111111:instance/{name}"

    stored: list[tuple[str, str, dict[str, str]]] = [
        ("a1", "i-a1", {"team": "live"}),
        ("a2", "I-A2", {}),
        ("a3", "i-a3", {}),
        ("gone", "i-zz", {}),
    ]
    with session_factory.begin() as session:
        _bill(session)
        session.add(Account(account_id="111111111111", name="Account 1"))
        session.flush()
        for name, instance_id, tags in stored:
            session.add(
                Resource(
                    account_id="111111111111",
                    region="us-east-1",
                    arn=arn(name),
                    kind="ec2_instance",
                    name=name,
                    instance_type="g5.xlarge",
                    instance_count=1,
                    platform="nvidia",
                    state="running",
                    tags=tags,
                    hints={},
                    details={"instance_id": instance_id},
                )
            )
    with session_factory() as session:
        teams = BillRepository(session).teams_by_arn(
            "111111111111", [arn(name) for name, _, _ in stored], ("team", *KEYS)
        )
    # i-a2: "zeta" on its first day, "ml" after; i-a3: squad "search" with an empty team, then team "infra"
    assert teams == {arn("a1"): "live", arn("a2"): "ml", arn("a3"): "infra"}
