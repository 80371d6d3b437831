"""AWS regions as the catalog knows them (``data/regions.json``): each region's Price List ``location``, its Cost
Explorer usage-type prefix (``USE1``, ``EU``, ...) and its approximate on-demand price multiplier for accelerated
types, with the sources behind them."""

from datetime import date
from decimal import Decimal
from functools import lru_cache
from typing import Any, Literal, Self

from pydantic import Field, ValidationError, model_validator

from chipwise.catalog.loading import FrozenData, Source, load_data_file
from chipwise.errors import ConfigError
from chipwise.models.common import Platform

__all__ = ["Region", "Regions", "get_regions"]


class Region(FrozenData):
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


class _RegionsDocument(FrozenData):
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
