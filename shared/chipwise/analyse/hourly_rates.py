"""The hourly rate a profile prices a resource at: the bill's own line for the resource, else the account's
effective rate for its instance type (Cost Explorer: amortized cost ÷ usage hours), else the catalog's public price.
A Savings Plan or reservation shows as the share by which the effective rate is below the public one."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from decimal import Decimal
from typing import Any

from chipwise.analyse.profiles import CostFacts
from chipwise.catalog import Catalog

RATE_PLACES = Decimal("0.000001")


def account_rates(
    usage: Mapping[str, tuple[Decimal, Decimal, Decimal]], region: str, catalog: Catalog
) -> dict[str, CostFacts]:
    """The account's effective rate per instance type (amortized cost ÷ usage hours, summed as Decimal)."""
    facts: dict[str, CostFacts] = {}
    for instance_type, (unblended, amortized, hours) in usage.items():
        if hours <= 0:
            continue
        discount = Decimal(0)
        if unblended > 0 and amortized < unblended:
            discount = (1 - amortized / unblended).quantize(RATE_PLACES)
        facts[instance_type] = CostFacts(
            hourly_rate=(amortized / hours).quantize(RATE_PLACES),
            rate_source="cost_explorer",
            catalog_rate=catalog.price(instance_type, region),
            commitment_discount=discount,
        )
    return facts


def bill_key(row: Mapping[str, Any]) -> str | None:
    """How the bill names a resource: its EC2 instance id, else its ARN (lower case); None for one variant of a
    multi-variant endpoint (the bill names the endpoint: its variants' shares are split by rate and count)."""
    if row.get("variant"):
        return None
    details = row.get("details") or {}
    instance_id = details.get("instance_id") if isinstance(details, Mapping) else None
    return str(instance_id or row["arn"]).lower()


def bill_rates(
    usage: Mapping[str, tuple[Decimal, Decimal, Decimal, bool]],
    region: str,
    catalog: Catalog,
    resources: Sequence[Mapping[str, Any]],
) -> dict[int, dict[str, CostFacts]]:
    """Each resource the bill names, at its own effective rate (effective cost ÷ usage hours), keyed by resource
    id then instance type (the shape :func:`cost_facts` reads)."""
    if not usage:
        return {}
    found: dict[int, dict[str, CostFacts]] = {}
    for row in resources:
        item = _environment_usage(row, usage) if row.get("kind") == "batch_compute_environment" else None
        if item is None:
            key = bill_key(row)
            item = usage.get(key) if key is not None else None
        instance_type = row.get("instance_type") or ""  # none (a Bedrock provisioned throughput): its bill alone
        if item is None:
            continue
        public, effective, hours, committed = item
        if hours <= 0:
            continue
        discount = Decimal(0)
        if committed and public > 0 and effective < public:
            discount = (1 - effective / public).quantize(RATE_PLACES)
        found[int(row["id"])] = {
            str(instance_type).lower(): CostFacts(
                hourly_rate=(effective / hours).quantize(RATE_PLACES),
                rate_source="bill",
                catalog_rate=(catalog.price(str(instance_type), region) if instance_type else None)
                or (public / hours).quantize(RATE_PLACES),
                commitment_discount=discount,
            )
        }
    return found


def _environment_usage(
    row: Mapping[str, Any], usage: Mapping[str, tuple[Decimal, Decimal, Decimal, bool]]
) -> tuple[Decimal, Decimal, Decimal, bool] | None:
    """A Batch compute environment's bill: its instances' lines summed (the instance ids its inventory read from its
    ECS cluster); None when it has none the bill names."""
    details = row.get("details") or {}
    ids = details.get("instance_ids") if isinstance(details, Mapping) else None
    lines = [usage[i.lower()] for i in ids or [] if i.lower() in usage]
    if not lines:
        return None
    return (
        sum((line[0] for line in lines), Decimal(0)),
        sum((line[1] for line in lines), Decimal(0)),
        sum((line[2] for line in lines), Decimal(0)),
        any(line[3] for line in lines),
    )


def cost_facts(instance_type: str | None, region: str, rates: Mapping[str, CostFacts], catalog: Catalog) -> CostFacts:
    """The resource's rate: its own bill's (a resource with no instance type, such as a Bedrock provisioned
    throughput, has no public price: what the account pays for it is its price), else the account's rate for its
    type, else the catalog's list price."""
    found = rates.get((instance_type or "").lower())
    if found is not None:
        return found
    if not instance_type:
        return CostFacts(None, None)
    price = catalog.price(instance_type, region)
    return CostFacts(price, "catalog" if price is not None else None, price)
