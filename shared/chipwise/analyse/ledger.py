"""The ledger's ground: the bill joined to the resources a scan found (each at its own effective cost and rate),
what of the bill no resource carries, and the resources the bill should contain and lacks.

Pure: the store reads the bill (:mod:`chipwise.store.repositories.bill`), the scan hands in what it collected,
and :func:`chipwise.presentation.spend_of` turns the result into the one spend figure every surface prints.

- **Spend** over a window is the bill's: every resource line in the window (EKS pods are shares of their nodes,
  not added again) plus what no resource carries (a commitment's unused part, tax, credits, usage with no resource
  id), that part of a billing period shared over the days the export covers, the window's days its share.
- **A Batch compute environment** is billed on the EC2 instances it launched (by their instance ids, never its own
  ARN): when the inventory read its instances (its ECS cluster's container instances), the environment owns their
  lines (it is priced from them, in the bill and in "% of spend") and each instance, also listed as an
  ``ec2_instance``, names the environment (``billed_on``) and carries no cost of its own: every line counted once.
- **Not in the bill**: a resource that ran in a covered period and that no line names by ARN or instance id. It
  is priced at list, labelled so, with the likely reasons, and kept out of spend (and of "% of spend")."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import date, datetime
from decimal import Decimal
from typing import TYPE_CHECKING

from chipwise.catalog import Catalog
from chipwise.economics import cents, monthly_cost
from chipwise.models.bill import ResourceBill, Unattributed
from chipwise.models.common import LIVE_STATES, first_tag
from chipwise.models.findings import FindingDocument
from chipwise.models.resources import BatchEnvironmentDetails, CapacityReservationDetails, InstanceDetails
from chipwise.models.scan import ScanCosts, ScanNotAttributed, ScanNotInBill, ScanResource

if TYPE_CHECKING:  # what a scan collects: the read commands need not load it
    from chipwise.models.records import CollectedResource

# Billed on other resources' lines: a component's or a variant's cost is its endpoint's instance hours.
BILLED_ON_THEIR_ENDPOINT = frozenset({"sagemaker_inference_component"})
RAN_IN_THE_WINDOW = frozenset({"sagemaker_training_job"})  # collected only when it ran in the window


@dataclass(frozen=True)
class BillWindow:
    """The bill over ``[start, end)``: what resources carry (by instance type too), what none carries, the days."""

    attributed_usd: Decimal
    by_instance_type: dict[str, Decimal]
    not_attributed: tuple[ScanNotAttributed, ...]
    days_covered: int
    last_day: date | None

    @property
    def not_attributed_usd(self) -> Decimal:
        return sum((n.usd for n in self.not_attributed), Decimal(0))

    @property
    def total_usd(self) -> Decimal:
        """Spend over the window: attributed + not attributed, to the cent."""
        return self.attributed_usd + self.not_attributed_usd


def bill_window(
    bills: Mapping[str, ResourceBill],
    unattributed: Iterable[tuple[str, Unattributed]],
    days: Mapping[str, set[date]],
    start: date,
    end: date,
) -> BillWindow:
    """The bill over ``[start, end)`` from its resource lines of the window (``bills``), the periods' costs no
    resource carries (``unattributed``, per period) and the days each period's export covers (``days``)."""
    attributed = Decimal(0)
    by_type: dict[str, Decimal] = {}
    for bill in bills.values():
        if bill.parent_resource_id is not None:
            continue
        attributed += bill.effective_cost
        if bill.instance_type:
            by_type[bill.instance_type] = by_type.get(bill.instance_type, Decimal(0)) + bill.effective_cost
    in_window = {period: {d for d in covered if start <= d < end} for period, covered in days.items()}
    apart: dict[tuple[str, str], Decimal] = {}
    for period, item in unattributed:
        covered = days.get(period, set())
        if not covered:
            continue
        share = Decimal(len(in_window.get(period, set()))) / Decimal(len(covered))
        key = (item.category, item.reason)
        apart[key] = apart.get(key, Decimal(0)) + item.amount * share
    not_attributed = tuple(
        ScanNotAttributed(category=category, reason=reason, usd=cents(usd))
        for (category, reason), usd in sorted(apart.items())
        if cents(usd) != 0
    )
    every_day = {d for covered in in_window.values() for d in covered}
    return BillWindow(
        attributed_usd=cents(attributed),
        by_instance_type={t: cents(v) for t, v in sorted(by_type.items())},
        not_attributed=not_attributed,
        days_covered=len(every_day),
        last_day=max((d for covered in days.values() for d in covered), default=None),
    )


def bill_key(resource: CollectedResource) -> str | None:
    """What the bill names ``resource`` by (lower case): an EC2 instance's id, else its ARN; None for a variant
    (billed on its endpoint's line)."""
    if resource.variant is not None:
        return None
    instance_id = resource.details.instance_id if isinstance(resource.details, InstanceDetails) else None
    return (instance_id or resource.arn).lower()


def environment_instances(resource: CollectedResource) -> list[str] | None:
    """The instance ids (lower case) a Batch compute environment launched, as its inventory read them; None for any
    other resource, or an environment whose instances could not be read."""
    details = resource.details
    if resource.kind != "batch_compute_environment" or not isinstance(details, BatchEnvironmentDetails):
        return None
    return None if details.instance_ids is None else [i.lower() for i in details.instance_ids]


def environment_bill(resource: CollectedResource, by_key: Mapping[str, ResourceBill]) -> ResourceBill | None:
    """A Batch compute environment's bill: the lines of the instances it launched, summed (None when it has no
    instances the bill names)."""
    lines = [by_key[i] for i in environment_instances(resource) or [] if i in by_key]
    if not lines:
        return None
    total = ResourceBill(resource_id=resource.arn.lower(), instance_type=resource.instance_type, service="AmazonEC2")
    for line in lines:
        total.effective_cost += line.effective_cost
        total.billed_cost += line.billed_cost
        total.public_on_demand_cost += line.public_on_demand_cost
        total.usage_hours += line.usage_hours
        total.pricings |= line.pricings
        total.periods |= line.periods
        total.tags = {**line.tags, **total.tags}
    return total


def price_from_bill(
    resources: Sequence[ScanResource],
    collected: Mapping[str, CollectedResource],
    bills: Mapping[str, ResourceBill],
    *,
    team_keys: Sequence[str],
    owner_keys: Sequence[str],
) -> None:
    """Each resource the bill names gets its effective cost, its rates, hours and pricings; every resource its team
    and owner (live tags first, then the bill's cost allocation tags). A Batch compute environment is priced from
    its instances' lines; an instance it launched names it (``billed_on``) and is not priced again. Fills
    ``resources`` in place."""
    by_key = {key.lower(): bill for key, bill in bills.items()}
    owned: dict[str, str] = {}  # instance id -> the compute environment that launched it (and owns its lines)
    for source in collected.values():
        owned.update((i, source.key) for i in environment_instances(source) or [] if i in by_key)
    for resource in resources:
        source = collected[resource.id]
        key = bill_key(source)
        if resource.kind == "batch_compute_environment":
            found = environment_bill(source, by_key)
        else:
            found = by_key.get(key) if key is not None else None
        # the live tags first, then the bill's (as BillRepository.teams_by_arn and the findings' lists take a team):
        # a live tag under any key wins over the bill's under an earlier key
        live = {k: str(v) for k, v in (source.tags or {}).items()}
        billed = found.tags if found else {}
        resource.team = first_tag(live, team_keys) or first_tag(billed, team_keys)
        resource.owner = first_tag(live, owner_keys) or first_tag(billed, owner_keys)
        if key is not None and key in owned and resource.kind == "ec2_instance":
            resource.billed_on = owned[key]
            continue
        if found is None:
            continue
        resource.cost_usd = found.effective_cost
        resource.effective_hourly_rate_usd = found.effective_rate
        resource.public_on_demand_rate_usd = found.public_on_demand_rate
        resource.usage_hours = found.usage_hours
        resource.pricing = sorted(found.pricings)


def not_in_bill(
    resources: Sequence[ScanResource],
    collected: Mapping[str, CollectedResource],
    findings: Sequence[FindingDocument],
    catalog: Catalog,
    *,
    region: str,
    last_day: date | None,
) -> list[ScanNotInBill]:
    """The resources the bill should contain and lacks: live (or a training job of the window), running
    instances or costing something by a finding, billed on their own lines (not a component or a variant), and
    priced by no bill line. Each at list, with the likely reasons."""
    costed: dict[str, Decimal] = {}
    for finding in findings:
        if finding.status == "open" and finding.monthly_cost_usd > 0:
            costed[finding.resource_id] = max(costed.get(finding.resource_id, Decimal(0)), finding.monthly_cost_usd)
    missing = []
    for r in resources:
        if r.cost_usd is not None or r.variant is not None or r.kind in BILLED_ON_THEIR_ENDPOINT or r.billed_on:
            continue
        if r.kind not in RAN_IN_THE_WINDOW and r.state not in LIVE_STATES:
            continue
        if r.instance_count <= 0 and r.id not in costed:
            continue
        price = catalog.price(r.instance_type, region) if r.instance_type else None
        at_list = costed.get(r.id) or (monthly_cost(price, r.instance_count) if price is not None else None)
        missing.append(
            ScanNotInBill(
                resource_id=r.id,
                name=r.name,
                kind=r.kind,
                instance_type=r.instance_type,
                instance_count=r.instance_count,
                list_monthly_usd=None if at_list is None else cents(at_list),
                reasons=_reasons(collected[r.id], last_day),
            )
        )
    return sorted(missing, key=lambda m: (-(m.list_monthly_usd or 0), m.name))


# What the bill names instead of the resource's own id, by kind: the likeliest reason of all when it applies.
BILLED_ELSEWHERE = {
    "batch_compute_environment": "a Batch compute environment is billed on the EC2 instances it launches (their "
    "instance ids), never on its own ARN",
}


def _environment_reason(resource: CollectedResource) -> str:
    """Why a Batch compute environment's instances did not price it: which of them the scan read, if any."""
    ids = environment_instances(resource)
    if ids is None:
        why = "its instances were not read (no ECS cluster, or the ECS calls were refused)"
    elif not ids:
        why = "no instance of it was registered in its ECS cluster when scanned"
    else:
        why = f"the bill names none of its instances ({', '.join(ids)})"
    return f"{BILLED_ELSEWHERE['batch_compute_environment']}: {why}"


CAPACITY_BLOCK_FEE = (
    "a Capacity Block is paid up front when it is bought (one fee for its whole term, in the billing period of the "
    "purchase), with no hourly line naming the reservation"
)


def _reasons(resource: CollectedResource, last_day: date | None) -> list[str]:
    """The likely reasons, the likeliest first: billed on other lines by its kind (a Batch compute environment, a
    Capacity Block's fee), launched after the export's last day when its launch says so."""
    launched_at: datetime | None = resource.launched_at
    after = f"launched after the export's last day ({last_day})" if last_day else "launched after the export's end"
    others = [
        "its resource id is missing from the export (Data Exports: include resource IDs)",
        "billed to another payer (the export covers its own payer's accounts only)",
    ]
    first = [_environment_reason(resource)] if resource.kind == "batch_compute_environment" else []
    if isinstance(resource.details, CapacityReservationDetails) and resource.details.capacity_block:
        first = [CAPACITY_BLOCK_FEE]
    if launched_at is not None and last_day is not None:
        return [*first, after, *others] if launched_at.date() > last_day else [*first, *others]
    return [*first, *others, after]


def bill_costs(
    window: BillWindow,
    periods: Sequence[str],
    missing: Sequence[ScanNotInBill],
) -> ScanCosts:
    """The costs section of a scan priced from the bill: spend = attributed + not attributed; the resources it
    lacks listed apart (not in spend)."""
    return ScanCosts(
        total_usd=window.total_usd,
        source="bill",
        billing_periods=list(periods),
        by_instance_type=window.by_instance_type,
        days_covered=window.days_covered,
        last_day=window.last_day,
        not_attributed=list(window.not_attributed),
        not_in_bill=list(missing),
    )
