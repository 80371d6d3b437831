"""``chipwise catalog refresh`` against canned Price List pages (botocore Stubber: the emulator has no Pricing API)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import date
from decimal import Decimal
from pathlib import Path
from typing import Any

import boto3
import pytest
from botocore.stub import Stubber

from chipwise.catalog import get_catalog
from chipwise.collect.prices import (
    MAX_RESULTS,
    clean_price,
    ec2_filters,
    on_demand_hourly_usd,
    refresh_catalog,
    sagemaker_filters,
)
from chipwise.errors import ConfigError, UpstreamError

TODAY = date(2026, 11, 22)


def product(usage_type: str, price: str, unit: str = "Hrs", sku: str = "SKU1") -> str:
    """One PriceList entry as the API returns it: a JSON string."""
    return json.dumps(
        {
            "product": {"productFamily": "Compute Instance", "sku": sku, "attributes": {"usagetype": usage_type}},
            "serviceCode": "AmazonEC2",
            "terms": {
                "OnDemand": {
                    f"{sku}.JRTCKXETXF": {
                        "offerTermCode": "JRTCKXETXF",
                        "sku": sku,
                        "effectiveDate": "2026-11-01T00:00:00Z",
                        "priceDimensions": {
                            f"{sku}.JRTCKXETXF.6YS6EN2CT7": {
                                "unit": unit,
                                "beginRange": "0",
                                "endRange": "Inf",
                                "description": f"${price} per On Demand Linux Instance Hour",
                                "pricePerUnit": {"USD": price},
                            }
                        },
                        "termAttributes": {},
                    }
                }
            },
        }
    )


def page(*items: str, token: str | None = None) -> dict[str, Any]:
    response: dict[str, Any] = {"FormatVersion": "aws_v1", "PriceList": list(items)}
    if token:
        response["NextToken"] = token
    return response


def expect_ec2(stub: Stubber, name: str, location: str, response: dict[str, Any], token: str | None = None) -> None:
    params: dict[str, Any] = {"ServiceCode": "AmazonEC2", "Filters": ec2_filters(name, location)}
    params["MaxResults"] = MAX_RESULTS
    if token:
        params["NextToken"] = token
    stub.add_response("get_products", response, params)


def expect_sagemaker(stub: Stubber, ml_name: str, prefix: str, response: dict[str, Any]) -> None:
    params = {"ServiceCode": "AmazonSageMaker", "Filters": sagemaker_filters(ml_name, prefix), "MaxResults": 100}
    stub.add_response("get_products", response, params)


@pytest.fixture
def pricing() -> Iterator[tuple[Any, Stubber]]:
    client = boto3.client("pricing", region_name="us-east-1")
    with Stubber(client) as stub:
        yield client, stub
        stub.assert_no_pending_responses()


@pytest.fixture(autouse=True)
def _catalog_cache() -> Iterator[None]:
    yield
    get_catalog.cache_clear()  # type: ignore[attr-defined]


def test_refresh_replaces_prices_and_keeps_what_the_api_lacks(pricing: tuple[Any, Stubber], tmp_path: Path) -> None:
    client, stub = pricing
    virginia = "US East (N. Virginia)"
    # Given: inf2.xlarge on two pages (a capacity-block product first), its SageMaker twin, and nothing for trn2
    expect_ec2(stub, "inf2.xlarge", virginia, page(product("CapacityBlock:inf2.xlarge", "9.99"), token="page2"))
    expect_ec2(stub, "inf2.xlarge", virginia, page(product("BoxUsage:inf2.xlarge", "0.7600000000")), token="page2")
    expect_sagemaker(stub, "ml.inf2.xlarge", "USE1", page(product("USE1-Host:ml.inf2.xlarge", "1.0120000000")))
    expect_ec2(stub, "trn2.48xlarge", virginia, page())
    expect_sagemaker(stub, "ml.trn2.48xlarge", "USE1", page())
    seen: list[tuple[str, int, int]] = []

    # When the catalog is refreshed for those two types
    output = tmp_path / "chipwise-catalog.json"
    result = refresh_catalog(
        output,
        client=client,
        today=TODAY,
        instance_types=["inf2.xlarge", "trn2.48xlarge"],
        progress=lambda *args: seen.append(args),
    )

    # Then the API's prices replace the shipped ones, with the Price List as source and today's date
    catalog = get_catalog(output)
    inf2, ml_inf2 = catalog.require("inf2.xlarge"), catalog.require("ml.inf2.xlarge")
    assert (inf2.price_usd_per_hour, inf2.price_source, inf2.price_confidence) == (Decimal("0.76"), "AWSPL", "verified")
    assert inf2.price_as_of == TODAY
    assert (ml_inf2.price_usd_per_hour, ml_inf2.price_source) == (Decimal("1.012"), "AWSPL")
    assert (ml_inf2.price_confidence, ml_inf2.price_as_of) == ("verified", TODAY)
    assert catalog.as_of == TODAY and catalog.sources["AWSPL"].as_of == TODAY
    # And what the API did not return keeps its previous figure and source
    assert catalog.require("trn2.48xlarge").price_usd_per_hour is None
    g5 = catalog.require("g5.xlarge")
    assert (g5.price_usd_per_hour, g5.price_source) == (Decimal("1.006"), "AWS-PRICE-LIST")
    assert result.updated == {"us-east-1": 2}
    assert result.missing == {"us-east-1": ["trn2.48xlarge", "ml.trn2.48xlarge"]}
    assert result.api_calls == 5
    assert seen == [("us-east-1", 1, 2), ("us-east-1", 2, 2)]
    # And the file keeps the shipped layout (decimal strings, one row per line)
    text = output.read_text()
    assert '"price": "0.76", "price_source": "AWSPL", "price_confidence": "verified"' in text
    assert "E+" not in text


def test_refresh_with_a_region_stores_exact_regional_prices(pricing: tuple[Any, Stubber], tmp_path: Path) -> None:
    client, stub = pricing
    expect_ec2(stub, "g5.xlarge", "US East (N. Virginia)", page(product("BoxUsage:g5.xlarge", "1.0060000000")))
    expect_sagemaker(stub, "ml.g5.xlarge", "USE1", page(product("USE1-Host:ml.g5.xlarge", "1.4080000000")))
    expect_ec2(stub, "g5.xlarge", "EU (Ireland)", page(product("EU-BoxUsage:g5.xlarge", "1.1230000000")))
    expect_sagemaker(stub, "ml.g5.xlarge", "EU", page(product("EU-Host:ml.g5.xlarge", "1.5800000000")))

    output = tmp_path / "out" / "catalog.json"
    refresh_catalog(output, client=client, today=TODAY, regions=["eu-west-1"], instance_types=["g5.xlarge"])

    catalog = get_catalog(output)
    assert catalog.price("g5.xlarge", "eu-west-1") == Decimal("1.123000")
    assert catalog.price("ml.g5.xlarge", "eu-west-1") == Decimal("1.580000")
    assert catalog.price("ml.g5.xlarge") == Decimal("1.408000")
    # Types without an exact regional figure still use the multiplier
    assert catalog.price("inf2.xlarge", "eu-west-1") == Decimal("0.947750")


def test_an_unknown_region_fails_before_any_request(pricing: tuple[Any, Stubber], tmp_path: Path) -> None:
    client, _ = pricing
    with pytest.raises(ConfigError, match="unknown region"):
        refresh_catalog(tmp_path / "x.json", client=client, regions=["mars-north-1"], instance_types=["g5.xlarge"])
    assert not (tmp_path / "x.json").exists()


def test_an_api_error_is_an_upstream_error_and_writes_nothing(pricing: tuple[Any, Stubber], tmp_path: Path) -> None:
    client, stub = pricing
    stub.add_client_error("get_products", service_error_code="AccessDeniedException", http_status_code=403)
    with pytest.raises(UpstreamError, match="Price List"):
        refresh_catalog(tmp_path / "x.json", client=client, instance_types=["g5.xlarge"])
    assert not (tmp_path / "x.json").exists()


def test_on_demand_price_parsing() -> None:
    assert on_demand_hourly_usd(json.loads(product("BoxUsage:x", "0.5000000000"))) == Decimal("0.5")
    assert on_demand_hourly_usd(json.loads(product("BoxUsage:x", "0.0000000000"))) is None
    assert on_demand_hourly_usd(json.loads(product("BoxUsage:x", "12", unit="GB-Mo"))) is None
    assert on_demand_hourly_usd({"terms": {}}) is None
    assert on_demand_hourly_usd({}) is None


@pytest.mark.parametrize(
    ("raw", "clean"),
    [("0.7582000000", "0.7582"), ("10.0000000000", "10"), ("21.5000", "21.5"), ("0.000001", "0.000001")],
)
def test_clean_price(raw: str, clean: str) -> None:
    assert format(clean_price(Decimal(raw)), "f") == clean
