"""Savings Plans rates off public on demand (issue 38), from ``data/savings_plan_rates.json`` when it exists: that
file is written only by ``chipwise catalog refresh`` from the Savings Plans API (DescribeSavingsPlansOfferingRates),
with its source and date. No file: no rate (the caller says "rate unknown"; a discount is never invented)."""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from decimal import Decimal
from functools import cache
from importlib import resources
from pathlib import Path

from chipwise.catalog.loading import load_data_file

RATES_FILE = "savings_plan_rates.json"
RATES_FILE_ENV = "CHIPWISE_SAVINGS_PLAN_RATES_FILE"  # the file `chipwise catalog refresh` wrote, to use instead


@dataclass(frozen=True)
class PlanRate:
    kind: str  # compute_savings_plan | sagemaker_savings_plan
    term_years: int
    payment_option: str
    discount: Decimal  # off public on demand, the median over the offering's rates for accelerator families
    source: str
    retrieved: str


def savings_plan_rates() -> tuple[PlanRate, ...]:
    """Every rate in ``$CHIPWISE_SAVINGS_PLAN_RATES_FILE``, else the shipped data file; none when neither exists."""
    return _rates(os.environ.get(RATES_FILE_ENV, "").strip())


@cache
def _rates(path: str) -> tuple[PlanRate, ...]:
    if path:
        if not Path(path).is_file():
            return ()
        document = json.loads(Path(path).read_text(encoding="utf-8"), parse_float=Decimal)
    elif resources.files("chipwise.catalog").joinpath("data", RATES_FILE).is_file():
        document = load_data_file(RATES_FILE)
    else:
        return ()
    source, retrieved = str(document["source"]), str(document["retrieved"])
    return tuple(
        PlanRate(
            str(r["kind"]), int(r["term_years"]), str(r["payment_option"]), Decimal(r["discount"]), source, retrieved
        )
        for r in document["rates"]
    )


def plan_rate(kind: str) -> PlanRate | None:
    """The 1-year No Upfront rate of a plan kind (the least committed option), else its first rate; None: unknown."""
    found = [r for r in savings_plan_rates() if r.kind == kind]
    preferred = [r for r in found if r.term_years == 1 and r.payment_option == "No Upfront"]
    chosen = preferred or found
    return chosen[0] if chosen else None
