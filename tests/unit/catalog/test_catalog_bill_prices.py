"""A type the catalog cannot price takes the public on-demand rate from the account's bill, cited as such."""

from __future__ import annotations

from datetime import date
from decimal import Decimal

from chipwise.catalog import get_catalog


def test_an_unpriced_type_takes_the_bill_s_public_rate_and_cites_it() -> None:
    catalog = get_catalog()
    assert catalog.price("ml.p4d.24xlarge") is None
    priced = catalog.with_account_prices(
        {"ml.p4d.24xlarge": (Decimal("37.688"), "2026-11"), "inf2.xlarge": (Decimal("9.99"), "2026-11")}, "us-east-1"
    )
    assert priced.price("ml.p4d.24xlarge") == Decimal("37.688")
    item = priced.require("ml.p4d.24xlarge")
    source = priced.source_of(item)
    assert source is not None and source.title == "the account's bill, billing period 2026-11"
    assert (item.price_confidence, source.confidence, source.as_of) == ("verified", "verified", date(2026, 11, 1))
    # a type the catalog prices keeps its catalog price; the shared catalog is left as it was
    assert priced.price("inf2.xlarge") == catalog.price("inf2.xlarge") != Decimal("9.99")
    assert catalog.price("ml.p4d.24xlarge") is None
    # another region than the catalog's base: nothing changes
    assert catalog.with_account_prices({"ml.p4d.24xlarge": (Decimal("40"), "2026-11")}, "eu-west-1") is catalog
