"""The instance catalog's data file, ``data/instances.json``: its rows (one EC2 type each; the SageMaker ``ml.``
twin is derived), the document around them, how it is read and how it is written back (one row per line).

Every figure names a source code whose citation and as-of date are in the file; a row without a price says why
(``note``). Hardware facts come from the document's spec sources unless the row names its own ``facts_source``.
"""

import json
import re
from collections.abc import Mapping
from datetime import date
from decimal import Decimal
from pathlib import Path
from typing import Any, Literal, Self

from pydantic import Field, ValidationError, field_validator, model_validator

from chipwise.catalog.loading import FrozenData, PriceConfidence, Source, load_data_file
from chipwise.economics import round_money
from chipwise.errors import ConfigError
from chipwise.models.common import Platform

__all__ = [
    "SAGEMAKER_PREFIX",
    "InstanceRow",
    "InstancesDocument",
    "PremiumFactor",
    "dump_document",
    "family_of",
    "load_catalog_document",
    "quantize_price",
    "strip_ml",
]

SAGEMAKER_PREFIX = "ml."
PRICE_PLACES = Decimal("0.000001")
_NAME = re.compile(r"^[a-z0-9][a-z0-9-]*\.[a-z0-9][a-z0-9-]*$")
NEURON_PLATFORMS: frozenset[str] = frozenset({"inferentia", "trainium"})


def quantize_price(value: Decimal) -> Decimal:
    """Hourly prices are kept to 6 decimal places (the AWS price list carries up to 10, SKY up to 6)."""
    return round_money(value, 6)


def strip_ml(name: str) -> str:
    return name[len(SAGEMAKER_PREFIX) :] if name.startswith(SAGEMAKER_PREFIX) else name


def family_of(name: str) -> str:
    """``inf2`` from ``inf2.xlarge`` or ``ml.inf2.xlarge``."""
    return strip_ml(name.strip().lower()).split(".", 1)[0]


# --- the data file --------------------------------------------------------------------------------------------


class PremiumFactor(FrozenData):
    """SageMaker price = EC2 price x factor, for ``ml.*`` types of the family without an explicit figure."""

    factor: Decimal = Field(gt=0)
    source: str
    confidence: Literal["derived"] = "derived"
    basis: str = Field(min_length=10, description="Which verified pair the factor was measured on.")


class InstanceRow(FrozenData):
    """One EC2 type as stored in ``instances.json`` (the SageMaker ``ml.`` twin is derived from it)."""

    name: str
    platform: Platform
    accelerator: str | None
    accelerator_count: int = Field(ge=0)
    accelerator_fraction: Decimal | None = Field(
        None, gt=0, lt=1, description="A fractional-GPU type's share of one GPU (g6f, gr6f: count 0)."
    )
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
    facts_source: str | None = Field(
        None, description="Where this row's hardware facts come from (a sources code), when not the spec sources."
    )

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
        neuron = self.platform in NEURON_PLATFORMS
        if neuron and (self.neuron_cores < 1 or self.accelerator_count < 1):
            raise ValueError(f"{self.name}: a Neuron type needs devices and NeuronCores")
        if not neuron and (self.neuron_cores or self.default_lnc != 1):
            raise ValueError(f"{self.name}: only Neuron types have NeuronCores")
        if self.platform == "cpu" and (
            self.accelerator or self.accelerator_count or self.accelerator_memory_gib or self.fractional
        ):
            raise ValueError(f"{self.name}: a CPU type has no accelerator")
        if self.platform != "cpu" and (not self.accelerator or (self.accelerator_count < 1) == (not self.fractional)):
            raise ValueError(f"{self.name}: an accelerated type names its accelerator and count (or its GPU fraction)")
        if self.neuron_cores % self.default_lnc:
            raise ValueError(f"{self.name}: neuron_cores must divide by default_lnc")

    @property
    def fractional(self) -> bool:
        return self.accelerator_fraction is not None


class InstancesDocument(FrozenData):
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
    types_without_facts: dict[str, str] = Field(
        default_factory=dict,
        description="EC2 types known (their family's platform is) but without a row: why no hardware facts or price.",
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
            used.update(s for s in (row.price_source, row.sagemaker_price_source, row.facts_source) if s)
        missing = sorted(used - set(self.sources))
        if missing:
            raise ValueError(f"source codes without a sources entry: {', '.join(missing)}")
        families = {family_of(n) for n in names}
        self._check_types_without_facts(set(names), families)
        unknown = sorted(set(self.sagemaker_premium) - families)
        if unknown:
            raise ValueError(f"sagemaker_premium for unknown families: {', '.join(unknown)}")
        return self

    def _check_types_without_facts(self, names: set[str], families: set[str]) -> None:
        """A type without a row has a reason, no row, and a family whose platform the catalog knows."""
        for name, reason in self.types_without_facts.items():
            if not _NAME.match(name) or name in names:
                raise ValueError(f"types_without_facts: {name!r} is not an EC2 type name without a catalog row")
            if len(reason.strip()) < 20:
                raise ValueError(f"types_without_facts: {name} needs a reason (why no facts or price)")
            if family_of(name) not in families and family_of(name) not in self.extra_families:
                raise ValueError(f"types_without_facts: the platform of {name}'s family is unknown (extra_families)")


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
