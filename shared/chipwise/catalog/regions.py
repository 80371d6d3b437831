"""AWS regions as the catalog knows them (``data/regions.json``): each region's Price List ``location``, its Cost
Explorer usage-type prefix (``USE1``, ``EU``, ...) and its approximate on-demand price multiplier for accelerated
types, with the sources behind them."""

from datetime import date
from decimal import Decimal
from functools import lru_cache
from typing import Annotated, Self

from pydantic import Field, model_validator

from chipwise.catalog.loading import FrozenData, Source, SourcedDocument, check_sources, keyed_by, load_document
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


class _RegionsDocument(SourcedDocument):
    base_region: str
    regions: Annotated[dict[str, Region], keyed_by("code")]

    @model_validator(mode="after")
    def _valid(self) -> Self:
        prefixes = [r.usage_type_prefix for r in self.regions.values()]
        if len(prefixes) != len(set(prefixes)):
            raise ValueError("usage_type_prefix values must be unique")
        base = self.regions.get(self.base_region)
        if base is None or base.multiplier != 1:
            raise ValueError("the base region must be listed with multiplier 1")
        cited = {r.source for r in self.regions.values() if r.source}
        check_sources(cited | {r.prefix_source for r in self.regions.values() if r.prefix_source}, self.sources)
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
    return Regions(load_document(_RegionsDocument, "regions.json"))
