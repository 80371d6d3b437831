"""Facts from outside, each with its source and as-of date: instance types and prices, Neuron model support,
representative economics and credit programs.

Everything is read from the data files in ``chipwise/catalog/data/`` on first use (cached factories, no I/O at
import). Logic elsewhere asks these objects for figures and never carries its own. Each file has its module
(:mod:`~chipwise.catalog.instances`, :mod:`~chipwise.catalog.usage_types`, :mod:`~chipwise.catalog.families`,
:mod:`~chipwise.catalog.assumptions`, :mod:`~chipwise.catalog.software`, :mod:`~chipwise.catalog.mail`,
:mod:`~chipwise.catalog.credits`); this package names everything they offer and imports a module when one of its
names is first asked for, so ``from chipwise.catalog import platform_of`` builds none of the other files' models.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from chipwise.catalog.assumptions import Assumptions, BedrockPrice, Figure, get_assumptions
    from chipwise.catalog.credits import CompanyStage, CreditProgram, CreditProgramId, Eligibility, get_credit_programs
    from chipwise.catalog.families import ModelFamilies, ModelFamily, PortingEffort, SupportLevel, get_model_families
    from chipwise.catalog.instances import (
        CATALOG_FILE_ENV,
        Catalog,
        InstanceType,
        Platform,
        PriceConfidence,
        Source,
        UnknownInstanceType,
        get_catalog,
        platform_of,
    )
    from chipwise.catalog.mail import PublicMailDomains, get_public_mail_domains
    from chipwise.catalog.regions import Region, Regions, get_regions
    from chipwise.catalog.software import NeuronSoftware, SoftwareStatus, get_neuron_software
    from chipwise.catalog.usage_types import (
        ParsedUsageType,
        UsageClass,
        UsageKind,
        UsageKindInfo,
        UsageKinds,
        classify_usage_type,
        get_usage_kinds,
        parse_usage_type,
    )

# Each name's module (under chipwise.catalog).
_MODULE_OF = {
    "Assumptions": "assumptions",
    "BedrockPrice": "assumptions",
    "CATALOG_FILE_ENV": "instances",
    "Catalog": "instances",
    "CompanyStage": "credits",
    "CreditProgram": "credits",
    "CreditProgramId": "credits",
    "Eligibility": "credits",
    "Figure": "assumptions",
    "InstanceType": "instances",
    "ModelFamilies": "families",
    "ModelFamily": "families",
    "NeuronSoftware": "software",
    "ParsedUsageType": "usage_types",
    "Platform": "instances",
    "PortingEffort": "families",
    "PriceConfidence": "loading",
    "PublicMailDomains": "mail",
    "Region": "regions",
    "Regions": "regions",
    "SoftwareStatus": "software",
    "Source": "loading",
    "SupportLevel": "families",
    "UnknownInstanceType": "instances",
    "UsageClass": "usage_types",
    "UsageKind": "usage_types",
    "UsageKindInfo": "usage_types",
    "UsageKinds": "usage_types",
    "classify_usage_type": "usage_types",
    "get_assumptions": "assumptions",
    "get_catalog": "instances",
    "get_credit_programs": "credits",
    "get_model_families": "families",
    "get_neuron_software": "software",
    "get_public_mail_domains": "mail",
    "get_regions": "regions",
    "get_usage_kinds": "usage_types",
    "parse_usage_type": "usage_types",
    "platform_of": "instances",
}

__all__ = [
    "CATALOG_FILE_ENV",
    "Assumptions",
    "BedrockPrice",
    "Catalog",
    "CompanyStage",
    "CreditProgram",
    "CreditProgramId",
    "Eligibility",
    "Figure",
    "InstanceType",
    "ModelFamilies",
    "ModelFamily",
    "NeuronSoftware",
    "ParsedUsageType",
    "Platform",
    "PortingEffort",
    "PriceConfidence",
    "PublicMailDomains",
    "Region",
    "Regions",
    "SoftwareStatus",
    "Source",
    "SupportLevel",
    "UnknownInstanceType",
    "UsageClass",
    "UsageKind",
    "UsageKindInfo",
    "UsageKinds",
    "classify_usage_type",
    "get_assumptions",
    "get_catalog",
    "get_credit_programs",
    "get_model_families",
    "get_neuron_software",
    "get_public_mail_domains",
    "get_regions",
    "get_usage_kinds",
    "parse_usage_type",
    "platform_of",
]


def __getattr__(name: str) -> Any:
    """A name asked for: its module is imported then."""
    module = _MODULE_OF.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{module}"), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
