"""The commitments pipeline on a store (issue 38), hand-computed: a p4d instance covered by an EC2 Instance Savings
Plan on p4d (24 $/h committed, 10 months left) whose move to trn1 Chipwise recommends, and a trn1 instance covered by
a Compute Savings Plan whose move to inf2 it recommends."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta
from decimal import Decimal

from sqlalchemy.orm import Session, sessionmaker

from chipwise.models.bill import BillPeriod, Commitment, ResourceCost
from chipwise.models.findings import RecommendationDoc
from chipwise.pipeline.commitments import commitments_advice
from chipwise.presentation import one_time_cost
from chipwise.rules.base import FindingDraft
from chipwise.store.repositories.bill import replace_period
from chipwise.store.repositories.findings import FindingRepository
from chipwise.store.tables import Account

ACCOUNT = "123456789012"
NOW = datetime(2026, 11, 29, 8, tzinfo=UTC)
ISP = f"arn:aws:savingsplans::{ACCOUNT}:savingsplan/isp-p4d"
CSP = f"arn:aws:savingsplans::{ACCOUNT}:savingsplan/csp"
DAYS = [date(2026, 11, 1) + timedelta(days=i) for i in range(10)]


def _day(resource: str, itype: str, day: date, arn: str, effective: str, public: str) -> ResourceCost:
    return ResourceCost(ACCOUNT, "us-east-1", day, resource, "AmazonEC2", f"USE1-BoxUsage:{itype}", itype,
                        "savings_plan", Decimal(effective), Decimal(0), Decimal(public), None, Decimal(24),
                        commitment_arn=arn)  # fmt: skip


def _plan(arn: str, offering: str, family: str | None, hourly: str, end: date, used: str, public: str) -> Commitment:
    return Commitment(arn, ACCOUNT, "savings_plan", offering, family, Decimal(hourly), end, Decimal(used), Decimal(0),
                      Decimal(240), Decimal(480), region="us-east-1" if family else None,
                      covered_on_demand_cost=Decimal(public))  # fmt: skip


def _move(name: str, itype: str, target: str, cost: str, saving: str) -> FindingDraft:
    return FindingDraft(
        rule_id="gpu_training_portable", account_id=ACCOUNT, region="us-east-1",
        resource_arn=f"arn:aws:ec2:us-east-1:{ACCOUNT}:instance/{name}", resource_kind="ec2_instance",
        resource_name=name, instance_type=itype, instance_count=1, monthly_cost_usd=Decimal(cost),
        estimated_monthly_savings_usd=Decimal(saving),
        recommendation=RecommendationDoc(action="migrate", target_platform="trainium", target_instance_type=target,
                                         target_count=1),
        confidence="high", effort="days", break_even_months=1.0, summary=f"{name}: move", evidence={},
    )  # fmt: skip


def test_stranded_and_following_hand_computed(use_db: str, session_factory: sessionmaker[Session]) -> None:
    # p4d: 24 $/h effective (576 a day) of 32 $/h on demand, the plan's whole commitment; trn1: 15 $/h of 20 $/h
    period = BillPeriod("2026-11", "COST_AND_USAGE_REPORT", "s3://b/x", "s3://b/x/m.json", "", "duckdb",
                        payer_account_id=ACCOUNT)  # fmt: skip
    period.resources = [
        *(_day("i-0p4d", "p4d.24xlarge", d, ISP, "576", "768") for d in DAYS),
        *(_day("i-0trn1", "trn1.32xlarge", d, CSP, "360", "480") for d in DAYS),
    ]
    period.commitments = [
        _plan(ISP, "EC2InstanceSavingsPlans", "p4d", "24", date(2027, 9, 29), "5760", "7680"),
        _plan(CSP, "ComputeSavingsPlans", None, "15", date(2028, 1, 31), "3600", "4800"),
    ]
    with session_factory.begin() as session:
        session.add(Account(account_id=ACCOUNT))
        session.flush()
        replace_period(session, period, NOW)
        FindingRepository(session).apply(
            account_id=ACCOUNT, region="us-east-1", rule_ids=["gpu_training_portable"], now=NOW,
            drafts=[_move("i-0p4d", "p4d.24xlarge", "trn1.32xlarge", "23360", "8000"),
                    _move("i-0trn1", "trn1.32xlarge", "inf2.48xlarge", "10950", "3000")],
        )  # fmt: skip
    with session_factory() as session:
        result = commitments_advice(session, account_id=ACCOUNT, now=NOW)
    [stranded] = result.stranded
    # 576 a day = 24 $/h → 17,520 a month owed after the move; 304 days left = 7,296 h = 9.9945 months
    assert (stranded.move.source_family, stranded.move.target_family) == ("p4d", "trn1")
    assert stranded.stranded_monthly == Decimal("17520.00")
    assert stranded.stranded_total == Decimal("175104.00")  # 17,520 x 7,296 / 730
    assert stranded.net_monthly_while_owed == Decimal("-9520.00")  # 8,000 - 17,520
    porting = one_time_cost("migrate", "days")
    # moving on the plan's end: 12-month value = 8,000 x (12 - 9.9945) - porting
    assert stranded.net_value_12m_at_end == (Decimal(8000) * (12 - Decimal(7296) / 730) - porting).quantize(
        Decimal("0.01")
    )
    assert stranded.advice == "move at the commitment's end, on 2027-09-29"
    [following] = result.following
    assert (following.commitment.kind, following.move.source_family, following.commitment.family) == (
        "compute_savings_plan", "trn1", None,
    )  # fmt: skip
    assert {c.arn: c.kind for c in result.held} == {ISP: "ec2_instance_savings_plan", CSP: "compute_savings_plan"}
    # the Compute plan's discount, from the bill: 1 - 3,600 / 4,800 = 25 %
    [compute] = [p for p in result.purchases if p.kind == "compute_savings_plan"]
    assert compute.rate_source.startswith("the account's own bill 2026-11")
