"""Commitments after the fix (issue 38): which Savings Plan, reservation or capacity to buy, keep or let lapse,
given the moves and quick wins Chipwise recommends. Pure: the caller hands in what the bill says is committed, the
usage that remains after the fixes and the moves, and today's date; every figure comes from ``chipwise.economics``.

What follows a workload (the Savings Plans user guide, "Savings Plans types"):

- a **Compute Savings Plan** applies to EC2 usage of any family, size and Region (and Fargate, Lambda): it follows
  a move from GPU to Trainium or Inferentia, so a move strands none of it;
- a **SageMaker Savings Plan** applies to SageMaker usage of any instance family and Region: it follows a
  SageMaker endpoint or training job from ml.g5 to ml.inf2 or ml.trn1;
- an **EC2 Instance Savings Plan** applies to one instance family in one Region, a **reserved instance** and a
  **capacity reservation or Capacity Block** to their family (or type) in one Region: a move off the family leaves
  the commitment charging (the plan is billed every hour, used or not) until its end, unless other usage of the
  family in that Region absorbs it.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import date, datetime
from decimal import Decimal
from typing import Literal

from chipwise.economics import (
    HOURS_PER_MONTH,
    LAPSE_WINDOW_DAYS,
    cents,
    hours_left,
    months_left,
    payoff_month,
    percentile,
    savings_plan_hour,
    value_over,
)

CommitmentKind = Literal[
    "compute_savings_plan",
    "sagemaker_savings_plan",
    "ec2_instance_savings_plan",
    "reserved_instance",
    "capacity_reservation",
    "capacity_block",
]
FOLLOWING: frozenset[CommitmentKind] = frozenset({"compute_savings_plan", "sagemaker_savings_plan"})
HELD_CAPACITY: frozenset[CommitmentKind] = frozenset({"capacity_reservation", "capacity_block"})
COMPUTE_SERVICES = frozenset({"ec2", "fargate", "lambda"})
VALUE_MONTHS = 12


@dataclass(frozen=True)
class HeldCommitment:
    """One commitment as the bill shows it, with what it is bound to."""

    arn: str
    account_id: str
    kind: CommitmentKind
    region: str | None  # None: any Region (Compute and SageMaker Savings Plans)
    family: str | None  # the instance family it is bound to (p4d); None: any
    hourly_commitment: Decimal  # dollars an hour owed, used or not
    start: date | None
    end: date | None
    utilisation: Decimal | None  # share of the commitment used over the bill period (0-1)
    covered_accelerator_hours: Decimal
    effective_rate: Decimal | None  # what one covered instance hour costs under it (the bill's own rate)
    source: str  # where the figures come from: "bill 2026-11 (CUR 2.0)"

    def follows(self, service: str, family: str, region: str) -> bool:
        """Whether usage of ``family`` in ``region`` on ``service`` is covered by this commitment."""
        if self.kind == "compute_savings_plan":
            return service in COMPUTE_SERVICES
        if self.kind == "sagemaker_savings_plan":
            return service == "sagemaker"
        return service == "ec2" and family == self.family and (self.region is None or region == self.region)

    @property
    def monthly_commitment(self) -> Decimal:
        return self.hourly_commitment * HOURS_PER_MONTH


@dataclass(frozen=True)
class Move:
    """A move Chipwise recommends (a migration finding), with the part of its cost a commitment covers today."""

    finding_id: str
    resource_id: str
    account_id: str
    region: str
    service: str  # ec2 | sagemaker
    source_family: str
    target_family: str
    monthly_saving: Decimal  # the finding's saving at the bill's rates
    one_time_cost: Decimal
    covered_monthly: Decimal  # commitment dollars a month the resource's usage absorbs today


@dataclass(frozen=True)
class Stranding:
    """What a move leaves owed on a commitment bound to its source family, and whether to move now."""

    move: Move
    commitment: HeldCommitment
    stranded_monthly: Decimal  # commitment dollars a month nothing uses after the move
    months_left: Decimal
    stranded_total: Decimal  # to the commitment's end
    net_monthly_while_owed: Decimal
    net_value_12m: Decimal  # moving now, counting the stranded dollars
    net_value_12m_at_end: Decimal  # moving on the commitment's end date instead
    payoff_month: int | None  # counting the stranded dollars; None: not within 36 months
    move_on: date | None  # None: move now; else the commitment's end date

    @property
    def advice(self) -> str:
        if self.move_on is not None:
            return f"move at the commitment's end, on {self.move_on.isoformat()}"
        if self.payoff_month is None:
            return "move now; it does not pay off within 36 months counting the commitment"
        return f"move now; pays off in month {self.payoff_month} counting the commitment"


def stranded_by_move(
    move: Move, commitment: HeldCommitment, today: date, absorbable_monthly: Decimal = Decimal(0)
) -> Stranding | None:
    """The commitment dollars a move strands, its saving net of them and when it pays off; None when the commitment
    follows the move (Compute and SageMaker Savings Plans) or does not cover the move's source.

    ``absorbable_monthly`` is usage of the source family in the commitment's Region that stays after the fixes and
    is not covered today (on-demand hours the freed commitment would cover instead): it is not stranded."""
    if commitment.kind in FOLLOWING or commitment.end is None:
        return None
    if not commitment.follows(move.service, move.source_family, move.region):
        return None
    stranded = max(Decimal(0), move.covered_monthly - absorbable_monthly)
    left = months_left(today, commitment.end)
    during = move.monthly_saving - stranded
    now = value_over(VALUE_MONTHS, move.one_time_cost, during, move.monthly_saving, left)
    at_end = value_over(VALUE_MONTHS, move.one_time_cost, Decimal(0), move.monthly_saving, left)
    return Stranding(
        move=move,
        commitment=commitment,
        stranded_monthly=cents(stranded),
        months_left=left,
        stranded_total=cents(stranded * left),
        net_monthly_while_owed=cents(during),
        net_value_12m=cents(now),
        net_value_12m_at_end=cents(at_end),
        payoff_month=payoff_month(move.one_time_cost, during, move.monthly_saving, left),
        move_on=commitment.end if at_end > now else None,
    )


@dataclass(frozen=True)
class HeldCapacity:
    """Reserved capacity nothing uses, priced for the days it still bills (not a full month)."""

    commitment: HeldCommitment
    unused_share: Decimal
    days_left: int
    cost_to_end: Decimal


def held_capacity(commitment: HeldCommitment, unused_share: Decimal, today: date) -> HeldCapacity | None:
    """The unused share of a capacity reservation or Capacity Block, priced to its end date."""
    if commitment.kind not in HELD_CAPACITY or commitment.end is None or unused_share <= 0:
        return None
    hours = hours_left(today, commitment.end)
    return HeldCapacity(
        commitment=commitment,
        unused_share=unused_share,
        days_left=(commitment.end - today).days if hours else 0,
        cost_to_end=cents(commitment.hourly_commitment * unused_share * hours),
    )


@dataclass(frozen=True)
class Lapse:
    """A commitment ending soon whose usage the fixes remove: do not renew it."""

    commitment: HeldCommitment
    ends: date
    used_after_share: Decimal  # share of the commitment the usage left after the fixes would use


def to_let_lapse(
    commitments: Iterable[HeldCommitment], used_after_monthly: Mapping[str, Decimal], today: date
) -> list[Lapse]:
    """Commitments ending within 90 days that the usage left after the fixes would not fill (``used_after_monthly``
    by commitment ARN: the commitment dollars a month that usage would use). A commitment missing from it (what
    its usage would use is unknown: no rate to compare) gets no advice: unknown is never read as unused."""
    lapses = []
    for commitment in commitments:
        if commitment.end is None or not 0 <= (commitment.end - today).days <= LAPSE_WINDOW_DAYS:
            continue
        used = used_after_monthly.get(commitment.arn)
        if used is None:
            continue
        monthly = commitment.monthly_commitment
        share = min(Decimal(1), used / monthly) if monthly else Decimal(0)
        if share < 1:
            lapses.append(Lapse(commitment, commitment.end, share.quantize(Decimal("0.0001"))))
    return lapses


@dataclass(frozen=True)
class UsageHour:
    """One resource's on-demand-equivalent spend in one hour (or an hour's average over a day, when the bill is
    stored by day)."""

    resource_id: str
    service: str
    family: str
    region: str
    hour: datetime
    on_demand_spend: Decimal


@dataclass(frozen=True)
class Replacement:
    """What a fix leaves of a resource's usage: nothing (a quick win that stops or deletes it) or the target
    family's usage at ``spend_ratio`` of the source's on-demand spend (a move)."""

    target_family: str | None
    spend_ratio: Decimal = Decimal(0)


def remaining_spend(
    usage: Iterable[UsageHour], fixes: Mapping[str, Replacement], commitment: HeldCommitment
) -> list[Decimal]:
    """The hourly on-demand-equivalent spend a commitment of ``commitment``'s kind and scope would cover after the
    fixes: stopped resources removed, moved ones counted on their target family. One value per hour, sorted."""
    per_hour: dict[datetime, Decimal] = {}
    for sample in usage:
        family, spend = sample.family, sample.on_demand_spend
        fix = fixes.get(sample.resource_id)
        if fix is not None:
            if fix.target_family is None:
                per_hour.setdefault(sample.hour, Decimal(0))
                continue
            family, spend = fix.target_family, spend * fix.spend_ratio
        covered = spend if commitment.follows(sample.service, family, sample.region) else Decimal(0)
        per_hour[sample.hour] = per_hour.get(sample.hour, Decimal(0)) + covered
    return sorted(per_hour.values())


@dataclass(frozen=True)
class Purchase:
    """A Savings Plan sized to the steady part of the usage left after the fixes."""

    kind: CommitmentKind
    term_years: int
    payment_option: str
    discount: Decimal  # off on demand, from the rate's source
    rate_source: str
    percentile: float
    hourly_commitment: Decimal
    expected_utilisation: Decimal
    monthly_saving: Decimal
    hours: int


def size_purchase(
    hourly_spend: Sequence[Decimal],
    discount: Decimal,
    *,
    kind: CommitmentKind,
    term_years: int,
    payment_option: str,
    rate_source: str,
    q: float = 10.0,
) -> Purchase | None:
    """The hourly commitment that covers the ``q``-th percentile of the hourly spend left after the fixes (so
    ``100 - q`` % of the hours use it whole), its expected utilisation and its monthly saving over those hours.
    None when nothing steady is left."""
    if not hourly_spend or not 0 < discount < 1:
        return None
    ordered = sorted(hourly_spend)
    commitment = cents(percentile(ordered, q) * (1 - discount))
    if commitment <= 0:
        return None
    cost = used = Decimal(0)
    for spend in ordered:
        hour_cost, hour_used = savings_plan_hour(spend, commitment, discount)
        cost += hour_cost
        used += hour_used
    hours = len(ordered)
    saving = (sum(ordered, Decimal(0)) - cost) / hours * HOURS_PER_MONTH
    return Purchase(
        kind=kind,
        term_years=term_years,
        payment_option=payment_option,
        discount=discount,
        rate_source=rate_source,
        percentile=q,
        hourly_commitment=commitment,
        expected_utilisation=(used / (commitment * hours)).quantize(Decimal("0.0001")),
        monthly_saving=cents(saving),
        hours=hours,
    )


def versus_aws(ours: Purchase, aws_hourly: Decimal, removed_hourly: Decimal) -> str:
    """Why Chipwise's purchase differs from AWS's own recommendation (Cost Explorer sizes to past usage)."""
    difference = aws_hourly - ours.hourly_commitment
    if difference <= 0:
        return "AWS's recommendation is no larger than the commitment sized after the fixes"
    return (
        f"AWS sizes to the past usage, including ${cents(removed_hourly)}/h of capacity this report removes: "
        f"${cents(difference)}/h more commitment than the usage left after the fixes keeps busy"
    )


# --- the section as a whole (what the pipeline hands the surfaces) ------------------------------------------------


@dataclass(frozen=True)
class Following:
    """A move a Compute or SageMaker Savings Plan follows: nothing stranded."""

    move: Move
    commitment: HeldCommitment


@dataclass(frozen=True)
class PurchaseAdvice:
    kind: CommitmentKind
    purchase: Purchase | None
    rate_source: str
    note: str  # why nothing is advised (rate unknown, nothing steady left) or how it was sized
    removed_hourly: Decimal  # the spend an hour the fixes remove from what this kind would cover


@dataclass(frozen=True)
class AwsRecommendation:
    available: bool
    hourly_commitment: Decimal | None
    note: str


@dataclass(frozen=True)
class CommitmentsResult:
    account_id: str
    today: date
    bill_periods: tuple[str, ...]
    usage_days: int
    usage_note: str
    held: tuple[HeldCommitment, ...]
    unknown_type: tuple[str, ...]  # ARNs whose plan type the bill does not name (FOCUS)
    following: tuple[Following, ...]
    stranded: tuple[Stranding, ...]
    purchases: tuple[PurchaseAdvice, ...]
    lapses: tuple[Lapse, ...]
    capacity: tuple[HeldCapacity, ...]
    aws: AwsRecommendation
    notes: tuple[str, ...] = field(default_factory=tuple)

    @property
    def ending_soon(self) -> tuple[Lapse, ...]:
        return self.lapses
