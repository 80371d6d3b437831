"""The inventory source registry's contract: every resource kind the store marks gone has exactly one source, each
source names its calls as botocore's service models spell them, and the registry refuses what would break a scan."""

from __future__ import annotations

from datetime import datetime
from typing import get_args

import botocore.session
import pytest

from chipwise.aws import AwsContext
from chipwise.collect.inventory.registry import (
    InventoryRegistry,
    InventoryRegistryError,
    InventorySource,
    inventory_sources,
)
from chipwise.models.common import ResourceKind
from chipwise.models.records import Inventory
from chipwise.store.repositories.inventory import LIVE_KINDS

SOURCES = inventory_sources()


def _nothing(_aws: AwsContext, _account_id: str, _window_start: datetime) -> Inventory:
    return Inventory()


def test_every_kind_has_exactly_one_source_and_the_scan_runs_them_by_name() -> None:
    kinds = [kind for source in SOURCES for kind in source.kinds]
    assert sorted(kinds) == sorted(set(kinds))
    assert set(LIVE_KINDS) <= set(kinds) <= set(get_args(ResourceKind))
    assert "sagemaker_training_job" in kinds
    assert [s.name for s in SOURCES] == sorted(s.name for s in SOURCES)


@pytest.mark.parametrize("source", SOURCES, ids=lambda s: s.name)
def test_each_source_names_real_operations_and_lives_in_its_own_module(source: InventorySource) -> None:
    core = botocore.session.get_session()
    for call in (*source.listing_calls, *source.detail_calls):
        service, operation = call.split(".")
        assert operation in core.get_service_model(service).operation_names, call
    assert source.collect.__module__.startswith("chipwise.collect.inventory.sources.")
    assert [s.collect.__module__ for s in SOURCES].count(source.collect.__module__) == 1


def test_the_registry_refuses_a_second_source_for_a_name_or_a_kind_and_a_source_without_a_listing() -> None:
    registry = InventoryRegistry()
    registry.add(InventorySource("inventory.a", ("ec2_instance",), _nothing, ("ec2.DescribeInstances",), ()))
    with pytest.raises(InventoryRegistryError, match="registered twice"):
        other = InventorySource("inventory.a", ("batch_compute_environment",), lambda *_: Inventory(), ("x.Y",), ())
        registry.add(other)
    with pytest.raises(InventoryRegistryError, match=r"already belong to inventory\.a"):
        registry.add(InventorySource("inventory.b", ("ec2_instance",), _nothing, ("ec2.DescribeInstances",), ()))
    with pytest.raises(InventoryRegistryError, match="no listing call"):
        registry.add(InventorySource("inventory.c", ("sagemaker_studio_app",), _nothing, (), ()))
    with pytest.raises(InventoryRegistryError, match="must start with"):
        registry.add(InventorySource("ec2", ("sagemaker_studio_app",), _nothing, ("ec2.DescribeInstances",), ()))
    assert registry.names() == ["inventory.a"]
