"""Spend: the one figure every surface prints (summary, digest, Slack, report and its trend, drafts, partner email,
ACE JSON), from one function, :func:`spend_of`.

When the bill covers the window, spend is the bill's: its monthly run rate over the days the bill covers
(attributed to resources + not attributed: unused commitments, tax, credits, usage with no resource id). Else it
is Cost Explorer's, over its complete days only. Never a partial window scaled up: the run rate is over the days
that have data, and the basis says how many. The resources the bill should contain and lacks are listed apart,
priced at list, and are not in spend."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from decimal import Decimal

from chipwise.economics import HOURS_PER_DAY, cents, per_month, usd
from chipwise.models.findings import FindingDocument
from chipwise.models.scan import ScanCosts, ScanDocument, ScanNotInBill

DEFAULT_COST_SOURCE = "Cost Explorer"


@dataclass(frozen=True)
class Spend:
    """Accelerator and compute spend of a scan window, reconciled: attributed (what resources ran, unused
    reservations) plus not attributed, with the reasons; window and monthly figures each add up to the cent."""

    source: str  # "the bill, AWS Data Exports 2026-11" | "Cost Explorer"
    basis: str  # the measure, in words: "the bill's monthly run rate over 14 days"
    days: int | None  # the days the run rate is over (None: the whole window, a document from before)
    window_usd: Decimal
    monthly_usd: Decimal
    attributed_usd: Decimal  # over the window
    unattributed_usd: Decimal
    unattributed_reasons: tuple[str, ...]
    monthly_attributed_usd: Decimal = Decimal(0)
    monthly_unattributed_usd: Decimal = Decimal(0)
    not_in_bill: tuple[ScanNotInBill, ...] = ()

    @property
    def from_bill(self) -> bool:
        return self.source.startswith("the bill")

    @property
    def signed_unattributed(self) -> str:
        """The monthly not-attributed term of the sum: ``+ $201.01`` or ``− $48.99`` (credits larger)."""
        return signed(self.monthly_unattributed_usd)

    @property
    def not_in_bill_monthly_usd(self) -> Decimal:
        """What the resources the bill lacks cost a month at list (not in spend)."""
        return cents(sum((m.list_monthly_usd or Decimal(0) for m in self.not_in_bill), Decimal(0)))


def cost_source_words(source: str | None, billing_periods: Sequence[str] = ()) -> str:
    """Where a scan's spend came from, in words: "Cost Explorer", or "the bill, AWS Data Exports 2026-11"."""
    if source == "bill":
        return "the bill, AWS Data Exports" + (f" {', '.join(billing_periods)}" if billing_periods else "")
    return DEFAULT_COST_SOURCE


CATEGORY_WORDS = {
    "commitment_unused": "unused commitments",
    "credit": "credits",
    "tax": "tax",
    "refund": "refunds",
    "fee": "fees",
    "no_resource": "usage with no resource id",
}


def signed(amount: Decimal) -> str:
    """``+ $1.00`` or ``− $1.00``: a term of a sum."""
    return f"+ {usd(amount)}" if amount >= 0 else f"− {usd(-amount)}"


def _days(count: int, complete: bool = False) -> str:
    return f"{count} {'complete ' if complete else ''}day{'' if count == 1 else 's'}"


def spend_of(costs: ScanCosts | None, window_hours: int) -> Spend | None:
    """The scan's spend, source and basis named: the monthly run rate over the days its source has data for (the
    whole window for a document that does not say); None when there is no cost data at all."""
    if costs is None or window_hours <= 0 or costs.days_covered == 0:
        return None
    hours = costs.days_covered * int(HOURS_PER_DAY) if costs.days_covered else window_hours
    window = cents(costs.total_usd)
    if costs.source == "bill":
        unattributed = cents(sum((n.usd for n in costs.not_attributed), Decimal(0)))
        reasons = [
            f"{CATEGORY_WORDS.get(n.category, n.category.replace('_', ' '))} {usd(n.usd)}: {n.reason}"
            for n in costs.not_attributed
        ]
        complete = False
    else:
        attributed = sum(costs.by_instance_type.values(), Decimal(0)) + sum(
            (u.usd for u in costs.unused_reservations), Decimal(0)
        )
        unattributed = window - cents(min(attributed, costs.total_usd))
        reasons = [
            f"{k.kind}: {k.reason or k.treatment}"
            for k in costs.kinds
            if k.treatment in ("ignored", "unknown") and k.usd
        ]
        if costs.unknown_usage_types_count:
            count = costs.unknown_usage_types_count
            reasons.append(f"{count} usage type{'' if count == 1 else 's'} the catalog does not know")
        complete = True
    source = cost_source_words(costs.source, costs.billing_periods)
    owner = "the bill's" if costs.source == "bill" else "Cost Explorer's"
    over = _days(hours // 24, complete) if costs.days_covered else f"the {window_hours // 24}-day window"
    monthly = per_month(window, hours)
    monthly_unattributed = per_month(unattributed, hours)
    return Spend(
        source=source,
        basis=f"{owner} monthly run rate over {over}",
        days=costs.days_covered,
        window_usd=window,
        monthly_usd=monthly,
        attributed_usd=window - unattributed,
        unattributed_usd=unattributed,
        unattributed_reasons=tuple(reasons),
        monthly_attributed_usd=monthly - monthly_unattributed,
        monthly_unattributed_usd=monthly_unattributed,
        not_in_bill=tuple(costs.not_in_bill) if costs.source == "bill" else (),
    )


def document_spend(document: ScanDocument | None) -> Spend | None:
    """:func:`spend_of` a scan document (its costs over its window)."""
    if document is None:
        return None
    return spend_of(document.costs, document.window.hours)


def billed_costs(document: ScanDocument | None) -> dict[str, Decimal]:
    """Per resource id the bill names, its effective cost over the window (empty without a bill)."""
    if document is None or document.costs.source != "bill":
        return {}
    return {r.id: r.cost_usd for r in document.resources if r.cost_usd is not None}


def resources_costing(
    spend: Spend | None, billed: Mapping[str, Decimal], findings: Iterable[FindingDocument]
) -> Decimal | None:
    """What the resources ``findings`` are on cost a month by the bill, each resource once, at the spend's run rate:
    part of the attributed spend, so never more than spend. None without a bill (Cost Explorer prices no resource)."""
    if spend is None or not spend.from_bill or not spend.days:
        return None
    ids = {f.resource_id for f in findings}
    total = sum((billed[i] for i in ids if i in billed), Decimal(0))
    return min(per_month(total, spend.days * 24), spend.monthly_attributed_usd)


def reconciliation(spend: Spend | None) -> list[str]:
    """The spend reconciled, in lines: spend = attributed + not attributed (each reason), then every resource the
    bill should contain and lacks, priced at list, with the likely reasons (not in spend)."""
    if spend is None:
        return ["Spend: unknown (no cost data for this scan)"]
    lines = [
        f"Spend {usd(spend.monthly_usd)} a month ({spend.source}; {spend.basis}) = "
        f"{usd(spend.monthly_attributed_usd)} attributed to resources {signed(spend.monthly_unattributed_usd)} not "
        "attributed",
        *(f"Not attributed over the window: {reason}" for reason in spend.unattributed_reasons),
    ]
    for m in spend.not_in_bill:
        at_list = f"{usd(m.list_monthly_usd)} a month at list" if m.list_monthly_usd is not None else "no list price"
        capacity = f"{m.instance_count} × {m.instance_type}" if m.instance_type else m.kind
        lines.append(
            f"Not in the bill: {m.name} ({capacity}): {at_list}, not in spend; likely: {'; or '.join(m.reasons)}"
        )
    return lines
