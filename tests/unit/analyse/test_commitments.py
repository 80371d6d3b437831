"""Commitments after the fix (issue 38), computed by hand: what a move strands on a family-bound plan and when it
pays off, that Compute Savings Plans follow the move, a purchase sized to the usage left after the fixes, held
capacity priced for its days left, and what to let lapse."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta
from decimal import Decimal

from chipwise.analyse.commitments import (
    HeldCommitment,
    Move,
    Replacement,
    UsageHour,
    held_capacity,
    remaining_spend,
    size_purchase,
    stranded_by_move,
    to_let_lapse,
    versus_aws,
)

TODAY = date(2026, 11, 29)
D = Decimal


def _commitment(
    kind: str, *, family: str | None = "p4d", end: date | None = None, hourly: str = "20.5479"
) -> HeldCommitment:
    return HeldCommitment(
        arn=f"arn:aws:savingsplans::111122223333:savingsplan/{kind}",
        account_id="111122223333",
        kind=kind,  # type: ignore[arg-type]
        region="us-east-1" if family else None,
        family=family,
        hourly_commitment=D(hourly),
        start=date(2025, 9, 29),
        end=end or TODAY + timedelta(days=304),  # 7,296 hours: 9.9945 months of 730 hours
        utilisation=D("1"),
        covered_accelerator_hours=D("720"),
        effective_rate=D("20.5479"),
        source="bill 2026-11 (CUR 2.0)",
    )


MOVE = Move(
    finding_id="f-p4d",
    resource_id="i-0p4d",
    account_id="111122223333",
    region="us-east-1",
    service="ec2",
    source_family="p4d",
    target_family="trn1",
    monthly_saving=D("9000"),
    one_time_cost=D("20000"),
    covered_monthly=D("15000"),
)


def test_a_move_off_an_ec2_instance_plan_strands_its_dollars_until_the_end() -> None:
    stranding = stranded_by_move(MOVE, _commitment("ec2_instance_savings_plan"), TODAY)
    assert stranding is not None
    # 15,000 a month of the plan was used by the p4d and is owed for nothing after the move
    assert stranding.stranded_monthly == D("15000.00")
    assert stranding.months_left == D(7296) / D(730)
    assert stranding.stranded_total == D("149917.81")  # 15,000 x 9.99452
    assert stranding.net_monthly_while_owed == D("-6000.00")  # 9,000 saved - 15,000 still owed
    # 12 months moving now: 9 x -6,000, month 10 split (-5,917.81), 2 x 9,000, less the 20,000 port
    assert stranding.net_value_12m == D("-61917.81")
    # moving on the end date: month 10's last 0.55 % (49.32) and 2 x 9,000, less the port
    assert stranding.net_value_12m_at_end == D("-1950.68")
    # counting the plan, the move pays off in month 19: -79,917.81 after month 10, then 9,000 a month
    assert stranding.payoff_month == 19
    assert stranding.move_on == TODAY + timedelta(days=304)
    assert stranding.advice == "move at the commitment's end, on 2027-09-29"


def test_usage_left_in_the_family_absorbs_what_the_move_frees() -> None:
    stranding = stranded_by_move(MOVE, _commitment("ec2_instance_savings_plan"), TODAY, absorbable_monthly=D("12000"))
    assert stranding is not None
    assert stranding.stranded_monthly == D("3000.00")
    assert stranding.net_monthly_while_owed == D("6000.00")
    # -20,000 + 6,000 a month: paid off in month 4, and moving now beats waiting
    assert stranding.payoff_month == 4
    assert stranding.move_on is None
    assert stranding.advice == "move now; pays off in month 4 counting the commitment"


def test_a_compute_savings_plan_follows_the_move_to_trainium() -> None:
    compute = _commitment("compute_savings_plan", family=None)
    assert stranded_by_move(MOVE, compute, TODAY) is None
    assert compute.follows("ec2", "trn1", "us-west-2") and compute.follows("ec2", "p4d", "us-east-1")
    assert not compute.follows("sagemaker", "ml.trn1", "us-east-1")
    sagemaker = _commitment("sagemaker_savings_plan", family=None)
    assert sagemaker.follows("sagemaker", "ml.inf2", "eu-west-1") and not sagemaker.follows("ec2", "inf2", "us-east-1")


def test_a_plan_on_another_family_or_region_is_not_stranded_by_the_move() -> None:
    assert stranded_by_move(MOVE, _commitment("ec2_instance_savings_plan", family="g5"), TODAY) is None
    west = Move(**{**MOVE.__dict__, "region": "us-west-2"})
    assert stranded_by_move(west, _commitment("reserved_instance"), TODAY) is None


def test_a_purchase_covers_a_stated_percentile_of_the_usage_left_after_the_fixes() -> None:
    hours = [datetime(2026, 11, 1, tzinfo=UTC) + timedelta(hours=h) for h in range(100)]
    usage = []
    for n, hour in enumerate(hours):
        usage.append(UsageHour("i-idle-p4d", "ec2", "p4d", "us-east-1", hour, D("32.77")))  # stopped by a quick win
        usage.append(UsageHour("i-g5", "ec2", "g5", "us-east-1", hour, D("10")))  # moved to inf2 at 40 %
        usage.append(UsageHour("i-trn1", "ec2", "trn1", "us-east-1", hour, D("6") if n < 80 else D("0")))
    fixes = {"i-idle-p4d": Replacement(None), "i-g5": Replacement("inf2", D("0.4"))}
    compute = _commitment("compute_savings_plan", family=None)
    left = remaining_spend(usage, fixes, compute)
    # 80 hours of 4 (inf2) + 6 (trn1) = 10, 20 hours of 4: the p4d's 32.77 is gone
    assert left == [D("4.0")] * 20 + [D("10.0")] * 80
    # an EC2 Instance plan on g5 covers nothing once the g5 moves
    assert set(remaining_spend(usage, fixes, _commitment("ec2_instance_savings_plan", family="g5"))) == {D(0)}

    steady = size_purchase(
        left, D("0.3"), kind="compute_savings_plan", term_years=1, payment_option="No Upfront", rate_source="test", q=10
    )
    assert steady is not None
    # the 10th percentile is 4.00 of on-demand spend: 2.80 an hour at a 30 % discount, used every hour
    assert (steady.hourly_commitment, steady.expected_utilisation) == (D("2.80"), D("1.0000"))
    assert steady.monthly_saving == D("876.00")  # 1.20 an hour x 730
    median = size_purchase(
        left, D("0.3"), kind="compute_savings_plan", term_years=1, payment_option="No Upfront", rate_source="test", q=50
    )
    assert median is not None
    # 7.00 an hour: the 20 quiet hours use 2.80 of it (utilisation 616 / 700) and cost 3.00 more than on demand
    assert (median.hourly_commitment, median.expected_utilisation) == (D("7.00"), D("0.8800"))
    assert median.monthly_saving == D("1314.00")  # (80 x 3 - 20 x 3) / 100 x 730
    assert "including $32.77/h of capacity this report removes" in versus_aws(steady, D("25.74"), D("32.77"))


def test_nothing_left_buys_nothing() -> None:
    kwargs = {"kind": "compute_savings_plan", "term_years": 1, "payment_option": "No Upfront", "rate_source": "t"}
    assert size_purchase([], D("0.3"), **kwargs) is None  # type: ignore[arg-type]
    assert size_purchase([D(0)] * 10, D("0.3"), **kwargs) is None  # type: ignore[arg-type]
    assert size_purchase([D(5)], D("0"), **kwargs) is None  # type: ignore[arg-type]


def test_a_capacity_block_with_eleven_days_left_is_priced_for_eleven_days() -> None:
    block = _commitment("capacity_block", family="p5", hourly="31.464", end=TODAY + timedelta(days=11))
    held = held_capacity(block, D(1), TODAY)
    assert held is not None
    assert (held.days_left, held.cost_to_end) == (11, D("8306.50"))  # 31.464 x 264 hours, not 730
    half = held_capacity(block, D("0.5"), TODAY)
    assert half is not None and half.cost_to_end == D("4153.25")
    assert held_capacity(block, D(1), TODAY + timedelta(days=11)) is not None
    assert held_capacity(block, D(1), TODAY + timedelta(days=12)).cost_to_end == D("0.00")  # type: ignore[union-attr]
    assert held_capacity(_commitment("compute_savings_plan", family=None), D(1), TODAY) is None


def test_what_to_let_lapse_is_a_commitment_ending_soon_the_fixes_empty() -> None:
    soon = _commitment("reserved_instance", end=TODAY + timedelta(days=60))
    full = HeldCommitment(**{**soon.__dict__, "arn": "full"})
    later = HeldCommitment(**{**soon.__dict__, "arn": "later", "end": TODAY + timedelta(days=120)})
    monthly = soon.monthly_commitment
    lapses = to_let_lapse([soon, full, later], {soon.arn: monthly * D("0.4"), "full": monthly}, TODAY)
    assert [(lapse.commitment.arn, lapse.used_after_share) for lapse in lapses] == [(soon.arn, D("0.4000"))]


def test_a_commitment_whose_use_after_the_fixes_is_unknown_gets_no_lapse_advice() -> None:
    soon = _commitment("reserved_instance", end=TODAY + timedelta(days=30))
    assert to_let_lapse([soon], {}, TODAY) == []
    assert [lapse.used_after_share for lapse in to_let_lapse([soon], {soon.arn: D(0)}, TODAY)] == [D("0.0000")]
