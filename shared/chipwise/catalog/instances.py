"""The instance catalog: EC2 and SageMaker ``ml.*`` types, their accelerators and on-demand prices.

Every figure comes from ``data/instances.json`` (or a refreshed copy, see :mod:`chipwise.collect.prices`), read by
:mod:`chipwise.catalog.instance_data`, and ``data/regions.json`` (:mod:`chipwise.catalog.regions`); each price
names a source code whose citation and as-of date are in the file. Nothing here holds a price: the code only
reads, derives (SageMaker premium, regional multiplier) and looks up. Facts EC2 itself reports for a type the
catalog lacks are read by :mod:`chipwise.catalog.ec2_facts`.
"""

import copy
import os
from collections.abc import Mapping
from datetime import date
from decimal import Decimal
from functools import lru_cache
from pathlib import Path
from typing import Self

from pydantic import Field

from chipwise.catalog.instance_data import (
    NEURON_PLATFORMS,
    SAGEMAKER_PREFIX,
    InstanceRow,
    InstancesDocument,
    PremiumFactor,
    dump_document,
    family_of,
    load_catalog_document,
    quantize_price,
    strip_ml,
)
from chipwise.catalog.loading import FrozenData, PriceConfidence, Source, load_data_file
from chipwise.catalog.regions import Region, Regions, get_regions
from chipwise.errors import NotFound
from chipwise.models.common import Platform

__all__ = [
    "CATALOG_FILE_ENV",
    "SAGEMAKER_PREFIX",
    "Catalog",
    "InstanceRow",
    "InstanceType",
    "InstancesDocument",
    "Platform",
    "PremiumFactor",
    "PriceConfidence",
    "Region",
    "Regions",
    "Source",
    "UnknownInstanceType",
    "dump_document",
    "family_of",
    "get_catalog",
    "get_regions",
    "load_catalog_document",
    "load_data_file",
    "platform_of",
    "quantize_price",
    "strip_ml",
]

CATALOG_FILE_ENV = "CHIPWISE_CATALOG_FILE"  # a refreshed catalog (``chipwise catalog refresh``) to use instead


class UnknownInstanceType(NotFound):
    """The catalog has no such instance type."""


class InstanceType(FrozenData):
    """One EC2 type or its SageMaker ``ml.`` twin, with its accelerators and on-demand price in the base region."""

    name: str = Field(description="inf2.xlarge, or ml.inf2.xlarge for the SageMaker type.")
    family: str = Field(description="inf2 (without ml.).")
    platform: Platform
    sagemaker: bool
    accelerator: str | None = Field(description="Inferentia, Inferentia2, Trainium, Trainium2, A100, H100, ...")
    accelerator_count: int = Field(description="Accelerator chips (Neuron devices or GPUs); 0 for a GPU fraction.")
    accelerator_fraction: Decimal | None = Field(None, description="A fractional-GPU type's share of one GPU.")
    neuron_cores: int = Field(description="Physical NeuronCores (0 for GPU and CPU types).")
    neuron_devices: int = Field(description="Neuron devices (chips); 0 for GPU and CPU types.")
    logical_neuron_cores: int = Field(description="NeuronCores as the runtime shows them at the default LNC.")
    accelerator_memory_gib: Decimal = Field(description="Accelerator memory of the whole instance.")
    vcpu: int
    memory_gib: Decimal
    price_usd_per_hour: Decimal | None = Field(description="On-demand, Linux, in the catalog's base region.")
    price_source: str | None = Field(description="A key of Catalog.sources.")
    price_confidence: PriceConfidence
    price_as_of: date | None = None
    price_note: str | None = Field(None, description="How a derived price was made, or why there is none.")
    ec2_name: str = Field(description="The EC2 name (inf2.xlarge) for both variants.")

    @property
    def accelerated(self) -> bool:
        return self.platform != "cpu"

    @property
    def accelerator_units(self) -> Decimal:
        """Accelerators as a number: the chip count, or a fractional-GPU type's share of one GPU."""
        return self.accelerator_fraction or Decimal(self.accelerator_count)

    @property
    def price_is_estimate(self) -> bool:
        """The price is not verified (one public source or derived)."""
        return self.price_confidence not in ("verified", "corroborated")

    @property
    def neuron(self) -> bool:
        return self.platform in NEURON_PLATFORMS


def _ec2_type(row: InstanceRow, sources: Mapping[str, Source]) -> InstanceType:
    neuron = row.platform in NEURON_PLATFORMS
    return InstanceType(
        name=row.name,
        family=family_of(row.name),
        platform=row.platform,
        sagemaker=False,
        accelerator=row.accelerator,
        accelerator_count=row.accelerator_count,
        accelerator_fraction=row.accelerator_fraction,
        neuron_cores=row.neuron_cores,
        neuron_devices=row.accelerator_count if neuron else 0,
        logical_neuron_cores=row.neuron_cores // row.default_lnc,
        accelerator_memory_gib=row.accelerator_memory_gib,
        vcpu=row.vcpu,
        memory_gib=row.memory_gib,
        price_usd_per_hour=row.price,
        price_source=row.price_source,
        price_confidence=row.price_confidence,
        price_as_of=row.price_as_of,
        price_note=row.note if row.price is None else None,
        ec2_name=row.name,
    )


def _sagemaker_type(ec2: InstanceType, row: InstanceRow, doc: InstancesDocument) -> InstanceType:
    """The ``ml.`` twin: the explicit SageMaker figure; else the EC2 price x the family's measured premium
    (``derived``); else no price (SageMaker's premium differs by family and size, so none is assumed)."""
    price: Decimal | None = None
    source: str | None = None
    confidence: PriceConfidence = "none"
    as_of: date | None = None
    note: str | None
    premium = doc.sagemaker_premium.get(ec2.family)
    if row.sagemaker_price is not None and row.sagemaker_price_source is not None:
        price, source = row.sagemaker_price, row.sagemaker_price_source
        confidence, as_of, note = row.sagemaker_price_confidence or "single", row.sagemaker_price_as_of, None
    elif premium is not None and ec2.price_usd_per_hour is not None:
        price, source, confidence, as_of = (
            quantize_price(ec2.price_usd_per_hour * premium.factor),
            premium.source,
            "derived",
            ec2.price_as_of,
        )
        note = f"EC2 price {ec2.price_usd_per_hour} x SageMaker premium {premium.factor} ({premium.basis})"
    else:
        note = "no public SageMaker price for this type or its family: ask AWS for a quote"
    return ec2.model_copy(
        update={
            "name": SAGEMAKER_PREFIX + ec2.name,
            "sagemaker": True,
            "price_usd_per_hour": price,
            "price_source": source,
            "price_confidence": confidence,
            "price_as_of": as_of,
            "price_note": note,
        }
    )


def _price_order(item: InstanceType) -> tuple[int, Decimal, int, str]:
    price = item.price_usd_per_hour
    return (price is None, price or Decimal(0), item.vcpu, item.name)


class Catalog:
    """Instance types by name (EC2 and ``ml.``), their prices and the sources behind them."""

    def __init__(self, document: InstancesDocument, regions: Regions) -> None:
        self.document = document
        self.as_of: date = document.as_of
        self.region: str = document.region
        self.sources: dict[str, Source] = dict(document.sources)
        self.regions = regions
        self._types: dict[str, InstanceType] = {}
        for row in document.instances:
            ec2 = _ec2_type(row, document.sources)
            self._types[ec2.name] = ec2
            if row.sagemaker:
                ml = _sagemaker_type(ec2, row, document)
                self._types[ml.name] = ml
        self._family_platforms: dict[str, Platform] = dict(document.extra_families)
        self._family_platforms.update({t.family: t.platform for t in self._types.values()})
        self._regional = {
            region.lower(): {name.lower(): price for name, price in prices.items()}
            for region, prices in document.regional_prices.items()
        }

    def get(self, name: str) -> InstanceType | None:
        """``inf2.xlarge`` (EC2) or ``ml.inf2.xlarge`` (SageMaker); case and surrounding spaces are ignored."""
        return self._types.get(name.strip().lower())

    def require(self, name: str) -> InstanceType:
        found = self.get(name)
        if found is None:
            raise UnknownInstanceType(f"unknown instance type {name!r}: `chipwise catalog show` lists the known ones")
        return found

    def price(self, name: str, region: str = "us-east-1") -> Decimal | None:
        """On-demand USD/hour in ``region``: an exact refreshed figure, else the base price x the region's
        (approximate) multiplier. None when the type, its price or the region's multiplier is unknown."""
        found = self.get(name)
        if found is None or found.price_usd_per_hour is None:
            return None
        region = region.strip().lower()
        if region == self.region:
            return quantize_price(found.price_usd_per_hour)
        exact = self._regional.get(region, {}).get(found.name)
        if exact is not None:
            return quantize_price(exact)
        target = self.regions.multiplier(region, found.platform)
        base = self.regions.multiplier(self.region, found.platform)
        if target is None or base is None:
            return None
        return quantize_price(found.price_usd_per_hour * target / base)

    def family(self, family: str, sagemaker: bool = False) -> list[InstanceType]:
        """Every size of a family (``inf2``), cheapest first, unpriced last."""
        wanted = family_of(family + ".x")
        return sorted(
            (t for t in self._types.values() if t.family == wanted and t.sagemaker == sagemaker), key=_price_order
        )

    def by_platform(self, platform: Platform, sagemaker: bool = False) -> list[InstanceType]:
        return sorted(
            (t for t in self._types.values() if t.platform == platform and t.sagemaker == sagemaker),
            key=_price_order,
        )

    def all(self) -> list[InstanceType]:
        return list(self._types.values())

    def families(self, sagemaker: bool = False) -> list[str]:
        return sorted({t.family for t in self._types.values() if t.sagemaker == sagemaker})

    def platform_of_family(self, family: str) -> Platform | None:
        return self._family_platforms.get(family_of(family + ".x"))

    def source_of(self, item: InstanceType) -> Source | None:
        return self.sources.get(item.price_source) if item.price_source else None

    def with_account_prices(self, prices: Mapping[str, tuple[Decimal, str]], region: str) -> Self:
        """This catalog, where a type it knows but cannot price in ``region`` (its base region) takes the public
        on-demand rate the account's own bill states, cited as "the account's bill, billing period YYYY-MM"
        (verified: it is what AWS billed). Nothing changes for another region or a type the catalog prices."""
        if region.strip().lower() != self.region or not prices:
            return self
        clone = copy.copy(self)
        clone.sources = dict(self.sources)
        clone._types = dict(self._types)
        for name, item in self._types.items():
            found = prices.get(name)
            if item.price_usd_per_hour is not None or found is None:
                continue
            rate, period = found
            code = f"account-bill-{period}"
            if code not in clone.sources:
                title = f"the account's bill, billing period {period}"
                clone.sources[code] = Source(
                    title=title,
                    citation=f"{title}: pricing_public_on_demand_rate of the account's own usage (AWS Data Exports)",
                    as_of=date.fromisoformat(f"{period}-01"),
                    confidence="verified",
                )
            clone._types[name] = item.model_copy(
                update={
                    "price_usd_per_hour": quantize_price(rate),
                    "price_source": code,
                    "price_confidence": "verified",
                    "price_as_of": date.fromisoformat(f"{period}-01"),
                    "price_note": None,
                }
            )
        return clone


@lru_cache(maxsize=8)
def _load_catalog(path: Path | None) -> Catalog:
    return Catalog(load_catalog_document(path), get_regions())


def get_catalog(path: Path | None = None) -> Catalog:
    """The catalog, loaded once per file: ``path``, else ``$CHIPWISE_CATALOG_FILE``, else the shipped data."""
    if path is None:
        env = os.environ.get(CATALOG_FILE_ENV, "").strip()
        path = Path(env) if env else None
    return _load_catalog(path.resolve() if path else None)


get_catalog.cache_clear = _load_catalog.cache_clear  # type: ignore[attr-defined]


def platform_of(instance_type: str) -> Platform | None:
    """The platform of a type (``ml.`` accepted); a known family's platform for sizes not in the catalog."""
    catalog = get_catalog()
    found = catalog.get(instance_type)
    if found is not None:
        return found.platform
    if "." not in instance_type:
        return None
    return catalog.platform_of_family(instance_type)
