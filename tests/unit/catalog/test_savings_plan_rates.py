"""The Savings Plans rates file (issue 38): DescribeSavingsPlansOfferingRates read through a botocore Stubber with
the response shape the Savings Plans API documents; each accelerator type's discount off the catalog's on-demand
price, their median per plan kind; the file read back with its source and date; no file: no rate."""

from __future__ import annotations

import json
from decimal import Decimal
from pathlib import Path
from typing import Any

import boto3
import pytest
from botocore.stub import Stubber

from chipwise.catalog.savings_plan_rates import RATES_FILE_ENV, _rates, plan_rate
from chipwise.collect.savings_plan_rates import ONE_YEAR_SECONDS, write_rates

ON_DEMAND = {"p4d.24xlarge": Decimal("32.00"), "trn1.32xlarge": Decimal("20.00"), "ml.g5.xlarge": Decimal("1.00")}


def _rate(plan: str, instance_type: str, rate: str, seconds: int = ONE_YEAR_SECONDS) -> dict[str, Any]:
    return {
        "savingsPlanOffering": {"offeringId": "o-1", "paymentOption": "No Upfront", "planType": plan,
                                "durationSeconds": seconds, "currency": "USD", "planDescription": "1 year"},
        "rate": rate, "unit": "Hrs", "productType": "EC2", "serviceCode": "AmazonEC2",
        "usageType": f"BoxUsage:{instance_type}", "operation": "RunInstances",
        "properties": [{"name": "instanceType", "value": instance_type}, {"name": "region", "value": "us-east-1"}],
    }  # fmt: skip


def _request(plan: str, product: str) -> dict[str, Any]:
    return {
        "savingsPlanTypes": [plan], "savingsPlanPaymentOptions": ["No Upfront"], "products": [product],
        "filters": [{"name": "region", "values": ["us-east-1"]}], "maxResults": 1000,
    }  # fmt: skip


@pytest.fixture
def written(tmp_path: Path) -> Path:
    client = boto3.client("savingsplans", region_name="us-east-1", aws_access_key_id="x", aws_secret_access_key="x")
    stubber = Stubber(client)
    # Compute: p4d at 24.00 (25 % off 32.00) and trn1 at 14.00 (30 % off 20.00) → median 27.5 %; a 3-year rate and a
    # CPU type are left out; two pages
    stubber.add_response(
        "describe_savings_plans_offering_rates",
        {"searchResults": [_rate("Compute", "p4d.24xlarge", "24.00"), _rate("Compute", "m5.large", "0.06"),
                           _rate("Compute", "p4d.24xlarge", "18.00", seconds=3 * ONE_YEAR_SECONDS)],
         "nextToken": "t2"},
        _request("Compute", "EC2"),
    )  # fmt: skip
    stubber.add_response(
        "describe_savings_plans_offering_rates",
        {"searchResults": [_rate("Compute", "trn1.32xlarge", "14.00")]},
        {**_request("Compute", "EC2"), "nextToken": "t2"},
    )
    stubber.add_response(
        "describe_savings_plans_offering_rates",
        {"searchResults": [_rate("SageMaker", "ml.g5.xlarge", "0.64")]},
        _request("SageMaker", "SageMaker"),
    )
    path = tmp_path / "savings_plan_rates.json"
    with stubber:
        result = write_rates(client, ON_DEMAND.get, path, "2026-11-29")
    assert (result.rates, result.api_calls) == (2, 3)
    return path


def test_the_median_discount_per_plan_kind_with_source_and_date(written: Path) -> None:
    document = json.loads(written.read_text())
    assert document["retrieved"] == "2026-11-29" and "DescribeSavingsPlansOfferingRates" in document["source"]
    assert {r["kind"]: r["discount"] for r in document["rates"]} == {
        "compute_savings_plan": "0.2750",
        "sagemaker_savings_plan": "0.3600",
    }


def test_the_file_is_read_back_and_no_file_means_no_rate(written: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(RATES_FILE_ENV, str(written))
    _rates.cache_clear()
    rate = plan_rate("sagemaker_savings_plan")
    assert rate is not None and (rate.discount, rate.term_years, rate.retrieved) == (Decimal("0.3600"), 1, "2026-11-29")
    monkeypatch.setenv(RATES_FILE_ENV, str(written.with_name("absent.json")))
    assert plan_rate("compute_savings_plan") is None
