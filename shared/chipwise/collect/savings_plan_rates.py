"""Savings Plans rates for accelerator instances (issue 38), from the Savings Plans API's
DescribeSavingsPlansOfferingRates: for each plan type Chipwise can advise (Compute, SageMaker), 1 year, No Upfront,
in us-east-1, the discount off public on demand of each accelerator instance type's rate (the catalog's on-demand
price), and their median. Written by ``chipwise catalog refresh`` with its source and date; never estimated."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path
from statistics import median
from typing import Any, Protocol

from chipwise.catalog.instance_data import family_of

SOURCE = "AWS Savings Plans API DescribeSavingsPlansOfferingRates (1 year, No Upfront, us-east-1)"
PLAN_TYPES = {"Compute": ("compute_savings_plan", "EC2"), "SageMaker": ("sagemaker_savings_plan", "SageMaker")}
ONE_YEAR_SECONDS = 31_536_000
ACCELERATOR_FAMILIES = ("p", "g", "inf", "trn", "dl")


class SavingsPlansClient(Protocol):
    def describe_savings_plans_offering_rates(self, **kwargs: Any) -> Any: ...


@dataclass(frozen=True)
class RatesResult:
    output: Path
    rates: int
    api_calls: int


def _pages(client: SavingsPlansClient, plan_type: str, product: str) -> Iterator[dict[str, Any]]:
    token: str | None = None
    while True:
        kwargs: dict[str, Any] = {
            "savingsPlanTypes": [plan_type],
            "savingsPlanPaymentOptions": ["No Upfront"],
            "products": [product],
            "filters": [{"name": "region", "values": ["us-east-1"]}],
            "maxResults": 1000,
        }
        if token:
            kwargs["nextToken"] = token
        page = client.describe_savings_plans_offering_rates(**kwargs)
        yield page
        token = page.get("nextToken")
        if not token:
            return


def _accelerator(instance_type: str) -> bool:
    family = family_of(instance_type)
    return family.startswith(ACCELERATOR_FAMILIES) and not family.startswith("gr")


def discounts(
    client: SavingsPlansClient, on_demand: Callable[[str], Decimal | None]
) -> tuple[dict[str, list[Decimal]], int]:
    """Per plan kind, the discount of each accelerator instance type's 1-year No Upfront rate off ``on_demand``
    (the catalog's us-east-1 on-demand price of the type; a type it does not price is left out); and the calls made."""
    found: dict[str, list[Decimal]] = {}
    calls = 0
    for plan_type, (kind, product) in PLAN_TYPES.items():
        for page in _pages(client, plan_type, product):
            calls += 1
            for result in page.get("searchResults", []):
                offering = result.get("savingsPlanOffering", {})
                if offering.get("durationSeconds") != ONE_YEAR_SECONDS or result.get("unit") != "Hrs":
                    continue
                props = {p.get("name"): p.get("value") for p in result.get("properties", [])}
                instance_type = str(props.get("instanceType") or "")
                price = on_demand(instance_type) if instance_type and _accelerator(instance_type) else None
                if not price or price <= 0:
                    continue
                found.setdefault(kind, []).append(1 - Decimal(str(result["rate"])) / price)
    return found, calls


def write_rates(
    client: SavingsPlansClient, on_demand: Callable[[str], Decimal | None], output: Path, retrieved: str
) -> RatesResult:
    """The rates file: per plan kind, the median discount over its accelerator instance types."""
    found, calls = discounts(client, on_demand)
    rates = [
        {"kind": kind, "term_years": 1, "payment_option": "No Upfront",
         "discount": str(Decimal(median(values)).quantize(Decimal("0.0001"))), "instance_types": len(values)}
        for kind, values in sorted(found.items())
        if values
    ]  # fmt: skip
    document = {"source": SOURCE, "retrieved": retrieved, "confidence": "verified", "rates": rates}
    output.write_text(json.dumps(document, indent=2) + "\n", encoding="utf-8")
    return RatesResult(output, len(rates), calls)
