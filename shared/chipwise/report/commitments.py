"""The commitments section (issue 38) as every surface shows it: one JSON document (``chipwise commitments --json``),
text lines (the CLI, the demo's summary) and the HTML report's partial, all from one
:class:`chipwise.analyse.commitments.CommitmentsResult`. Every figure names where it comes from: the bill period,
the rate's source and date."""

from __future__ import annotations

from datetime import date
from decimal import Decimal
from typing import TYPE_CHECKING, Any

from chipwise.economics import LAPSE_WINDOW_DAYS, parse_utc, usd, usd_per_hour
from chipwise.render import render
from chipwise.store import Session
from chipwise.store.repositories.bill import BillRepository
from chipwise.store.repositories.findings import FindingRepository

if TYPE_CHECKING:  # the digest's "ending soon" lines need no analysis: the drafts and the digest do not load it
    from chipwise.analyse.commitments import CommitmentsResult, HeldCommitment

KIND_WORDS = {
    "compute_savings_plan": "Compute Savings Plan",
    "sagemaker_savings_plan": "SageMaker Savings Plan",
    "ec2_instance_savings_plan": "EC2 Instance Savings Plan",
    "reserved_instance": "reserved instance",
    "capacity_reservation": "capacity reservation",
    "capacity_block": "Capacity Block",
}
ADVISES = "it advises: nothing here is added to the ledger's totals"


def _d(value: Decimal | None) -> str | None:
    return None if value is None else str(value)


def _commitment(c: HeldCommitment) -> dict[str, Any]:
    return {
        "arn": c.arn,
        "kind": c.kind,
        "type": KIND_WORDS[c.kind],
        "region": c.region,
        "family": c.family,
        "hourly_commitment_usd": str(c.hourly_commitment),
        "start": c.start.isoformat() if c.start else None,
        "end": c.end.isoformat() if c.end else None,
        "utilisation": _d(c.utilisation),
        "covered_accelerator_hours": str(c.covered_accelerator_hours),
        "effective_rate_usd_per_hour": _d(c.effective_rate),
        "source": c.source,
    }


def commitments_document(result: CommitmentsResult) -> dict[str, Any]:
    """The section as JSON (amounts as exact decimal strings)."""
    return {
        "account_id": result.account_id,
        "today": result.today.isoformat(),
        "bill_periods": list(result.bill_periods),
        "usage": {"days": result.usage_days, "note": result.usage_note},
        "note": ADVISES,
        "held": [_commitment(c) for c in result.held],
        "type_unknown": list(result.unknown_type),
        "following": [
            {
                "finding_id": f.move.finding_id,
                "resource_id": f.move.resource_id,
                "from": f.move.source_family,
                "to": f.move.target_family,
                "commitment": _commitment(f.commitment),
                "advice": f"{KIND_WORDS[f.commitment.kind]} follows the move: nothing stranded",
            }
            for f in result.following
        ],
        "stranded": [
            {
                "finding_id": s.move.finding_id,
                "resource_id": s.move.resource_id,
                "from": s.move.source_family,
                "to": s.move.target_family,
                "commitment": _commitment(s.commitment),
                "monthly_saving_usd": str(s.move.monthly_saving),
                "one_time_cost_usd": str(s.move.one_time_cost),
                "stranded_monthly_usd": str(s.stranded_monthly),
                "months_left": str(s.months_left.quantize(Decimal("0.01"))),
                "stranded_total_usd": str(s.stranded_total),
                "net_monthly_while_owed_usd": str(s.net_monthly_while_owed),
                "net_value_12m_usd": str(s.net_value_12m),
                "net_value_12m_at_end_usd": str(s.net_value_12m_at_end),
                "payoff_month": s.payoff_month,
                "move_on": s.move_on.isoformat() if s.move_on else None,
                "advice": s.advice,
            }
            for s in result.stranded
        ],
        "purchases": [
            {
                "kind": p.kind,
                "type": KIND_WORDS[p.kind],
                "rate_source": p.rate_source,
                "note": p.note,
                "removed_hourly_usd": str(p.removed_hourly),
                "purchase": None
                if p.purchase is None
                else {
                    "percentile": p.purchase.percentile,
                    "hourly_commitment_usd": str(p.purchase.hourly_commitment),
                    "discount": str(p.purchase.discount),
                    "expected_utilisation": str(p.purchase.expected_utilisation),
                    "monthly_saving_usd": str(p.purchase.monthly_saving),
                    "term_years": p.purchase.term_years or None,
                    "payment_option": p.purchase.payment_option,
                    "samples": p.purchase.hours,
                },
            }
            for p in result.purchases
        ],
        "let_lapse": [
            {
                "commitment": _commitment(x.commitment),
                "ends": x.ends.isoformat(),
                "used_after_share": str(x.used_after_share),
            }
            for x in result.lapses
        ],
        "held_capacity": [
            {
                "commitment": _commitment(h.commitment),
                "unused_share": str(h.unused_share),
                "days_left": h.days_left,
                "cost_to_end_usd": str(h.cost_to_end),
            }
            for h in result.capacity
        ],
        "aws_recommendation": {
            "available": result.aws.available,
            "hourly_commitment_usd": _d(result.aws.hourly_commitment),
            "note": result.aws.note,
        },
    }


def _name(c: HeldCommitment) -> str:
    scope = " ".join(x for x in (c.family, c.region) if x) or "any family, any Region"
    return f"{KIND_WORDS[c.kind]} ({scope}, {usd_per_hour(c.hourly_commitment)}, ends {c.end or 'unknown'})"


def commitments_lines(result: CommitmentsResult) -> list[str]:
    """The section as plain lines (the CLI, the summary)."""
    periods = ", ".join(result.bill_periods) or "none stored"
    lines = [f"Commitments for {result.account_id} on {result.today} (bill {periods}; {ADVISES})"]
    lines += [f"  held: {_name(c)}, used {_pct(c.utilisation)}; {c.source}" for c in result.held]
    lines += [f"  type unknown (the bill names no plan type): {arn}" for arn in result.unknown_type]
    for f in result.following:
        lines.append(
            f"  follows: {f.move.source_family} → {f.move.target_family} ({f.move.resource_id.rsplit('/', 1)[-1]}): "
            f"the {KIND_WORDS[f.commitment.kind]} follows the move, nothing stranded"
        )
    for s in result.stranded:
        lines.append(
            f"  stranded: {s.move.source_family} → {s.move.target_family} "
            f"({s.move.resource_id.rsplit('/', 1)[-1]}) leaves {usd(s.stranded_monthly)}/month owed on the "
            f"{_name(s.commitment)} for {s.months_left.quantize(Decimal('0.1'))} months ({usd(s.stranded_total)}); "
            f"saving {usd(s.move.monthly_saving)}/month, {usd(s.net_monthly_while_owed)}/month net while owed; "
            f"12-month value {usd(s.net_value_12m)} now vs {usd(s.net_value_12m_at_end)} at its end: {s.advice}"
        )
    for p in result.purchases:
        if p.purchase is None:
            lines.append(f"  buy {KIND_WORDS[p.kind]}: none ({p.note})")
            continue
        b = p.purchase
        lines.append(
            f"  buy {KIND_WORDS[p.kind]}: {usd_per_hour(b.hourly_commitment)} ({b.percentile:g}th percentile of "
            f"{b.hours} daily-average hours after the fixes), expected utilisation {_pct(b.expected_utilisation)}, "
            f"saves {usd(b.monthly_saving)}/month at {_pct(b.discount)} off on demand ({p.rate_source})"
        )
    for x in result.lapses:
        lines.append(f"  let lapse: {_name(x.commitment)}: the usage left after the fixes uses "
                     f"{_pct(x.used_after_share)} of it")  # fmt: skip
    for h in result.capacity:
        lines.append(
            f"  held capacity: {_name(h.commitment)}, {_pct(h.unused_share)} unused: {usd(h.cost_to_end)} for its "
            f"{h.days_left} days left (not a full month)"
        )
    lines.append(f"  AWS's recommendation: {result.aws.note}")
    lines.append(f"  usage: {result.usage_days} days; {result.usage_note}")
    return lines


def ending_soon(session: Session, account_id: str, today: date) -> tuple[str, ...]:
    """The digest's "ending soon" lines, soonest first: the account's commitments (the bill's latest terms) and
    Capacity Blocks (open held-capacity findings) ending within 90 days, each with its end date and where the figure
    comes from."""
    lines: dict[str, tuple[date, str]] = {}
    for row, period in BillRepository(session).commitments(account_id):
        if row.arn in lines or row.end_date is None or not 0 <= (row.end_date - today).days <= LAPSE_WINDOW_DAYS:
            continue
        hourly = f", {usd_per_hour(row.hourly_commitment)}" if row.hourly_commitment is not None else ""
        plan = row.offering_type or row.kind.replace("_", " ")
        text = f"{plan} {row.arn.rsplit('/', 1)[-1]}{hourly}: ends {row.end_date} (bill {period})"
        lines[row.arn] = (row.end_date, text)
    for finding in FindingRepository(session).find(account_id=account_id, rule_ids=("capacity_held_idle",)):
        ends = finding.evidence.get("commitment_ends")
        end = parse_utc(str(ends)).date() if ends else None
        if end is None or not 0 <= (end - today).days <= LAPSE_WINDOW_DAYS:
            continue
        kind = f" ({finding.instance_type})" if finding.instance_type else ""
        text = f"{finding.resource_name}{kind}: reserved capacity ends {end}, {(end - today).days} days left, unused"
        lines[finding.resource_arn] = (end, text)
    return tuple(text for _, text in sorted(lines.values()))


def render_commitments_section(result: CommitmentsResult) -> str:
    """The HTML report's section (a partial of its own, included by the report)."""
    return render("report/_commitments.html.j2", c=commitments_document(result), lines=commitments_lines(result))


def _pct(value: Decimal | None) -> str:
    return "unknown" if value is None else f"{value * 100:.1f}%"
