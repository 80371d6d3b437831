"""The instance catalog: EC2 and SageMaker ``ml.*`` types, their accelerators and on-demand prices.

Every figure comes from ``data/instances.json`` (or a refreshed copy, see :mod:`chipwise.collect.prices`) and
``data/regions.json``; each price names a source code whose citation and as-of date are in the file. Nothing
here holds a price: the code only reads, derives (SageMaker premium, regional multiplier) and looks up.
"""

import copy
import json
import os
import re
from collections.abc import Mapping
from datetime import date
from decimal import Decimal
from functools import lru_cache
from pathlib import Path
from typing import Any, Literal, Self

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from chipwise.catalog.loading import PriceConfidence, Source, load_data_file
from chipwise.economics import round_money
from chipwise.errors import ConfigError, NotFound
from chipwise.models.common import Platform

__all__ = [
    "CATALOG_FILE_ENV",
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
    "get_catalog",
    "get_regions",
    "load_data_file",
    "platform_of",
]

CATALOG_FILE_ENV = "CHIPWISE_CATALOG_FILE"  # a refreshed catalog (``chipwise catalog refresh``) to use instead
SAGEMAKER_PREFIX = "ml."
PRICE_PLACES = Decimal("0.000001")
_NAME = re.compile(r"^[a-z0-9][a-z0-9-]*\.[a-z0-9][a-z0-9-]*$")
_NEURON_PLATFORMS: frozenset[str] = frozenset({"inferentia", "trainium"})


class UnknownInstanceType(NotFound):
    """The catalog has no such instance type."""


class _FrozenFacts(BaseModel):
    model_config = ConfigDict(defer_build=True, frozen=True, extra="forbid")


def quantize_price(value: Decimal) -> Decimal:
    """Hourly prices are kept to 6 decimal places (the AWS price list carries up to 10, SKY up to 6)."""
    return round_money(value, 6)


def strip_ml(name: str) -> str:
    return name[len(SAGEMAKER_PREFIX) :] if name.startswith(SAGEMAKER_PREFIX) else name


def family_of(name: str) -> str:
    """``inf2`` from ``inf2.xlarge`` or ``ml.inf2.xlarge``."""
    return strip_ml(name.strip().lower()).split(".", 1)[0]


# --- the data file --------------------------------------------------------------------------------------------


class PremiumFactor(_FrozenFacts):
    """SageMaker price = EC2 price x factor, for ``ml.*`` types of the family without an explicit figure."""

    factor: Decimal = Field(gt=0)
    source: str
    confidence: Literal["derived"] = "derived"
    basis: str = Field(min_length=10, description="Which verified pair the factor was measured on.")


class InstanceRow(_FrozenFacts):
    """One EC2 type as stored in ``instances.json`` (the SageMaker ``ml.`` twin is derived from it)."""

    name: str
    platform: Platform
    accelerator: str | None
    accelerator_count: int = Field(ge=0)
    neuron_cores: int = Field(ge=0, description="Physical NeuronCores.")
    default_lnc: int = Field(1, ge=1, description="Logical NeuronCore config (trn2 defaults to 2).")
    accelerator_memory_gib: Decimal = Field(ge=0)
    vcpu: int = Field(ge=1)
    memory_gib: Decimal = Field(gt=0)
    price: Decimal | None = Field(description="On-demand USD/hour in the document's region (positive).")
    price_source: str | None
    price_confidence: PriceConfidence
    price_as_of: date | None = None
    sagemaker: bool = False
    sagemaker_price: Decimal | None = None
    sagemaker_price_source: str | None = None
    sagemaker_price_confidence: PriceConfidence | None = None
    sagemaker_price_as_of: date | None = None
    note: str | None = None

    @field_validator("name")
    @classmethod
    def _name(cls, value: str) -> str:
        if not _NAME.match(value) or value.startswith(SAGEMAKER_PREFIX):
            raise ValueError(f"{value!r} is not an EC2 instance type name (lowercase family.size, no ml.)")
        return value

    @model_validator(mode="after")
    def _consistent(self) -> Self:
        self._check_prices()
        self._check_hardware()
        return self

    def _check_prices(self) -> None:
        """Each price positive, with its source, confidence and date; a missing price says why."""
        for label, value in (("price", self.price), ("sagemaker_price", self.sagemaker_price)):
            if value is not None and value <= 0:
                raise ValueError(f"{self.name}: {label} {value} is not a positive hourly price")
        if (self.price is None) != (self.price_source is None):
            raise ValueError(f"{self.name}: a price needs its source (and a source its price)")
        if (self.price is None) != (self.price_confidence == "none"):
            raise ValueError(f"{self.name}: price_confidence is 'none' exactly when there is no price")
        if self.price is not None and self.price_as_of is None:
            raise ValueError(f"{self.name}: a price needs its date (price_as_of)")
        if self.price is None and not self.note:
            raise ValueError(f"{self.name}: a missing price needs a note saying why")
        if (self.sagemaker_price is None) != (self.sagemaker_price_source is None):
            raise ValueError(f"{self.name}: sagemaker_price and sagemaker_price_source go together")
        if self.sagemaker_price is not None and not self.sagemaker:
            raise ValueError(f"{self.name}: sagemaker_price given but sagemaker is false")

    def _check_hardware(self) -> None:
        """NeuronCores on Neuron types only, an accelerator on accelerated types only."""
        neuron = self.platform in _NEURON_PLATFORMS
        if neuron and (self.neuron_cores < 1 or self.accelerator_count < 1):
            raise ValueError(f"{self.name}: a Neuron type needs devices and NeuronCores")
        if not neuron and (self.neuron_cores or self.default_lnc != 1):
            raise ValueError(f"{self.name}: only Neuron types have NeuronCores")
        if self.platform == "cpu" and (self.accelerator or self.accelerator_count or self.accelerator_memory_gib):
            raise ValueError(f"{self.name}: a CPU type has no accelerator")
        if self.platform != "cpu" and (not self.accelerator or self.accelerator_count < 1):
            raise ValueError(f"{self.name}: an accelerated type names its accelerator and count")
        if self.neuron_cores % self.default_lnc:
            raise ValueError(f"{self.name}: neuron_cores must divide by default_lnc")


class InstancesDocument(_FrozenFacts):
    """The whole ``instances.json`` (shipped, or written by ``chipwise catalog refresh``)."""

    schema_version: Literal[1]
    description: str
    as_of: date
    region: str
    currency: Literal["USD"]
    generated_by: str
    sources: dict[str, Source]
    spec_source: str
    spec_note: str
    sagemaker_premium: dict[str, PremiumFactor]
    extra_families: dict[str, Platform] = Field(
        default_factory=dict, description="Families without catalog rows, for platform_of() only."
    )
    regional_prices: dict[str, dict[str, Decimal]] = Field(
        default_factory=dict, description="Exact prices by region (from a refresh), EC2 and ml.* names."
    )
    instances: list[InstanceRow]

    @model_validator(mode="after")
    def _references(self) -> Self:
        names = [row.name for row in self.instances]
        duplicates = sorted({n for n in names if names.count(n) > 1})
        if duplicates:
            raise ValueError(f"duplicate instance types: {', '.join(duplicates)}")
        used = {self.spec_source} | {p.source for p in self.sagemaker_premium.values()}
        for row in self.instances:
            used.update(s for s in (row.price_source, row.sagemaker_price_source) if s)
        missing = sorted(used - set(self.sources))
        if missing:
            raise ValueError(f"source codes without a sources entry: {', '.join(missing)}")
        families = {family_of(n) for n in names}
        unknown = sorted(set(self.sagemaker_premium) - families)
        if unknown:
            raise ValueError(f"sagemaker_premium for unknown families: {', '.join(unknown)}")
        return self


def _format_value(value: Any) -> Any:
    if isinstance(value, Decimal):
        return format(value, "f")
    if isinstance(value, date):
        return value.isoformat()
    raise TypeError(f"cannot serialise {type(value).__name__}")


def dump_document(document: Mapping[str, Any]) -> str:
    """``instances.json`` text: indented, one instance row per line (diffs stay readable), Decimals as strings."""
    head = {k: v for k, v in document.items() if k != "instances"}
    text = json.dumps(head, indent=2, ensure_ascii=False, default=_format_value)
    rows = ",\n".join(
        "    " + json.dumps(row, ensure_ascii=False, default=_format_value) for row in document.get("instances", [])
    )
    return text[: text.rfind("}")].rstrip() + ',\n  "instances": [\n' + rows + "\n  ]\n}\n"


# --- regions ---------------------------------------------------------------------------------------------------


class Region(_FrozenFacts):
    """One AWS region: its Price List ``location``, Cost Explorer usage-type prefix and price multiplier."""

    code: str
    location: str = Field(description="The Price List API 'location' attribute.")
    usage_type_prefix: str = Field(pattern=r"^[A-Z]{2,4}\d?$", description="USE1, APN1, ...; EU for eu-west-1.")
    multiplier: Decimal | None = Field(
        None, gt=0, description="Approximate on-demand price vs us-east-1 for accelerated types; None: unknown."
    )
    platform_multipliers: dict[Platform, Decimal] = Field(default_factory=dict)
    source: str | None = None
    note: str | None = None
    prefix_source: str | None = Field(None, description="Where the usage-type prefix was read (a sources code).")

    def multiplier_for(self, platform: Platform) -> Decimal | None:
        return self.platform_multipliers.get(platform, self.multiplier)


class _RegionsDocument(_FrozenFacts):
    schema_version: Literal[1]
    description: str
    as_of: date
    base_region: str
    sources: dict[str, Source]
    regions: dict[str, Region]

    @model_validator(mode="before")
    @classmethod
    def _codes(cls, data: Any) -> Any:
        if isinstance(data, dict) and isinstance(data.get("regions"), dict):
            data = {**data, "regions": {k: {"code": k, **v} for k, v in data["regions"].items()}}
        return data

    @model_validator(mode="after")
    def _valid(self) -> Self:
        prefixes = [r.usage_type_prefix for r in self.regions.values()]
        if len(prefixes) != len(set(prefixes)):
            raise ValueError("usage_type_prefix values must be unique")
        base = self.regions.get(self.base_region)
        if base is None or base.multiplier != 1:
            raise ValueError("the base region must be listed with multiplier 1")
        cited = {r.source for r in self.regions.values() if r.source}
        cited |= {r.prefix_source for r in self.regions.values() if r.prefix_source}
        missing = sorted(cited - set(self.sources))
        if missing:
            raise ValueError(f"source codes without a sources entry: {', '.join(missing)}")
        return self


class Regions:
    """Regions by code and by Cost Explorer usage-type prefix (``USE1`` -> ``us-east-1``)."""

    def __init__(self, document: _RegionsDocument) -> None:
        self.as_of: date = document.as_of
        self.base_region: str = document.base_region
        self.sources: dict[str, Source] = dict(document.sources)
        self._by_code: dict[str, Region] = dict(document.regions)
        self._by_prefix: dict[str, Region] = {r.usage_type_prefix: r for r in document.regions.values()}

    def get(self, code: str) -> Region | None:
        return self._by_code.get(code.strip().lower())

    def by_prefix(self, prefix: str) -> Region | None:
        return self._by_prefix.get(prefix.strip().upper())

    def all(self) -> list[Region]:
        return list(self._by_code.values())

    def multiplier(self, region: str, platform: Platform) -> Decimal | None:
        info = self.get(region)
        return info.multiplier_for(platform) if info else None


@lru_cache(maxsize=1)
def get_regions() -> Regions:
    """The shipped ``regions.json`` (read once)."""
    try:
        return Regions(_RegionsDocument.model_validate(load_data_file("regions.json")))
    except ValidationError as exc:
        raise ConfigError(f"catalog data file regions.json is invalid: {exc}") from exc


# --- the catalog -----------------------------------------------------------------------------------------------


class InstanceType(_FrozenFacts):
    """One EC2 type or its SageMaker ``ml.`` twin, with its accelerators and on-demand price in the base region."""

    name: str = Field(description="inf2.xlarge, or ml.inf2.xlarge for the SageMaker type.")
    family: str = Field(description="inf2 (without ml.).")
    platform: Platform
    sagemaker: bool
    accelerator: str | None = Field(description="Inferentia, Inferentia2, Trainium, Trainium2, A100, H100, ...")
    accelerator_count: int = Field(description="Accelerator chips (Neuron devices or GPUs).")
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
    def price_is_estimate(self) -> bool:
        """The price is not verified (one public source or derived)."""
        return self.price_confidence not in ("verified", "corroborated")

    @property
    def neuron(self) -> bool:
        return self.platform in _NEURON_PLATFORMS


def _ec2_type(row: InstanceRow, sources: Mapping[str, Source]) -> InstanceType:
    neuron = row.platform in _NEURON_PLATFORMS
    return InstanceType(
        name=row.name,
        family=family_of(row.name),
        platform=row.platform,
        sagemaker=False,
        accelerator=row.accelerator,
        accelerator_count=row.accelerator_count,
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


def load_catalog_document(path: Path | None) -> InstancesDocument:
    """The shipped ``instances.json``, or the file at ``path`` (a refreshed catalog)."""
    where = str(path) if path else "chipwise/catalog/data/instances.json"
    try:
        if path is None:
            raw = load_data_file("instances.json")
        else:
            raw = json.loads(path.read_text(encoding="utf-8"), parse_float=Decimal)
        return InstancesDocument.model_validate(raw)
    except OSError as exc:
        raise ConfigError(f"cannot read the catalog file {where}: {exc.strerror or exc}") from exc
    except json.JSONDecodeError as exc:
        raise ConfigError(f"the catalog file {where} is not JSON: {exc}") from exc
    except ValidationError as exc:
        raise ConfigError(f"the catalog file {where} is invalid: {exc}") from exc


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


# --- instance facts from EC2 itself (DescribeInstanceTypes) -------------------------------------------------------

# GPU manufacturers as DescribeInstanceTypes names them (GpuInfo.Gpus[].Manufacturer).
_GPU_MAKERS: dict[str, Platform] = {"nvidia": "nvidia", "amd": "amd", "habana": "gaudi", "intel habana": "gaudi"}
MIB_PER_GIB = Decimal(1024)


def _accelerator_names(info: Mapping[str, Any]) -> list[tuple[str, str, int, Decimal]]:
    """(kind, manufacturer+name, count, memory GiB per device) of every accelerator EC2 lists for the type."""
    found: list[tuple[str, str, int, Decimal]] = []
    for device in (info.get("NeuronInfo") or {}).get("NeuronDevices") or []:
        memory = Decimal((device.get("MemoryInfo") or {}).get("SizeInMiB") or 0) / MIB_PER_GIB
        found.append(("neuron", str(device.get("Name") or ""), int(device.get("Count") or 0), memory))
    for gpu in (info.get("GpuInfo") or {}).get("Gpus") or []:
        memory = Decimal((gpu.get("MemoryInfo") or {}).get("SizeInMiB") or 0) / MIB_PER_GIB
        label = f"{gpu.get('Manufacturer') or ''}|{gpu.get('Name') or ''}"
        found.append(("gpu", label, int(gpu.get("Count") or 0), memory))
    for accelerator in (info.get("InferenceAcceleratorInfo") or {}).get("Accelerators") or []:
        memory = Decimal((accelerator.get("MemoryInfo") or {}).get("SizeInMiB") or 0) / MIB_PER_GIB
        label = f"{accelerator.get('Manufacturer') or ''}|{accelerator.get('Name') or ''}"
        found.append(("inference", label, int(accelerator.get("Count") or 0), memory))
    return found


def platform_from_ec2(info: Mapping[str, Any]) -> Platform:
    """The platform of an instance type from one ``InstanceTypes[]`` entry of DescribeInstanceTypes: Neuron devices
    named Inferentia/Trainium; GPUs by manufacturer (NVIDIA, AMD, Habana -> gaudi); other accelerators (Qualcomm
    AI100 on dl2q, ...) -> ``other``; none -> ``cpu``. Never from the type's name."""
    accelerators = _accelerator_names(info)
    for kind, label, _, _ in accelerators:
        lowered = label.lower()
        if kind == "neuron" or "inferentia" in lowered or "trainium" in lowered:
            if "trainium" in lowered:
                return "trainium"
            if "inferentia" in lowered:
                return "inferentia"
    for kind, label, _, _ in accelerators:
        if kind == "gpu":
            maker, _, name = label.lower().partition("|")
            if "gaudi" in name:
                return "gaudi"
            return _GPU_MAKERS.get(maker.strip(), "other")
    return "other" if accelerators else "cpu"


def facts_from_ec2(info: Mapping[str, Any]) -> dict[str, Any]:
    """Catalog-shaped facts (``accelerator``, counts, memory) of a type from DescribeInstanceTypes, with no price:
    the price of a type the shipped catalog lacks is unknown until a quote or a catalog refresh."""
    platform = platform_from_ec2(info)
    accelerators = _accelerator_names(info)
    neuron = [a for a in accelerators if a[0] == "neuron"]
    chosen = neuron or [a for a in accelerators if a[0] == "gpu"] or accelerators
    count = sum(a[2] for a in chosen)
    memory = sum((a[3] * a[2] for a in chosen), Decimal(0))
    cores = sum(
        int((d.get("CoreInfo") or {}).get("Count") or 0) * int(d.get("Count") or 0)
        for d in (info.get("NeuronInfo") or {}).get("NeuronDevices") or []
    )
    name = chosen[0][1].split("|")[-1] if chosen else None
    return {
        "platform": platform,
        "accelerator": name or None,
        "accelerator_count": count,
        "neuron_cores": cores,
        "neuron_devices": sum(a[2] for a in neuron),
        "accelerator_memory_gib": str(memory.normalize()) if memory else "0",
        "vcpu": (info.get("VCpuInfo") or {}).get("DefaultVCpus"),
        "memory_gib": str((Decimal((info.get("MemoryInfo") or {}).get("SizeInMiB") or 0) / MIB_PER_GIB).normalize()),
        "price_usd_per_hour": None,
        "price_source": None,
        "price_note": "not in the shipped catalog: no public price on file, quote needed",
        "facts_source": "ec2:DescribeInstanceTypes",
    }
