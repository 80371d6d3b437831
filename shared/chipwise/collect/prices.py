"""``chipwise catalog refresh``: rebuild the catalog's prices from the AWS Price List API.

The shipped ``instances.json`` keeps its specs; each on-demand price (EC2: ``AmazonEC2`` products for Linux, shared
tenancy, no pre-installed software, capacity status Used; SageMaker: ``AmazonSageMaker`` products with usage
type ``<PREFIX>-Host:ml.<type>``, real-time hosting) is replaced by the Price List figure, with source ``AWSPL``
and today's date. A price the API does not return keeps its previous figure and source. Extra regions get exact
prices in ``regional_prices``, which the loader prefers over the approximate multipliers in ``regions.json``.

The result is written to a separate file; the loader uses it when ``CHIPWISE_CATALOG_FILE`` points to it (or
``get_catalog(path)``).
"""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, date, datetime
from decimal import Decimal, InvalidOperation
from pathlib import Path
from typing import TYPE_CHECKING, Any

from chipwise.catalog.instance_data import SAGEMAKER_PREFIX, InstancesDocument, dump_document, load_catalog_document
from chipwise.catalog.loading import Source
from chipwise.catalog.regions import get_regions
from chipwise.errors import ConfigError, UpstreamError

if TYPE_CHECKING:
    from mypy_boto3_pricing import PricingClient
    from mypy_boto3_pricing.type_defs import FilterTypeDef

DEFAULT_OUTPUT = Path("chipwise-catalog.json")
PRICE_LIST_SOURCE = "AWSPL"
PRICING_REGION = "us-east-1"  # the Price List Query API endpoint used for all regions
MAX_RESULTS = 100

Progress = Callable[[str, int, int], None]
"""Called as ``progress(what, done, total)`` after each instance type."""


@dataclass
class RefreshResult:
    """What a refresh changed, for the command's summary."""

    output: Path
    as_of: date
    regions: list[str]
    updated: dict[str, int] = field(default_factory=dict)  # region -> prices found (EC2 + ml.)
    missing: dict[str, list[str]] = field(default_factory=dict)  # region -> names the API had no price for
    api_calls: int = 0


# --- Price List parsing ---------------------------------------------------------------------------------------


def _term_filters(**fields: str) -> list[FilterTypeDef]:
    return [{"Type": "TERM_MATCH", "Field": name, "Value": value} for name, value in fields.items()]


def ec2_filters(instance_type: str, location: str) -> list[FilterTypeDef]:
    """On-demand Linux, shared tenancy, no pre-installed software, capacity in use (not reservations)."""
    return _term_filters(
        instanceType=instance_type,
        location=location,
        operatingSystem="Linux",
        tenancy="Shared",
        preInstalledSw="NA",
        capacitystatus="Used",
    )


def sagemaker_filters(ml_type: str, usage_type_prefix: str) -> list[FilterTypeDef]:
    """Real-time hosting of one ``ml.`` type in the region of the usage-type prefix."""
    return _term_filters(usagetype=f"{usage_type_prefix}-Host:{ml_type}")


def on_demand_hourly_usd(item: Mapping[str, Any]) -> Decimal | None:
    """The hourly USD price in ``terms.OnDemand.*.priceDimensions.*.pricePerUnit.USD`` (first tier), or None."""
    for term in (item.get("terms", {}).get("OnDemand") or {}).values():
        for dimension in (term.get("priceDimensions") or {}).values():
            if str(dimension.get("unit", "")).lower() not in ("hrs", "hours", "hour"):
                continue
            if str(dimension.get("beginRange", "0")) != "0":
                continue
            try:
                price = Decimal(str(dimension.get("pricePerUnit", {}).get("USD", "")))
            except InvalidOperation:
                continue
            if price > 0:
                return price
    return None


def _usage_type(item: Mapping[str, Any]) -> str:
    return str(item.get("product", {}).get("attributes", {}).get("usagetype", ""))


def clean_price(price: Decimal) -> Decimal:
    """``0.7582000000`` -> ``0.7582``, never exponent form (``1E+1``)."""
    normal = price.normalize()
    exponent = normal.as_tuple().exponent
    return normal.quantize(Decimal(1)) if isinstance(exponent, int) and exponent > 0 else normal


class PriceList:
    """Price List queries through one client, counting the requests (each page is one)."""

    def __init__(self, client: PricingClient) -> None:
        self.client = client
        self.calls = 0

    def items(self, service_code: str, filters: list[FilterTypeDef]) -> Iterator[Any]:
        """Every product of a ``get_products`` query (all pages), each decoded from its JSON string."""
        token: str | None = None
        while True:
            self.calls += 1
            if token:
                page = self.client.get_products(
                    ServiceCode=service_code, Filters=filters, MaxResults=MAX_RESULTS, NextToken=token
                )
            else:
                page = self.client.get_products(ServiceCode=service_code, Filters=filters, MaxResults=MAX_RESULTS)
            for item in page.get("PriceList", []):
                yield json.loads(item) if isinstance(item, str | bytes) else item
            token = page.get("NextToken")
            if not token:
                return

    def ec2_price(self, instance_type: str, location: str) -> Decimal | None:
        """The on-demand hourly price of an EC2 type: only ``BoxUsage`` products (not capacity blocks)."""
        for item in self.items("AmazonEC2", ec2_filters(instance_type, location)):
            usage = _usage_type(item)
            if usage and "BoxUsage:" not in usage:
                continue
            price = on_demand_hourly_usd(item)
            if price is not None:
                return clean_price(price)
        return None

    def sagemaker_price(self, ml_type: str, usage_type_prefix: str) -> Decimal | None:
        """The real-time hosting hourly price of an ``ml.`` type."""
        for item in self.items("AmazonSageMaker", sagemaker_filters(ml_type, usage_type_prefix)):
            price = on_demand_hourly_usd(item)
            if price is not None:
                return clean_price(price)
        return None


# --- building the refreshed document ----------------------------------------------------------------------------


def _price_source(today: date) -> Source:
    return Source(
        title="AWS Price List API (Query API, GetProducts)",
        citation=(
            "pricing.get_products: ServiceCode AmazonEC2 filtered on instanceType, location, operatingSystem=Linux, "
            "tenancy=Shared, preInstalledSw=NA, capacitystatus=Used; ServiceCode AmazonSageMaker filtered on "
            "usagetype <PREFIX>-Host:ml.<type>; terms.OnDemand priceDimensions pricePerUnit.USD"
        ),
        url="https://docs.aws.amazon.com/aws-cost-management/latest/APIReference/API_pricing_GetProducts.html",
        as_of=today,
        confidence="verified",
        note="Written by `chipwise catalog refresh`.",
    )


def _region_facts(region: str) -> tuple[str, str]:
    info = get_regions().get(region)
    if info is None:
        known = ", ".join(r.code for r in get_regions().all())
        raise ConfigError(f"unknown region {region!r} for the catalog refresh (known: {known})")
    return info.location, info.usage_type_prefix


def _fetch_region(
    price_list: PriceList,
    region: str,
    rows: Sequence[Mapping[str, Any]],
    progress: Progress | None,
) -> tuple[dict[str, Decimal], dict[str, Decimal], list[str]]:
    """EC2 and SageMaker prices of ``rows`` in one region; the names without a price."""
    location, prefix = _region_facts(region)
    ec2: dict[str, Decimal] = {}
    ml: dict[str, Decimal] = {}
    missing: list[str] = []
    for done, row in enumerate(rows, start=1):
        name = str(row["name"])
        price = price_list.ec2_price(name, location)
        if price is None:
            missing.append(name)
        else:
            ec2[name] = price
        if row.get("sagemaker"):
            ml_name = SAGEMAKER_PREFIX + name
            ml_price = price_list.sagemaker_price(ml_name, prefix)
            if ml_price is None:
                missing.append(ml_name)
            else:
                ml[name] = ml_price
        if progress:
            progress(region, done, len(rows))
    return ec2, ml, missing


def _apply_base_prices(
    rows: list[dict[str, Any]], ec2: Mapping[str, Decimal], ml: Mapping[str, Decimal], today: date
) -> None:
    """Price List figures replace the shipped ones and are ``verified`` as of today (a derived or missing
    SageMaker price becomes a real one)."""
    for row in rows:
        name = row["name"]
        if name in ec2:
            row.update(price=ec2[name], price_source=PRICE_LIST_SOURCE, price_confidence="verified", price_as_of=today)
            row.pop("note", None)
        if name in ml:
            row.update(
                sagemaker_price=ml[name],
                sagemaker_price_source=PRICE_LIST_SOURCE,
                sagemaker_price_confidence="verified",
                sagemaker_price_as_of=today,
            )


def refresh_document(
    base: InstancesDocument,
    client: PricingClient,
    *,
    today: date,
    regions: Iterable[str] = (),
    instance_types: Iterable[str] | None = None,
    progress: Progress | None = None,
) -> tuple[dict[str, Any], RefreshResult]:
    """The catalog document with Price List prices (``base`` is not changed) and a summary of what was found."""
    price_list = PriceList(client)
    document: dict[str, Any] = base.model_dump(mode="python", exclude_defaults=True)
    rows: list[dict[str, Any]] = [
        row.model_dump(mode="python", exclude_defaults=True) for row in base.instances
    ]  # the rows' own defaults (default_lnc 1, no note...) stay out of the file
    wanted = {n.strip().lower() for n in instance_types} if instance_types is not None else None
    selected = [row for row in rows if wanted is None or row["name"] in wanted]
    extra = list(dict.fromkeys(r.strip().lower() for r in regions if r.strip().lower() != base.region))
    for region in (base.region, *extra):
        _region_facts(region)  # an unknown region fails before any request is made
    result = RefreshResult(output=DEFAULT_OUTPUT, as_of=today, regions=[base.region, *extra])

    ec2, ml, missing = _fetch_region(price_list, base.region, selected, progress)
    _apply_base_prices(rows, ec2, ml, today)
    result.updated[base.region], result.missing[base.region] = len(ec2) + len(ml), missing

    regional: dict[str, dict[str, Decimal]] = {k: dict(v) for k, v in base.regional_prices.items()}
    for region in extra:
        ec2, ml, missing = _fetch_region(price_list, region, selected, progress)
        prices = regional.setdefault(region, {})
        prices.update(ec2)
        prices.update({SAGEMAKER_PREFIX + name: price for name, price in ml.items()})
        result.updated[region], result.missing[region] = len(ec2) + len(ml), missing

    document["sources"] = {**document["sources"], PRICE_LIST_SOURCE: _price_source(today).model_dump(mode="python")}
    document["as_of"] = today
    document["generated_by"] = f"chipwise catalog refresh, AWS Price List API, {today.isoformat()}"
    document["regional_prices"] = regional
    document["instances"] = rows
    result.api_calls = price_list.calls
    return document, result


def _write_atomically(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
        Path(tmp).replace(path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def default_pricing_client() -> PricingClient:
    """The Price List client of the home session (us-east-1 endpoint, standard retries)."""
    from chipwise.aws import aws_context

    return aws_context(PRICING_REGION).client("pricing")


def refresh_catalog(
    output: Path = DEFAULT_OUTPUT,
    *,
    regions: Iterable[str] = (),
    client: PricingClient | None = None,
    today: date | None = None,
    instance_types: Iterable[str] | None = None,
    progress: Progress | None = None,
) -> RefreshResult:
    """Fetch the prices and write the refreshed catalog to ``output`` (validated before it is written)."""
    from botocore.exceptions import BotoCoreError, ClientError

    base = load_catalog_document(None)
    today = today or datetime.now(UTC).date()
    try:
        document, result = refresh_document(
            base,
            client or default_pricing_client(),
            today=today,
            regions=regions,
            instance_types=instance_types,
            progress=progress,
        )
    except (BotoCoreError, ClientError) as exc:
        raise UpstreamError(f"the AWS Price List API failed: {exc}") from exc
    text = dump_document(document)
    InstancesDocument.model_validate(json.loads(text, parse_float=Decimal))  # never write a file the loader rejects
    _write_atomically(output, text)
    result.output = output
    return result
