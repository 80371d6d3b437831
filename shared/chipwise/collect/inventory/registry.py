"""The inventory source registry: one module per resource kind in :mod:`chipwise.collect.inventory.sources`, each
registering its collector with a decorator (as the rules register in :mod:`chipwise.rules.registry`).

A source declares its name (the scan's error source, ``inventory.<name>``), the kinds it yields (a source that
completes marks the stored resources of those kinds it did not find gone), the listing calls (their failure fails
the source) and the per-resource detail calls (their failure is that resource's problem: it is kept, never gone).
Adding a kind means adding one module; nothing central is edited.
"""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime

from chipwise.aws import AwsContext
from chipwise.models.records import Inventory

# (the AWS context, the account scanned, the start of the look-back window) -> what the source found
Collector = Callable[[AwsContext, str, datetime], Inventory]
SOURCE_PREFIX = "inventory."


class InventoryRegistryError(Exception):
    """A source module breaks the registry's contract (a programming error, caught by the registry tests)."""


@dataclass(frozen=True)
class InventorySource:
    name: str  # the scan's error source: "inventory.ec2"
    kinds: tuple[str, ...]
    collect: Collector
    listing_calls: tuple[str, ...]  # "service.Operation": a failure fails the source (nothing is marked gone)
    detail_calls: tuple[str, ...]  # per listed resource: a failure is its problem, the resource is kept


class InventoryRegistry:
    def __init__(self) -> None:
        self._sources: dict[str, InventorySource] = {}

    def add(self, source: InventorySource) -> None:
        if not source.name.startswith(SOURCE_PREFIX):
            raise InventoryRegistryError(f"source {source.name!r}: its name must start with {SOURCE_PREFIX!r}")
        known = self._sources.get(source.name)
        if known is not None and known.collect is not source.collect:
            raise InventoryRegistryError(f"source {source.name!r} is registered twice")
        taken = {kind: s.name for s in self._sources.values() if s.name != source.name for kind in s.kinds}
        shared = sorted(k for k in source.kinds if k in taken)
        if shared:
            raise InventoryRegistryError(f"source {source.name!r}: kinds {shared} already belong to {taken[shared[0]]}")
        if not source.listing_calls:
            raise InventoryRegistryError(f"source {source.name!r} names no listing call")
        self._sources[source.name] = source

    def names(self) -> list[str]:
        return sorted(self._sources)

    def all(self) -> list[InventorySource]:
        """Every source, by name (the order the scan runs them in)."""
        return [self._sources[name] for name in self.names()]


REGISTRY = InventoryRegistry()


def register(
    *, name: str, kinds: tuple[str, ...], listing_calls: tuple[str, ...], detail_calls: tuple[str, ...] = ()
) -> Callable[[Collector], Collector]:
    """Register the decorated collector as the inventory source ``name``."""

    def decorate(collect: Collector) -> Collector:
        REGISTRY.add(InventorySource(name, kinds, collect, listing_calls, detail_calls))
        return collect

    return decorate


def inventory_sources() -> list[InventorySource]:
    """Every inventory source of :mod:`chipwise.collect.inventory.sources`, each module loaded once, by name."""
    package = importlib.import_module("chipwise.collect.inventory.sources")
    for module in pkgutil.iter_modules(package.__path__):
        importlib.import_module(f"{package.__name__}.{module.name}")
    return REGISTRY.all()
