"""Commitments after the fix (issue 38): what the stored bill says is committed, the usage left after the counted
quick wins and the recommended moves, and the advice of :mod:`chipwise.analyse.commitments` over them: what a move
strands, what to buy, what to let lapse, held capacity priced for its days left. It advises; it counts nothing in
the ledger (the findings' savings stay as they are).

The bill is stored by day, not by hour: each resource-day gives one sample, its average hour (the day's public
on-demand cost ÷ 24), so the percentile a purchase is sized to is a percentile of daily averages."""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import UTC, date, datetime, time
from decimal import Decimal
from typing import Any, Protocol, cast

from chipwise.analyse.commitments import (
    FOLLOWING,
    AwsRecommendation,
    CommitmentKind,
    CommitmentsResult,
    Following,
    HeldCapacity,
    HeldCommitment,
    Move,
    PurchaseAdvice,
    Replacement,
    Stranding,
    UsageHour,
    held_capacity,
    remaining_spend,
    size_purchase,
    stranded_by_move,
    to_let_lapse,
    versus_aws,
)
from chipwise.catalog.instance_data import family_of
from chipwise.catalog.savings_plan_rates import plan_rate
from chipwise.economics import HOURS_PER_DAY, HOURS_PER_MONTH, cents, parse_utc
from chipwise.models.findings import FindingDocument
from chipwise.presentation import best_saving, exclusion, one_time_cost
from chipwise.report.build import ReportView
from chipwise.report.commitments import render_commitments_section
from chipwise.store import Session
from chipwise.store.repositories import bill as bill_store
from chipwise.store.repositories.bill import BillRepository
from chipwise.store.repositories.findings import FindingRepository

PERCENTILE = 10.0  # a purchase covers the 10th percentile of the remaining hourly spend: 90 % of hours use it whole
QUICK_WIN_REMOVES = frozenset({"stop", "delete"})
PURCHASE_KINDS: tuple[CommitmentKind, ...] = ("compute_savings_plan", "sagemaker_savings_plan")
OFFERING_KINDS: dict[str, CommitmentKind] = {  # CUR 2.0 savings_plan_offering_type
    "computesavingsplans": "compute_savings_plan",
    "ec2instancesavingsplans": "ec2_instance_savings_plan",
    "sagemakersavingsplans": "sagemaker_savings_plan",
}
NOT_PLAN_USAGE = frozenset({"spot", "reservation"})  # no Savings Plan applies to Spot; a reservation covers its own
USAGE_NOTE = (
    "the bill is stored by day: each sample is a day's average hour (its public on-demand cost / 24); Spot and "
    "reservation-covered usage left out"
)


class CostExplorer(Protocol):
    def get_savings_plans_purchase_recommendation(self, **kwargs: Any) -> Any: ...


def known_accounts(session: Session) -> list[str]:
    """The accounts the store has a bill commitment or a finding for."""
    held = {row.account_id for row, _ in BillRepository(session).commitments()}
    return sorted(held | {f.account_id for f in FindingRepository(session).find()})


def commitments_advice(
    session: Session,
    *,
    account_id: str,
    now: datetime,
    cost_explorer: CostExplorer | None = None,
    ask_aws: bool = False,
) -> CommitmentsResult:
    """The commitments section for one account, from the stored bill and the open findings; AWS's recommendation
    from ``cost_explorer`` (or, with ``ask_aws``, Cost Explorer in us-east-1 with the ambient credentials)."""
    if cost_explorer is None and ask_aws:
        from chipwise.aws import aws_context  # only when asked: no AWS call otherwise

        cost_explorer = cast(CostExplorer, aws_context("us-east-1").client("ce"))
    today = now.astimezone(UTC).date()
    held, periods, unknown, discounts = _held(session, account_id)
    days = list(BillRepository(session).resource_days(account_id))
    held = _reserved_families(held, days)
    documents = _open_findings(session, account_id)
    moves, fixes = _moves_and_fixes(documents, days, held)
    usage = [_usage_hour(d) for d in days if d.pricing not in NOT_PLAN_USAGE]
    following: list[Following] = []
    stranded: list[Stranding] = []
    for move, arn in moves:
        commitment = next(c for c in held if c.arn == arn)
        if commitment.kind in FOLLOWING:
            if commitment.follows(move.service, move.target_family, move.region):
                following.append(Following(move, commitment))
            continue
        absorbable = _absorbable(days, fixes, commitment, discounts.get(commitment.arn))
        found = stranded_by_move(move, commitment, today, absorbable)
        if found is not None:
            stranded.append(found)
    purchases = [_purchase(kind, usage, fixes, held, discounts) for kind in PURCHASE_KINDS]
    used_after = {
        c.arn: _used_after(remaining_spend(usage, fixes, c), discount, c.hourly_commitment)
        for c in held
        if (discount := discounts.get(c.arn)) is not None
    }
    return CommitmentsResult(
        account_id=account_id,
        today=today,
        bill_periods=tuple(periods),
        usage_days=len({d.day for d in days}),
        usage_note=USAGE_NOTE,
        held=tuple(held),
        unknown_type=tuple(unknown),
        following=tuple(following),
        stranded=tuple(stranded),
        purchases=tuple(purchases),
        lapses=tuple(to_let_lapse(held, used_after, today)),
        capacity=tuple(_held_capacity(documents, today)),
        aws=_aws(cost_explorer, purchases),
    )


# --- what is committed --------------------------------------------------------------------------------------------


def _held(session: Session, account_id: str) -> tuple[list[HeldCommitment], list[str], list[str], dict[str, Decimal]]:
    """The latest period's terms of each commitment; the discount each shows for the usage it covered."""
    held: dict[str, HeldCommitment] = {}
    discounts: dict[str, Decimal] = {}
    periods: set[str] = set()
    unknown: list[str] = []
    for row, period in BillRepository(session).commitments(account_id):
        periods.add(period)
        if row.arn in held or row.arn in unknown:
            continue  # the latest period first
        kind = _kind(row.kind, row.offering_type)
        if kind is None:
            unknown.append(row.arn)
            continue
        total = row.used_cost + row.unused_cost
        hourly = row.hourly_commitment
        if hourly is None and row.reserved_count and row.effective_rate is not None:
            hourly = row.effective_rate * row.reserved_count  # a reservation: its count at its own rate
        held[row.arn] = HeldCommitment(
            arn=row.arn,
            account_id=row.account_id,
            kind=kind,
            region=None if kind in FOLLOWING else row.region,
            family=None if kind in FOLLOWING else row.family,
            hourly_commitment=hourly or Decimal(0),
            start=row.start_date,
            end=row.end_date,
            utilisation=(row.used_cost / total).quantize(Decimal("0.0001")) if total > 0 else None,
            covered_accelerator_hours=row.covered_accelerator_hours,
            effective_rate=row.effective_rate,
            source=f"bill {period}",
        )
        if row.covered_on_demand_cost and row.covered_on_demand_cost > 0:
            discounts[row.arn] = (1 - row.used_cost / row.covered_on_demand_cost).quantize(Decimal("0.0001"))
    return list(held.values()), sorted(periods), unknown, discounts


def _reserved_families(held: list[HeldCommitment], days: Sequence[bill_store.ResourceDay]) -> list[HeldCommitment]:
    """A reservation's family: the bill names none (savings_plan_instance_type_family is a plan's), so the family of
    the usage it covered."""
    families = {
        d.commitment_arn: family_of(d.instance_type or "") for d in days if d.commitment_arn and d.instance_type
    }
    return [
        replace(c, family=families.get(c.arn)) if c.kind == "reserved_instance" and c.family is None else c
        for c in held
    ]


def _kind(kind: str, offering_type: str | None) -> CommitmentKind | None:
    if kind == "reservation":
        return "reserved_instance"
    return OFFERING_KINDS.get((offering_type or "").replace(" ", "").lower())


# --- the moves, the fixes and the usage they leave ------------------------------------------------------------------


def _open_findings(session: Session, account_id: str) -> list[FindingDocument]:
    repository = FindingRepository(session)
    regions = sorted({f.region for f in repository.find(account_id=account_id)})
    return [d for region in regions for d in repository.documents(account_id=account_id, region=region)]


def _bill_id(resource_id: str) -> str:
    """The bill's resource id for Chipwise's: an EC2 instance's id, else the ARN."""
    if ":instance/" in resource_id and resource_id.startswith("arn:aws:ec2:"):
        return resource_id.rsplit("/", 1)[1]
    return resource_id


def _service(resource_kind_or_service: str) -> str:
    return "sagemaker" if "sagemaker" in resource_kind_or_service.lower() else "ec2"


def _moves_and_fixes(
    documents: Sequence[FindingDocument], days: Sequence[bill_store.ResourceDay], held: Sequence[HeldCommitment]
) -> tuple[list[tuple[Move, str]], dict[str, Replacement]]:
    """Each open migration the ledger counts (or sets apart only for its committed hours: the case this section
    answers), paired with each commitment covering its resource in the bill; the fixes keyed by bill resource id."""
    covered: dict[tuple[str, str], Decimal] = defaultdict(Decimal)
    covered_days: dict[str, set[date]] = defaultdict(set)
    for d in days:
        if d.commitment_arn:
            covered[(d.resource_id, d.commitment_arn)] += d.effective_cost
            covered_days[d.resource_id].add(d.day)
    arns = {c.arn for c in held}
    moves: list[tuple[Move, str]] = []
    fixes: dict[str, Replacement] = {}
    for document in documents:
        reason = exclusion(document)
        action = document.recommendation.action
        bill_id = _bill_id(document.resource_id)
        if action in QUICK_WIN_REMOVES and reason is None:
            fixes[bill_id] = Replacement(None)
            continue
        target = document.recommendation.target_instance_type
        if action != "migrate" or reason not in (None, "committed") or not target or not document.instance_type:
            continue
        saving = best_saving(document)
        cost = Decimal(document.monthly_cost_usd)
        fixes[bill_id] = Replacement(family_of(target), (cost - saving) / cost if cost > 0 else Decimal(0))
        for arn in sorted(arns):
            spent = covered.get((bill_id, arn))
            if not spent:
                continue
            per_day = spent / len(covered_days[bill_id])
            moves.append(
                (
                    Move(
                        finding_id=document.finding_id,
                        resource_id=document.resource_id,
                        account_id=document.account_id,
                        region=document.region,
                        service=_service(document.resource_kind),
                        source_family=family_of(document.instance_type),
                        target_family=family_of(target),
                        monthly_saving=saving,
                        one_time_cost=one_time_cost(action, document.effort),
                        covered_monthly=cents(per_day / HOURS_PER_DAY * HOURS_PER_MONTH),
                    ),
                    arn,
                )
            )
    return moves, fixes


def _usage_hour(d: bill_store.ResourceDay) -> UsageHour:
    return UsageHour(
        resource_id=d.resource_id,
        service=_service(d.service),
        family=family_of(d.instance_type or ""),
        region=d.region,
        hour=datetime.combine(d.day, time(), tzinfo=UTC),
        on_demand_spend=d.public_on_demand_cost / HOURS_PER_DAY,
    )


def _absorbable(
    days: Iterable[bill_store.ResourceDay],
    fixes: Mapping[str, Replacement],
    commitment: HeldCommitment,
    discount: Decimal | None,
) -> Decimal:
    """Commitment dollars a month that usage of the commitment's family and Region left after the fixes, and not
    covered by it today, would use once a move frees it (on-demand hours it would cover instead)."""
    spend: dict[date, Decimal] = defaultdict(Decimal)
    for d in days:
        if d.resource_id in fixes or d.commitment_arn == commitment.arn or d.pricing == "spot":
            continue
        if commitment.follows(_service(d.service), family_of(d.instance_type or ""), d.region):
            spend[d.day] += d.public_on_demand_cost
    if not spend or discount is None:
        return Decimal(0)
    daily = sum(spend.values(), Decimal(0)) / len(spend)
    return cents(daily / HOURS_PER_DAY * (1 - discount) * HOURS_PER_MONTH)


def _used_after(hourly: Sequence[Decimal], discount: Decimal | None, commitment: Decimal) -> Decimal:
    """Commitment dollars a month the remaining usage would use (mean over the samples)."""
    if not hourly or discount is None:
        return Decimal(0)
    used = sum((min(commitment, h * (1 - discount)) for h in hourly), Decimal(0)) / len(hourly)
    return used * HOURS_PER_MONTH


# --- what to buy ----------------------------------------------------------------------------------------------------


def _purchase(
    kind: CommitmentKind,
    usage: Sequence[UsageHour],
    fixes: Mapping[str, Replacement],
    held: Sequence[HeldCommitment],
    discounts: Mapping[str, Decimal],
) -> PurchaseAdvice:
    probe = HeldCommitment("", "", kind, None, None, Decimal(0), None, None, None, Decimal(0), None, "")
    before = remaining_spend(usage, {}, probe)
    after = remaining_spend(usage, fixes, probe)
    removed = cents((sum(before, Decimal(0)) - sum(after, Decimal(0))) / len(before)) if before else Decimal(0)
    own = [(c, discounts[c.arn]) for c in held if c.kind == kind and c.arn in discounts]
    if own:
        discount, source = own[0][1], f"the account's own {own[0][0].source}: its effective vs public on-demand cost"
        term, payment = 0, "as the plan held"
    else:
        rate = plan_rate(kind)
        if rate is None:
            why = f"no {kind.replace('_', ' ')} in the bill and no Savings Plans rates file (chipwise catalog refresh)"
            return PurchaseAdvice(kind, None, "rate unknown", f"rate unknown: {why}", removed)
        discount, source = rate.discount, f"{rate.source}, {rate.retrieved}"
        term, payment = rate.term_years, rate.payment_option
    # what the plans of this kind already held cover an hour: only the rest is left to buy
    held_covers = sum((c.hourly_commitment / (1 - discounts.get(c.arn, discount)) for c, _ in own), Decimal(0))
    rest = [max(Decimal(0), h - held_covers) for h in after]
    purchase = size_purchase(
        rest, discount, kind=kind, term_years=term, payment_option=payment, rate_source=source, q=PERCENTILE
    )
    if purchase is None:
        note = "nothing steady left after the fixes and the plans held" if after else "no usage it would cover"
        return PurchaseAdvice(kind, None, source, note, removed)
    note = f"covers the {PERCENTILE:g}th percentile of the hourly spend left after the fixes and the plans held"
    return PurchaseAdvice(kind, purchase, source, note, removed)


def _aws(cost_explorer: CostExplorer | None, purchases: Sequence[PurchaseAdvice]) -> AwsRecommendation:
    """AWS's own Compute Savings Plan recommendation (Cost Explorer, the last 30 days), beside ours."""
    if cost_explorer is None:
        return AwsRecommendation(False, None, "not asked (--ask-aws reads Cost Explorer)")
    try:
        answer = cost_explorer.get_savings_plans_purchase_recommendation(
            SavingsPlansType="COMPUTE_SP",
            TermInYears="ONE_YEAR",
            PaymentOption="NO_UPFRONT",
            LookbackPeriodInDays="THIRTY_DAYS",
        )
    except Exception as exc:  # any failure of the call is "unavailable", said with its cause
        cause = re.sub(r"\s*<.*", "", str(exc).splitlines()[0] if str(exc) else "", flags=re.DOTALL)[:200].rstrip(" :")
        return AwsRecommendation(False, None, f"unavailable: {type(exc).__name__}: {cause}")
    summary = (answer.get("SavingsPlansPurchaseRecommendation") or {}).get(
        "SavingsPlansPurchaseRecommendationSummary"
    ) or {}
    hourly = summary.get("HourlyCommitmentToPurchase")
    if hourly in (None, ""):
        return AwsRecommendation(False, None, "unavailable: Cost Explorer returned no recommendation")
    aws_hourly = Decimal(str(hourly))
    ours = next((p for p in purchases if p.kind == "compute_savings_plan"), None)
    if ours is None or ours.purchase is None:
        return AwsRecommendation(True, aws_hourly, f"AWS recommends ${aws_hourly}/h; no purchase sized after the fixes")
    return AwsRecommendation(True, aws_hourly, versus_aws(ours.purchase, aws_hourly, ours.removed_hourly))


# --- held capacity --------------------------------------------------------------------------------------------------


def _held_capacity(documents: Iterable[FindingDocument], today: date) -> list[HeldCapacity]:
    """Open held-capacity findings on a reservation with an end date (a Capacity Block): the unused share priced
    for its days left."""
    found = []
    for document in documents:
        evidence = document.evidence
        ends, rate = evidence.get("commitment_ends"), evidence.get("hourly_rate_usd")
        count = int(evidence.get("instance_count") or document.instance_count or 0)
        if document.rule_id != "capacity_held_idle" or not ends or rate is None or count <= 0:
            continue
        block = bool(evidence.get("capacity_block"))
        commitment = HeldCommitment(
            arn=document.resource_id,
            account_id=document.account_id,
            kind="capacity_block" if block else "capacity_reservation",
            region=document.region,
            family=family_of(document.instance_type or ""),
            hourly_commitment=Decimal(str(rate)) * count,
            start=None,
            end=parse_utc(str(ends)).date(),
            utilisation=None,
            covered_accelerator_hours=Decimal(0),
            effective_rate=Decimal(str(rate)),
            source=f"finding {document.finding_id[:8]} ({evidence.get('rate_source', 'rate')})",
        )
        unused = Decimal(int(evidence.get("unused_instances") or 0)) / count
        item = held_capacity(commitment, unused, today)
        if item is not None:
            found.append(item)
    return found


def report_with_commitments(session: Session, view: ReportView, *, now: datetime) -> ReportView:
    """The HTML report's view with the commitments section of its account (the report's hook: one partial)."""
    result = commitments_advice(session, account_id=view.account_id, now=now)
    return replace(view, commitments_html=render_commitments_section(result))


@dataclass(frozen=True)
class CommitmentsOutput:
    """``chipwise commitments``' answer: one document and the printed lines per account."""

    documents: list[dict[str, Any]]
    lines: list[str]


def commitments_for(account_id: str | None, *, ask_aws: bool = False) -> CommitmentsOutput:
    """The advice for one account, or every account the stored bill holds (the command line's door)."""
    from chipwise.clock import utcnow
    from chipwise.pipeline._store import store_scope
    from chipwise.report.commitments import commitments_document, commitments_lines

    now = utcnow()
    with store_scope() as session:
        accounts = [account_id] if account_id else known_accounts(session)
        results = [commitments_advice(session, account_id=a, now=now, ask_aws=ask_aws) for a in accounts]
    return CommitmentsOutput(
        documents=[commitments_document(r) for r in results],
        lines=[line for r in results for line in commitments_lines(r)],
    )
