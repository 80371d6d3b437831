"""Issue 34, item 6: the catalog knows every accelerated instance type AWS sells today, as the installed botocore's
service models list them: EC2's ``InstanceType`` enum and every SageMaker ``*InstanceType`` enum
(ProductionVariantInstanceType, TrainingInstanceType, AppInstanceType, the notebook ``InstanceType``, ...).

"Knows" means: a catalog row (hardware facts; a price, or "unknown" with the reason), or an entry of the data file's
``types_without_facts`` (why there are no facts) whose family's platform the catalog knows. Either way the type's
bill hours are attributed to an accelerator platform."""

from __future__ import annotations

import re
from functools import cache

import botocore.session
import pytest

from chipwise.catalog import get_catalog, platform_of
from chipwise.catalog.instance_data import load_catalog_document, strip_ml

# Accelerated families by prefix, written out: a family is accelerated when its name is one of these prefixes
# followed by a generation digit (p5, g6e, gr6f, inf2, trn2u, dl2q, cg1). Graviton and other CPU families that
# merely end in "g" (c7g, m8g, r8gd) never start with one of them.
ACCELERATED_PREFIXES = ("p", "g", "gr", "inf", "trn", "dl", "cg")
_ACCELERATED = re.compile(rf"^(?:{'|'.join(ACCELERATED_PREFIXES)})\d")
# Accelerated-computing families that are not AI accelerators (FPGAs, video transcoding): platform "other".
NOT_AI_ACCELERATORS = frozenset({"f1", "f2", "vt1"})


def _family(name: str) -> str:
    return strip_ml(name).split(".", 1)[0]


def accelerated(name: str) -> bool:
    return bool(_ACCELERATED.match(_family(name)))


@cache
def ec2_types() -> tuple[str, ...]:
    model = botocore.session.get_session().get_service_model("ec2")
    return tuple(model.shape_for("InstanceType").enum)


@cache
def sagemaker_types() -> tuple[str, ...]:
    model = botocore.session.get_session().get_service_model("sagemaker")
    found: set[str] = set()
    for name in model.shape_names:
        shape = model.shape_for(name)
        if name.endswith("InstanceType") and getattr(shape, "enum", None):
            found.update(v for v in shape.enum if v.startswith("ml."))
    return tuple(sorted(found))


def test_the_prefix_set_separates_accelerators_from_graviton_and_cpu_families() -> None:
    for name in ("p6-b300.48xlarge", "g7e.2xlarge", "gr6f.4xlarge", "inf2.xlarge", "trn2u.48xlarge", "dl2q.24xlarge"):
        assert accelerated(name), name
    for name in ("c7g.large", "m8g.xlarge", "r8gd.large", "g", "i4g.large", "x2gd.large", "mac2-m2.metal"):
        assert not accelerated(name), name
    # and the enum holds both kinds (the test below is not vacuous)
    assert any(accelerated(t) for t in ec2_types()) and any(not accelerated(t) for t in ec2_types())
    shapes = set(botocore.session.get_session().get_service_model("sagemaker").shape_names)
    assert {"ProductionVariantInstanceType", "TrainingInstanceType", "AppInstanceType", "InstanceType"} <= shapes


def _unknown(names: tuple[str, ...]) -> list[str]:
    catalog = get_catalog()
    without = load_catalog_document(None).types_without_facts
    missing = []
    for name in names:
        if not accelerated(name):
            continue
        known = catalog.get(name) is not None or strip_ml(name) in without
        if not known or platform_of(name) in (None, "cpu"):
            missing.append(name)
    return missing


@pytest.mark.parametrize("source", ["ec2", "sagemaker"])
def test_every_accelerated_type_in_botocore_is_known_to_the_catalog(source: str) -> None:
    names = ec2_types() if source == "ec2" else sagemaker_types()
    assert _unknown(names) == [], "add these types to catalog/data/instances.json (row or types_without_facts)"


def test_the_check_fails_on_an_accelerated_type_the_catalog_does_not_know() -> None:
    assert _unknown(("g9x.48xlarge", "ml.trn9.48xlarge", "c9g.large")) == ["g9x.48xlarge", "ml.trn9.48xlarge"]


def test_non_ai_accelerated_families_have_a_platform_but_are_not_accelerators() -> None:
    for name in ec2_types():
        if _family(name) in NOT_AI_ACCELERATORS:
            assert platform_of(name) == "other", name


def test_new_families_carry_facts_and_a_price_or_why_not() -> None:
    catalog = get_catalog()
    g7e = catalog.require("g7e.2xlarge")
    assert (g7e.accelerator, g7e.accelerator_count, g7e.accelerator_memory_gib) == (
        "RTX PRO 6000 Blackwell Server",
        1,
        96,
    )
    assert g7e.price_usd_per_hour is not None and g7e.price_confidence == "verified"
    b300 = catalog.require("p6-b300.48xlarge")
    assert (b300.accelerator, b300.accelerator_count, b300.vcpu) == ("B300", 8, 192)
    # a fractional GPU: no whole GPU, its share of one
    g6f = catalog.require("g6f.large")
    assert g6f.accelerator_count == 0 and g6f.accelerator_units == pytest.approx(0.125)
    # no on-demand price on file: unknown with the reason, never a figure
    trn2u = catalog.require("trn2u.48xlarge")
    assert trn2u.price_usd_per_hour is None and trn2u.price_confidence == "none" and trn2u.price_note
    assert catalog.price("trn2u.48xlarge") is None
    # a SageMaker twin without a public SageMaker price says so
    ml = catalog.require("ml.g7e.2xlarge")
    assert ml.price_usd_per_hour is None and "no public SageMaker price" in (ml.price_note or "")


@pytest.mark.parametrize("name", ["g7.2xlarge", "g7e.48xlarge", "p6-b300.48xlarge", "gr6f.4xlarge", "ml.g7e.2xlarge"])
def test_the_families_issue_34_names_are_nvidia_so_their_bill_hours_count_as_accelerator_hours(name: str) -> None:
    # the bill's commitment coverage counts a line's hours when its type's platform is an accelerator's
    from chipwise.collect.bill_export.assembly import _accelerator

    assert platform_of(name) == "nvidia" and _accelerator(name)
