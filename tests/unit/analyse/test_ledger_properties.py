"""The ledger's arithmetic over generated accounts and bills (issue 35): spend = attributed + not attributed to the
cent; every counted finding's resource is in the bill or carries the not-in-bill item; counted savings on what the
bill contains never exceed what the bill says those resources cost, nor spend.

Each generated account: resources (some the bill names, some it lacks), one billing period whose export covers the
first days of the window, costs no resource carries (unused commitments, tax, credits, usage without a resource id)
and findings whose saving is at most their resource's monthly cost: the bill's run rate for a resource the bill
names, the list price for one it lacks (the contract every rule keeps)."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta
from decimal import Decimal
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from chipwise.analyse.ledger import bill_costs, bill_window, not_in_bill, price_from_bill
from chipwise.catalog import get_catalog
from chipwise.economics import cents, monthly_cost, per_month, round_money
from chipwise.models.bill import ResourceBill, Unattributed
from chipwise.models.findings import FindingDocument, RecommendationDoc
from chipwise.models.records import CollectedResource
from chipwise.models.scan import ScanResource
from chipwise.presentation import ledger
from chipwise.spend import resources_costing

ACCOUNT = "123456789012"
REGION = "us-east-1"
START = date(2026, 11, 15)
WINDOW_DAYS = 14
NOW = datetime(2026, 11, 29, tzinfo=UTC)
TYPES = ("ml.g5.xlarge", "ml.inf2.xlarge", "ml.g5.12xlarge", "ml.p4d.24xlarge", "ml.trn1.32xlarge")
CATEGORIES = {
    "commitment_unused": (Decimal(0), Decimal(500)),
    "tax": (Decimal(0), Decimal(2000)),
    "credit": (Decimal(-5000), Decimal(0)),
    "no_resource": (Decimal(0), Decimal(300)),
}

money = st.decimals(min_value=Decimal("0.01"), max_value=Decimal(3000), places=2)


@st.composite
def accounts(draw: st.DrawFn) -> dict[str, Any]:
    covered = draw(st.integers(min_value=1, max_value=WINDOW_DAYS))  # the export's days from the window's start
    resources = draw(
        st.lists(
            st.fixed_dictionaries(
                {
                    "type": st.sampled_from(TYPES),
                    "count": st.integers(min_value=1, max_value=4),
                    "daily": money,  # the bill's effective cost a day
                    "billed": st.booleans(),
                    "finding": st.none() | st.decimals(min_value=0, max_value=1, places=3),  # saving ÷ monthly cost
                }
            ),
            min_size=1,
            max_size=8,
        )
    )
    apart = draw(
        st.lists(
            st.sampled_from(sorted(CATEGORIES)).flatmap(
                lambda c: st.tuples(
                    st.just(c), st.decimals(min_value=CATEGORIES[c][0], max_value=CATEGORIES[c][1], places=4)
                )
            ),
            max_size=6,
        )
    )
    return {"covered": covered, "resources": resources, "apart": apart}


def _finding(index: int, resource: CollectedResource, monthly: Decimal, fraction: Decimal) -> FindingDocument:
    return FindingDocument.model_validate(
        {
            "finding_id": f"f-{index}",
            "rule_id": "gpu_idle",
            "account_id": ACCOUNT,
            "region": REGION,
            "resource_id": resource.key,
            "resource_kind": resource.kind,
            "resource_name": resource.name,
            "instance_type": resource.instance_type,
            "instance_count": resource.instance_count,
            "monthly_cost_usd": monthly,
            "estimated_monthly_savings_usd": cents(monthly * fraction),
            "recommendation": RecommendationDoc(action="delete"),
            "confidence": "high",
            "effort": "none",
            "break_even_months": None,
            "summary": resource.name,
            "evidence": {},
            "status": "open",
            "first_seen": NOW,
            "last_seen": NOW,
        }
    )


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(accounts())
def test_spend_adds_up_and_every_counted_dollar_is_in_the_bill_or_reconciled(account: dict[str, Any]) -> None:
    catalog = get_catalog()
    days = [START + timedelta(days=i) for i in range(account["covered"])]
    hours = Decimal(24 * len(days))
    collected: dict[str, CollectedResource] = {}
    bills: dict[str, ResourceBill] = {}
    findings: list[FindingDocument] = []
    for index, spec in enumerate(account["resources"]):
        arn = f"arn:aws:sagemaker:{REGION}:{ACCOUNT}:endpoint/e-{index}"
        resource = CollectedResource(
            arn, "sagemaker_endpoint", f"e-{index}", spec["type"], spec["count"], "nvidia", "InService", False
        )
        collected[resource.key] = resource
        if spec["billed"]:
            cost = spec["daily"] * len(days)
            bills[arn] = ResourceBill(
                arn,
                spec["type"],
                "AmazonSageMaker",
                effective_cost=cost,
                usage_hours=hours * spec["count"],
                periods={"2026-11"},
            )
            monthly = per_month(cost, hours)  # the bill's run rate: what a rule priced from the bill sees
        else:
            price = catalog.price(spec["type"], REGION)  # ml.p4d has none: nothing to price, nothing counted
            monthly = monthly_cost(price, spec["count"]) if price is not None else Decimal(0)  # at list
        if spec["finding"] is not None:
            findings.append(_finding(index, resource, monthly, spec["finding"]))
    apart = [(p, Unattributed(ACCOUNT, REGION, c, f"{c} reason", amount)) for p, (c, amount) in [
        ("2026-11", item) for item in account["apart"]
    ]]  # fmt: skip
    resources = [
        ScanResource(
            id=r.key,
            arn=r.arn,
            kind=r.kind,
            name=r.name,
            instance_type=r.instance_type,
            instance_count=r.instance_count,
            platform=r.platform,
            state=r.state,
        )
        for r in collected.values()
    ]
    window = bill_window(bills, apart, {"2026-11": set(days)}, START, START + timedelta(days=WINDOW_DAYS))
    price_from_bill(resources, collected, bills, team_keys=(), owner_keys=())
    missing = not_in_bill(resources, collected, findings, catalog, region=REGION, last_day=window.last_day)
    figures = ledger(findings, bill_costs(window, ["2026-11"], missing), WINDOW_DAYS * 24)
    spend = figures.spend
    assert spend is not None and spend.from_bill and spend.days == len(days)

    # spend = attributed + not attributed, to the cent, over the window and a month
    assert spend.window_usd == spend.attributed_usd + spend.unattributed_usd
    assert spend.monthly_usd == spend.monthly_attributed_usd + spend.monthly_unattributed_usd
    assert spend.attributed_usd == cents(sum((b.effective_cost for b in bills.values()), Decimal(0)))
    by_category: dict[str, Decimal] = {}
    for _, item in apart:  # the export covers only the window's days here: each period's whole amount is the window's
        by_category[item.category] = by_category.get(item.category, Decimal(0)) + item.amount
    assert spend.unattributed_usd == sum((cents(v) for v in by_category.values()), Decimal(0))

    # every counted finding's resource is in the bill or carries the not-in-bill item (priced at list)
    billed = {r.id for r in resources if r.cost_usd is not None}
    lacking = {m.resource_id for m in spend.not_in_bill}
    assert billed == {collected_key for collected_key, r in collected.items() if r.arn in bills}
    assert not billed & lacking
    for row in figures.rows:
        if row.counted:
            assert row.document.resource_id in billed | lacking

    # counted savings on what the bill contains ≤ what those resources cost by the bill ≤ attributed spend; ≤ spend
    # unless credits outweigh the rest of what no resource carries; what the bill lacks is kept out of the share.
    # Each finding's monthly figure is rounded to the cent on its own: half a cent a finding is the only slack.
    inside = figures.total_usd - figures.outside_bill_usd
    slack = Decimal("0.005") * len(findings)
    costing = resources_costing(spend, {r.id: r.cost_usd for r in resources if r.cost_usd is not None}, findings)
    assert costing is not None and inside <= costing + slack
    assert costing <= spend.monthly_attributed_usd
    if spend.monthly_unattributed_usd >= 0:
        assert costing <= spend.monthly_usd and inside <= spend.monthly_usd + slack
    if spend.monthly_usd > 0:
        assert figures.addressable_percent == round_money(inside * 100 / spend.monthly_usd, 1)
    assert figures.outside_bill_usd == cents(
        sum((f.estimated_monthly_savings_usd for f in findings if f.resource_id in lacking), Decimal(0))
    )
