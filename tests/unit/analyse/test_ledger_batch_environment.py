"""Issue 35's known gap: a Batch compute environment is billed on the EC2 instances it launched (their instance ids,
never its own ARN). With the instance ids its inventory read (its ECS cluster's container instances) the ledger
prices the environment from their lines, once: the environment owns them, each instance names it (``billed_on``).
Without them the environment stays "not in the bill" with the reason, never a guess."""

from __future__ import annotations

from datetime import UTC, date, datetime
from decimal import Decimal

import pytest

from chipwise.analyse.hourly_rates import bill_rates
from chipwise.analyse.ledger import bill_costs, bill_window, not_in_bill, price_from_bill
from chipwise.catalog import get_catalog
from chipwise.models.bill import ResourceBill
from chipwise.models.findings import FindingDocument, RecommendationDoc
from chipwise.models.records import CollectedResource
from chipwise.models.resources import BatchEnvironmentDetails, InstanceDetails
from chipwise.models.scan import ScanResource
from chipwise.presentation import ledger
from chipwise.spend import billed_costs, resources_costing

ACCOUNT = "123456789012"
REGION = "us-east-1"
START, END = date(2026, 11, 15), date(2026, 11, 29)
DAYS = {START.replace(day=15 + i) for i in range(14)}
HOURS = Decimal(14 * 24)
RATE = Decimal("21.50")  # trn1.32xlarge on demand
POOL = f"arn:aws:batch:{REGION}:{ACCOUNT}:compute-environment/trn1-pool"
IDS = ("i-0aaaaaaaaaaaaaaaa", "i-0bbbbbbbbbbbbbbbb")
NOW = datetime(2026, 11, 29, tzinfo=UTC)


def _instance(instance_id: str) -> CollectedResource:
    return CollectedResource(
        f"arn:aws:ec2:{REGION}:{ACCOUNT}:instance/{instance_id}", "ec2_instance", instance_id, "trn1.32xlarge", 1,
        "trainium", "running", False, details=InstanceDetails(instance_id=instance_id),
    )  # fmt: skip


def _pool(instance_ids: list[str] | None) -> CollectedResource:
    details = BatchEnvironmentDetails(instance_types=["trn1.32xlarge"], min_vcpus=256, instance_ids=instance_ids)
    return CollectedResource(
        POOL, "batch_compute_environment", "trn1-pool", "trn1.32xlarge", 0, "trainium", "ENABLED", False,
        details=details,
    )  # fmt: skip


def _line(instance_id: str, pricing: str = "on_demand", rate: Decimal = RATE) -> ResourceBill:
    return ResourceBill(
        instance_id, "trn1.32xlarge", "AmazonEC2", effective_cost=rate * HOURS, billed_cost=rate * HOURS,
        public_on_demand_cost=RATE * HOURS, usage_hours=HOURS, pricings={pricing}, periods={"2026-11"},
        tags={"user:team": "research"},
    )  # fmt: skip


def _finding(resource: CollectedResource) -> FindingDocument:
    monthly = RATE * 730 * 2  # the two instances minvCpus 256 holds
    return FindingDocument.model_validate(
        {
            "finding_id": "f-pool", "rule_id": "capacity_held_idle", "account_id": ACCOUNT, "region": REGION,
            "resource_id": resource.key, "resource_kind": resource.kind, "resource_name": resource.name,
            "instance_type": resource.instance_type, "instance_count": 0, "monthly_cost_usd": monthly,
            "estimated_monthly_savings_usd": monthly, "recommendation": RecommendationDoc(action="rightsize"),
            "confidence": "high", "effort": "none", "break_even_months": None, "summary": resource.name,
            "evidence": {}, "status": "open", "first_seen": NOW, "last_seen": NOW,
        }
    )  # fmt: skip


def _scan(collected: list[CollectedResource]) -> list[ScanResource]:
    return [
        ScanResource(
            id=r.key, arn=r.arn, kind=r.kind, name=r.name, instance_type=r.instance_type,
            instance_count=r.instance_count, platform=r.platform, state=r.state,
        )
        for r in collected
    ]  # fmt: skip


def _priced(
    pool: CollectedResource, bills: dict[str, ResourceBill]
) -> tuple[dict[str, ScanResource], list[str], object]:
    collected = [pool, *(_instance(i) for i in IDS)]
    by_key = {r.key: r for r in collected}
    resources = _scan(collected)
    finding = _finding(pool)
    price_from_bill(resources, by_key, bills, team_keys=("team", "user:team"), owner_keys=())
    window = bill_window(bills, [], {"2026-11": DAYS}, START, END)
    missing = not_in_bill(resources, by_key, [finding], get_catalog(), region=REGION, last_day=window.last_day)
    figures = ledger([finding], bill_costs(window, ["2026-11"], missing), 14 * 24)
    return {r.name: r for r in resources}, [m.name for m in missing], (figures, finding, resources, window)


def test_the_environment_is_priced_from_its_instances_lines_and_each_line_counts_once() -> None:
    # Given an environment whose two instances the bill names (one of them covered by a Savings Plan)
    bills = {IDS[0]: _line(IDS[0]), IDS[1]: _line(IDS[1], "savings_plan", Decimal("14.00"))}
    found, missing, extra = _priced(_pool(list(IDS)), bills)
    figures, finding, resources, window = extra  # type: ignore[misc]
    pool = found["trn1-pool"]
    # Then the environment carries both instances' lines: cost, hours, its own effective rate and pricings, team
    assert pool.cost_usd == (RATE + Decimal("14.00")) * HOURS
    assert pool.usage_hours == 2 * HOURS and pool.effective_hourly_rate_usd == Decimal("17.750000")
    assert pool.public_on_demand_rate_usd == RATE and pool.pricing == ["on_demand", "savings_plan"]
    assert pool.team == "research"
    # And each instance names the environment and carries no cost of its own: the lines are counted once
    for instance_id in IDS:
        assert found[instance_id].billed_on == POOL and found[instance_id].cost_usd is None
    assert sum((r.cost_usd or Decimal(0) for r in resources), Decimal(0)) == window.attributed_usd
    # And nothing is "not in the bill": the finding on the environment is in "% of spend"
    assert missing == []
    assert figures.spend is not None and figures.spend.not_in_bill == ()
    costing = resources_costing(figures.spend, {r.id: r.cost_usd for r in resources if r.cost_usd}, [finding])
    assert costing == figures.spend.monthly_attributed_usd  # the environment's lines, once


def test_an_instance_the_bill_does_not_name_is_not_hidden_behind_its_environment() -> None:
    # Given the bill names one of the environment's two instances
    found, missing, _ = _priced(_pool(list(IDS)), {IDS[0]: _line(IDS[0])})
    # Then the environment carries that line, and the other instance is missing from the bill in its own name
    assert found["trn1-pool"].cost_usd == RATE * HOURS
    assert found[IDS[0]].billed_on == POOL and found[IDS[1]].billed_on is None
    assert missing == [IDS[1]]


@pytest.mark.parametrize(
    ("instance_ids", "why"),
    [
        (None, "its instances were not read (no ECS cluster, or the ECS calls were refused)"),
        ([], "no instance of it was registered in its ECS cluster when scanned"),
        (list(IDS), f"the bill names none of its instances ({IDS[0]}, {IDS[1]})"),
    ],
)
def test_without_its_instances_lines_the_environment_stays_not_in_the_bill_with_the_reason(
    instance_ids: list[str] | None, why: str
) -> None:
    # Given an environment whose instances are unknown, none, or not in the bill (which has another resource only)
    other = "i-0ccccccccccccccccc"
    found, missing, extra = _priced(_pool(instance_ids), {other: _line(other)})
    figures = extra[0]  # type: ignore[index]
    # Then it is not priced from any line, and is listed as not in the bill at its finding's figure, first reason
    # naming why its instances did not price it; its finding stays out of "% of spend"
    assert found["trn1-pool"].cost_usd is None
    assert "trn1-pool" in missing
    (item,) = [m for m in figures.spend.not_in_bill if m.name == "trn1-pool"]
    assert item.list_monthly_usd == RATE * 730 * 2
    assert item.reasons[0] == (
        "a Batch compute environment is billed on the EC2 instances it launches (their instance ids), never on its "
        f"own ARN: {why}"
    )
    assert all(r.billed_on is None for r in found.values())


def test_the_rules_rate_for_the_environment_is_its_instances_bill_rate() -> None:
    # Given the bill's usage per resource id, as the profile builder reads it (public, effective, hours, committed)
    usage = {
        IDS[0]: (RATE * HOURS, RATE * HOURS, HOURS, False),
        IDS[1]: (RATE * HOURS, Decimal(14) * HOURS, HOURS, True),
    }
    rows = [
        {"id": 1, "kind": "batch_compute_environment", "arn": POOL, "instance_type": "trn1.32xlarge",
         "details": {"instance_ids": list(IDS)}},
        {"id": 2, "kind": "batch_compute_environment", "arn": POOL + "-unread", "instance_type": "trn1.32xlarge",
         "details": {"instance_ids": None}},
        {"id": 3, "kind": "ec2_instance", "arn": f"arn:aws:ec2:{REGION}:{ACCOUNT}:instance/{IDS[0]}",
         "instance_type": "trn1.32xlarge", "details": {"instance_id": IDS[0]}},
    ]  # fmt: skip
    rates = bill_rates(usage, REGION, get_catalog(), rows)
    # Then the environment's rate is its instances' effective cost over their hours, from the bill, with the
    # commitment's discount; the unread one has none (the rules fall back to the account's or the list rate)
    pool = rates[1]["trn1.32xlarge"]
    assert pool.hourly_rate == Decimal("17.750000") and pool.rate_source == "bill"
    assert pool.commitment_discount == (1 - Decimal("35.5") / 43).quantize(Decimal("0.000001"))
    assert 2 not in rates
    assert rates[3]["trn1.32xlarge"].hourly_rate == RATE  # the instance keeps its own rate for its own rules


def test_billed_costs_never_list_an_instance_its_environment_carries() -> None:
    bills = {IDS[0]: _line(IDS[0]), IDS[1]: _line(IDS[1])}
    _, _, extra = _priced(_pool(list(IDS)), bills)
    resources = extra[2]  # type: ignore[index]
    billed = {r.id: r.cost_usd for r in resources if r.cost_usd is not None}
    assert list(billed) == [POOL] and billed_costs(None) == {}


def test_a_resource_s_live_tags_name_its_team_and_owner_before_the_bill_s() -> None:
    """The live tags first, then the bill's cost allocation tags (as the findings' lists and the reports take a team):
    a live ``cost-center`` wins over the bill's ``user:team`` though that key comes first; without a live one, the
    bill's names it; an owner likewise."""
    live = _instance(IDS[0])
    live.tags = {"cost-center": "search", "Owner": "ana@example.com"}
    billed_only = _instance(IDS[1])
    bills = {IDS[0]: _line(IDS[0]), IDS[1]: _line(IDS[1])}
    bills[IDS[1]].tags = {"user:team": "research", "user:owner": "bo@example.com"}
    resources = _scan([live, billed_only])
    keys = ("user:team", "cost-center")
    price_from_bill(
        resources, {r.key: r for r in (live, billed_only)}, bills, team_keys=keys, owner_keys=("user:owner", "owner")
    )
    assert [(r.team, r.owner) for r in resources] == [("search", "ana@example.com"), ("research", "bo@example.com")]
