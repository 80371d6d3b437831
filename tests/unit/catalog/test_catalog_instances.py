"""The instance catalog: the data file validates, covers every family, and matches the reference figures."""

from __future__ import annotations

import json
from collections.abc import Iterator
from decimal import Decimal
from importlib import resources
from pathlib import Path

import pytest

from chipwise.catalog import (
    CATALOG_FILE_ENV,
    Catalog,
    UnknownInstanceType,
    get_catalog,
    get_regions,
    platform_of,
)
from chipwise.catalog.instances import InstancesDocument, load_data_file
from chipwise.errors import ConfigError, NotFound

ACCELERATOR_FAMILIES = {
    "inf1": ["xlarge", "2xlarge", "6xlarge", "24xlarge"],
    "inf2": ["xlarge", "8xlarge", "24xlarge", "48xlarge"],
    "trn1": ["2xlarge", "32xlarge"],
    "trn1n": ["32xlarge"],
    "trn2": ["48xlarge"],
    "p4d": ["24xlarge"],
    "p4de": ["24xlarge"],
    "p5": ["4xlarge", "48xlarge"],
    "p5e": ["48xlarge"],
    "p5en": ["48xlarge"],
    "g5": ["xlarge", "2xlarge", "4xlarge", "8xlarge", "12xlarge", "16xlarge", "24xlarge", "48xlarge"],
    "g6": ["xlarge", "2xlarge", "4xlarge", "8xlarge", "12xlarge", "16xlarge", "24xlarge", "48xlarge"],
    "g6e": ["xlarge", "2xlarge", "4xlarge", "8xlarge", "12xlarge", "16xlarge", "24xlarge", "48xlarge"],
}
ALL_TYPES = [f"{family}.{size}" for family, sizes in ACCELERATOR_FAMILIES.items() for size in sizes]


@pytest.fixture
def catalog() -> Catalog:
    return get_catalog()


@pytest.fixture
def _fresh_catalog_cache() -> Iterator[None]:
    get_catalog.cache_clear()  # type: ignore[attr-defined]
    yield
    get_catalog.cache_clear()  # type: ignore[attr-defined]


def test_data_files_validate_and_hold_no_floats() -> None:
    # Given every shipped data file
    data = resources.files("chipwise.catalog").joinpath("data")
    names = sorted(p.name for p in data.iterdir() if p.name.endswith(".json"))
    assert names == ["credit_programs.json", "economics.json", "instances.json", "model_families.json", "regions.json"]
    for name in names:
        # Then it parses without a single JSON float (money and ratios are decimal strings)
        floats: list[str] = []
        json.loads(data.joinpath(name).read_text(), parse_float=floats.append)
        assert floats == [], name
    InstancesDocument.model_validate(load_data_file("instances.json"))


@pytest.mark.parametrize("name", ALL_TYPES)
def test_every_family_has_ec2_and_sagemaker_variants(catalog: Catalog, name: str) -> None:
    ec2, ml = catalog.require(name), catalog.require(f"ml.{name}")
    assert (ec2.sagemaker, ml.sagemaker) == (False, True)
    assert ml.ec2_name == ec2.name == name
    assert ml.family == ec2.family == name.split(".")[0]
    assert ml.accelerator == ec2.accelerator and ml.accelerator_count == ec2.accelerator_count


def test_cpu_context_types(catalog: Catalog) -> None:
    for name in ("m5.xlarge", "m6i.2xlarge", "c5.4xlarge", "c6i.xlarge", "r5.xlarge", "t3.medium", "ml.m5.xlarge"):
        item = catalog.require(name)
        assert item.platform == "cpu" and item.accelerator is None and item.accelerator_count == 0
        assert item.price_usd_per_hour is not None


@pytest.mark.parametrize(
    ("name", "price", "source", "devices", "cores", "accel_gib"),
    [
        ("inf2.48xlarge", "12.98127", "SKY", 12, 24, "384"),
        ("inf2.xlarge", "0.7582", "MEM", 1, 2, "32"),
        ("inf1.xlarge", "0.228", "NSDK", 1, 4, "8"),
        ("trn1.32xlarge", "21.50", "SKY", 16, 32, "512"),
        ("trn1.2xlarge", "1.34375", "SKY", 1, 2, "32"),
        ("p4d.24xlarge", "21.957642", "SKY", 0, 0, "320"),
        ("p5.48xlarge", "55.04", "SKY", 0, 0, "640"),
        ("g5.xlarge", "1.006", "MEM", 0, 0, "24"),
        ("g6e.48xlarge", "30.13118", "SKY", 0, 0, "384"),
    ],
)
def test_spot_checks_against_the_reference(
    catalog: Catalog, name: str, price: str, source: str, devices: int, cores: int, accel_gib: str
) -> None:
    item = catalog.require(name)
    assert item.price_usd_per_hour == Decimal(price)
    assert item.price_source == source
    assert item.price_is_estimate is (source == "MEM")
    assert (item.neuron_devices, item.neuron_cores) == (devices, cores)
    assert item.accelerator_memory_gib == Decimal(accel_gib)
    assert catalog.price(name) == Decimal(price).quantize(Decimal("0.000001"))


def test_inf2_48xlarge_specs(catalog: Catalog) -> None:
    item = catalog.require("inf2.48xlarge")
    assert (item.accelerator, item.vcpu, item.memory_gib) == ("Inferentia2", 192, Decimal(768))
    assert item.platform == "inferentia"


def test_trn2_has_no_on_demand_price_and_says_why(catalog: Catalog) -> None:
    for name in ("trn2.48xlarge", "p5e.48xlarge"):
        item = catalog.require(name)
        assert item.price_usd_per_hour is None and item.price_source is None
        assert item.price_note and "Capacity Blocks" in item.price_note
        assert catalog.price(name) is None
        assert catalog.require(f"ml.{name}").price_usd_per_hour is None
    trn2 = catalog.require("trn2.48xlarge")
    assert (trn2.neuron_cores, trn2.logical_neuron_cores, trn2.neuron_devices) == (128, 64, 16)


def test_every_price_names_a_known_source(catalog: Catalog) -> None:
    for item in catalog.all():
        if item.price_usd_per_hour is not None:
            assert item.price_source in catalog.sources, item.name
            assert item.price_usd_per_hour > 0


def test_sagemaker_prices_explicit_or_premium(catalog: Catalog) -> None:
    # Explicit figures win
    assert catalog.require("ml.g6e.2xlarge").price_usd_per_hour == Decimal("2.8026")
    assert catalog.require("ml.inf2.xlarge").price_usd_per_hour == Decimal("0.99")
    # Otherwise EC2 x the family's premium factor, flagged as an estimate
    derived = catalog.require("ml.trn1.32xlarge")
    factor = catalog.document.sagemaker_premium["default"].factor
    assert derived.price_usd_per_hour == Decimal("21.50") * factor
    assert derived.price_is_estimate and derived.price_source == "SM-PREMIUM"
    assert catalog.require("ml.g6.xlarge").price_usd_per_hour == Decimal("0.8048") * Decimal("1.25")
    for item in catalog.all():
        if item.sagemaker and item.price_usd_per_hour is not None:
            ec2 = catalog.require(item.ec2_name).price_usd_per_hour
            assert ec2 is not None and item.price_usd_per_hour >= ec2, item.name


def test_get_is_case_and_prefix_tolerant(catalog: Catalog) -> None:
    assert catalog.get(" INF2.XLarge ") is catalog.get("inf2.xlarge")
    assert catalog.get("ml.inf2.xlarge") is not None
    assert catalog.get("inf9.xlarge") is None
    with pytest.raises(UnknownInstanceType) as excinfo:
        catalog.require("inf9.xlarge")
    assert isinstance(excinfo.value, NotFound)


def test_family_sorted_by_price_with_unpriced_last(catalog: Catalog) -> None:
    g5 = catalog.family("g5")
    prices = [t.price_usd_per_hour for t in g5]
    assert [p for p in prices if p is not None] == sorted(p for p in prices if p is not None)
    assert all(not t.sagemaker for t in g5)
    assert catalog.family("inf2", sagemaker=True)[0].name == "ml.inf2.xlarge"
    assert catalog.family("trn1") == catalog.family("ml.trn1")
    trn = catalog.by_platform("trainium")
    assert trn[-1].name == "trn2.48xlarge"  # no price: last
    assert {t.family for t in trn} == {"trn1", "trn1n", "trn2"}


def test_regional_prices_use_the_multipliers(catalog: Catalog) -> None:
    # aws.md cross-check: inf2.xlarge in eu-north-1 is 1.1 x us-east-1 = 0.83402
    assert catalog.price("inf2.xlarge", "eu-north-1") == Decimal("0.834020")
    assert catalog.price("inf2.24xlarge", "eu-west-1") == Decimal("8.113288")  # SKY: 8.11329
    assert catalog.price("m5.xlarge", "eu-west-1") == Decimal("0.211200")  # CPU multiplier 1.10
    assert catalog.price("inf2.xlarge", "us-east-2") == Decimal("0.758200")
    assert catalog.price("inf2.xlarge", "sa-east-1") is None  # no multiplier known
    assert catalog.price("inf2.xlarge", "xx-nowhere-1") is None
    assert catalog.price("inf9.xlarge") is None


def test_regions_cover_the_documented_set() -> None:
    regions = get_regions()
    expected = {
        "us-east-1": "USE1",
        "us-east-2": "USE2",
        "us-west-2": "USW2",
        "eu-west-1": "EUW1",
        "eu-central-1": "EUC1",
        "eu-north-1": "EUN1",
        "ap-northeast-1": "APN1",
        "ap-southeast-2": "APS2",
        "ap-south-1": "APS3",
    }
    for code, prefix in expected.items():
        info = regions.get(code)
        assert info is not None and info.usage_type_prefix == prefix and info.multiplier is not None
        assert regions.by_prefix(prefix) == info
    assert regions.get("eu-north-1").multiplier == Decimal("1.10")  # type: ignore[union-attr]


@pytest.mark.parametrize(
    ("name", "platform"),
    [
        ("inf2.xlarge", "inferentia"),
        ("ml.inf1.2xlarge", "inferentia"),
        ("trn1n.32xlarge", "trainium"),
        ("ml.p5.48xlarge", "nvidia"),
        ("g6e.xlarge", "nvidia"),
        ("g4dn.xlarge", "nvidia"),  # family known, size not in the catalog
        ("m5.xlarge", "cpu"),
        ("m7i.large", "cpu"),
        ("zz9.large", None),
        ("nonsense", None),
    ],
)
def test_platform_of(name: str, platform: str | None) -> None:
    assert platform_of(name) == platform


def test_catalog_file_from_argument_and_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, _fresh_catalog_cache: None
) -> None:
    # Given a user catalog file with one price changed
    raw = json.loads(resources.files("chipwise.catalog").joinpath("data/instances.json").read_text())
    for row in raw["instances"]:
        if row["name"] == "inf2.xlarge":
            row["price"], row["price_source"] = "0.5", "SKY"
    path = tmp_path / "chipwise-catalog.json"
    path.write_text(json.dumps(raw))
    # Then get_catalog(path) and $CHIPWISE_CATALOG_FILE both use it, and the shipped one stays the default
    assert get_catalog(path).price("inf2.xlarge") == Decimal("0.500000")
    assert get_catalog().price("inf2.xlarge") == Decimal("0.758200")
    monkeypatch.setenv(CATALOG_FILE_ENV, str(path))
    assert get_catalog().price("inf2.xlarge") == Decimal("0.500000")


def test_a_bad_catalog_file_is_a_config_error(tmp_path: Path, _fresh_catalog_cache: None) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text('{"schema_version": 1}')
    with pytest.raises(ConfigError, match="invalid"):
        get_catalog(bad)
    with pytest.raises(ConfigError, match="cannot read"):
        get_catalog(tmp_path / "missing.json")


def test_document_rejects_inconsistent_rows() -> None:
    raw = load_data_file("instances.json")
    raw["instances"][0] = {**raw["instances"][0], "price_source": "NOPE"}
    with pytest.raises(ValueError, match="NOPE"):
        InstancesDocument.model_validate(raw)
    raw = load_data_file("instances.json")
    raw["instances"].append(dict(raw["instances"][0]))
    with pytest.raises(ValueError, match="duplicate"):
        InstancesDocument.model_validate(raw)
