"""The instance catalog: the data file validates, covers every family, and matches the reference figures."""

from __future__ import annotations

import csv
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
    assert names == [
        "assumptions.json",
        "credit_programs.json",
        "instances.json",
        "model_families.json",
        "neuron_software.json",
        "public_mail_domains.json",
        "regions.json",
        "usage_types.json",
    ]
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


PRICES_CSV = Path(__file__).resolve().parents[2] / "data" / "prices-verified.csv"
HANDBOOK_CSV = Path(__file__).resolve().parents[4] / "shared" / "reference" / "prices-verified.csv"


def _verified_rows() -> list[dict[str, str]]:
    with PRICES_CSV.open(encoding="utf-8") as handle:
        return list(csv.DictReader(handle))


def test_the_test_copy_of_the_verified_prices_is_current() -> None:
    # The copy in tests/data is the team's verified price list (beside the repository when it is checked out there)
    if HANDBOOK_CSV.exists():
        assert PRICES_CSV.read_text(encoding="utf-8") == HANDBOOK_CSV.read_text(encoding="utf-8")
    assert len(_verified_rows()) == 136


def test_every_ec2_price_equals_the_verified_price_list(catalog: Catalog) -> None:
    # Given every EC2 row of the verified list (its us-east-1 on-demand price, or none)
    rows = [r for r in _verified_rows() if not r["instance_type"].startswith("ml.")]
    assert len(rows) == 68
    for row in rows:
        item = catalog.require(row["instance_type"])
        # Then the shipped catalog carries exactly that price, with its confidence and date
        expected = Decimal(row["ondemand_usd_per_hour_us_east_1"]) if row["ondemand_usd_per_hour_us_east_1"] else None
        assert item.price_usd_per_hour == expected, row["instance_type"]
        assert item.price_confidence == row["confidence"], row["instance_type"]
        if expected is not None:
            assert str(item.price_as_of) == row["source_date"], row["instance_type"]
            assert item.price_source == "AWS-PRICE-LIST"
        # and the accelerator memory in GiB (an A10G's 24 GB is 22.35 GiB)
        assert item.accelerator_memory_gib == Decimal(row["accelerator_memory_gib"]), row["instance_type"]


def test_every_listed_sagemaker_price_is_shipped_and_the_rest_derived_or_none(catalog: Catalog) -> None:
    for row in (r for r in _verified_rows() if r["instance_type"].startswith("ml.")):
        item = catalog.require(row["instance_type"])
        if row["ondemand_usd_per_hour_us_east_1"]:
            assert item.price_usd_per_hour == Decimal(row["ondemand_usd_per_hour_us_east_1"]), item.name
            assert item.price_confidence == row["confidence"], item.name
        else:
            assert item.price_confidence in ("derived", "none"), item.name
            assert item.price_note, item.name


@pytest.mark.parametrize(
    ("name", "devices", "cores", "accel_gib"),
    [
        ("inf2.48xlarge", 12, 24, "384"),
        ("inf1.xlarge", 1, 4, "8"),
        ("trn1.32xlarge", 16, 32, "512"),
        ("p5.48xlarge", 0, 0, "640"),
        ("g5.xlarge", 0, 0, "22.35"),
        ("g6e.48xlarge", 0, 0, "357.62"),
    ],
)
def test_hardware_spot_checks(catalog: Catalog, name: str, devices: int, cores: int, accel_gib: str) -> None:
    item = catalog.require(name)
    assert (item.neuron_devices, item.neuron_cores) == (devices, cores)
    assert item.accelerator_memory_gib == Decimal(accel_gib)


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


def test_sagemaker_prices_explicit_derived_or_none(catalog: Catalog) -> None:
    # Explicit figures win: ml.trn1.32xlarge is 1.325 x EC2, not a flat premium
    assert catalog.require("ml.inf2.xlarge").price_usd_per_hour == Decimal("0.99")
    assert catalog.require("ml.trn1.32xlarge").price_usd_per_hour == Decimal("28.497")
    # Otherwise EC2 x the family's largest verified premium (derived, and says how)
    derived = catalog.require("ml.trn1.2xlarge")
    assert derived.price_confidence == "derived" and derived.price_is_estimate
    assert derived.price_usd_per_hour == (Decimal("1.34375") * Decimal("1.3254")).quantize(Decimal("0.000001"))
    assert derived.price_note is not None and "ml.trn1.32xlarge" in derived.price_note
    assert catalog.require("ml.g6.xlarge").price_usd_per_hour == Decimal("0.8048") * Decimal("1.25")
    # and a family without any public SageMaker price has none (never a flat guess)
    assert catalog.require("ml.inf1.xlarge").price_usd_per_hour is None
    assert catalog.require("ml.g6e.2xlarge").price_usd_per_hour is None
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
    assert {t.name for t in trn if t.price_usd_per_hour is None} == {"trn2.48xlarge", "trn2u.48xlarge"}
    assert trn[-1].price_usd_per_hour is None  # no price: last
    assert {t.family for t in trn} == {"trn1", "trn1n", "trn2", "trn2u"}


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
        "eu-west-1": "EU",
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
        ("g4dn.xlarge", "nvidia"),
        ("g4dn.96xlarge", "nvidia"),  # family known, size not in the catalog
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
            row["price"], row["price_source"] = "0.5", "AWS-PRICE-LIST"
    path = tmp_path / "chipwise-catalog.json"
    path.write_text(json.dumps(raw))
    # Then get_catalog(path) and $CHIPWISE_CATALOG_FILE both use it, and the shipped one stays the default
    assert get_catalog(path).price("inf2.xlarge") == Decimal("0.500000")
    assert get_catalog().price("inf2.xlarge") == Decimal("0.758200")
    monkeypatch.setenv(CATALOG_FILE_ENV, str(path))
    assert get_catalog().price("inf2.xlarge") == Decimal("0.500000")


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"price_source": None}, "inf2.xlarge: a price needs its source"),
        ({"price": "0"}, "inf2.xlarge: price 0 is not a positive hourly price"),
        ({"price": "-1.5"}, "inf2.xlarge: price -1.5 is not a positive hourly price"),
        ({"price_as_of": None}, "inf2.xlarge: a price needs its date"),
    ],
)
def test_a_price_row_without_a_source_or_with_a_bad_price_fails_the_load_naming_the_row(
    tmp_path: Path, _fresh_catalog_cache: None, change: dict[str, object], message: str
) -> None:
    raw = json.loads(resources.files("chipwise.catalog").joinpath("data/instances.json").read_text())
    for row in raw["instances"]:
        if row["name"] == "inf2.xlarge":
            row.update(change)
    path = tmp_path / "catalog.json"
    path.write_text(json.dumps(raw))
    with pytest.raises(ConfigError, match=message):
        get_catalog(path)


def test_a_source_with_a_local_path_or_a_recollection_fails_the_load(
    tmp_path: Path, _fresh_catalog_cache: None
) -> None:
    raw = json.loads(resources.files("chipwise.catalog").joinpath("data/instances.json").read_text())
    for citation in ("/work/shared/reference/aws.md section 5", "as recalled from the price list"):
        raw["sources"]["AWS-PRICE-LIST"]["citation"] = citation
        path = tmp_path / "catalog.json"
        path.write_text(json.dumps(raw))
        get_catalog.cache_clear()  # type: ignore[attr-defined]
        with pytest.raises(ConfigError, match=r"not a public source|not from a source"):
            get_catalog(path)


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
