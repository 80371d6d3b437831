"""Cost Explorer / Price List usage types taken apart: ``<region prefix>-<kind>:<rest>``.

The kinds, what each is and what Chipwise does with it live in ``data/usage_types.json``; the region prefixes in
``data/regions.json`` (``EU`` for Ireland, ``USE1`` or none for us-east-1, ...). :func:`classify_usage_type` gives
every usage type one treatment:

- ``instance_hours``: hours of an instance type (EC2 On-Demand, Spot, Dedicated, Capacity Reservation in use;
  SageMaker hosting, async inference, training, processing, batch transform, notebooks, Studio apps), priced into
  the account's own rate for that type;
- ``unused_reservation``: capacity reserved on a type and not used (``UnusedBox``, ``UnusedDed``): money on the
  type that no resource used;
- ``ignored``: deliberately not attributed, with the reason the scan document shows (Dedicated Host fees, RI fees,
  serverless inference, ML storage volumes, ...);
- ``unknown``: a kind (or a region prefix) this data does not know. Kept, never dropped: counted in the scan
  document with its dollars.
"""

import re
from functools import lru_cache
from typing import Annotated, Literal, Self

from pydantic import Field, model_validator

from chipwise.catalog.instance_data import SAGEMAKER_PREFIX
from chipwise.catalog.loading import FrozenData, SourcedDocument, check_sources, keyed_by, load_document
from chipwise.catalog.regions import get_regions

__all__ = [
    "ParsedUsageType",
    "Purchase",
    "Treatment",
    "UsageClass",
    "UsageKind",
    "UsageKindInfo",
    "UsageKinds",
    "classify_usage_type",
    "get_usage_kinds",
    "parse_usage_type",
]

Treatment = Literal["instance_hours", "unused_reservation", "ignored", "unknown"]
Purchase = Literal["on_demand", "spot", "dedicated", "capacity_reservation"]
RestShape = Literal["ec2_type", "ml_type", "app_ml_type", "any"]
UNKNOWN_KIND = "unknown"
STORAGE_KIND = "storage"
# The kinds that are instance hours (also the ``cost_records.usage_kind`` values the rates are computed from).
UsageKind = Literal[
    "BoxUsage",
    "SpotUsage",
    "DedicatedUsage",
    "Reservation",
    "DedicatedRes",
    "Host",
    "AsyncInf",
    "Train",
    "Processing",
    "Transform",
    "Notebk",
    "Studio",
]

_SHAPE = re.compile(r"^(?:(?P<prefix>[A-Z]{2,4}\d?)-)?(?P<kind>[A-Za-z][A-Za-z0-9_]*)(?::(?P<rest>.+))?$")
_TYPE = r"[a-z0-9][a-z0-9-]*\.[a-z0-9][a-z0-9-]*"
_REST = {
    "ec2_type": re.compile(rf"^(?P<type>{_TYPE})$"),
    "ml_type": re.compile(rf"^(?P<type>ml\.{_TYPE})$"),
    "app_ml_type": re.compile(rf"^(?:[A-Za-z][A-Za-z0-9_]*-)?(?P<type>ml\.{_TYPE})$"),
}


class UsageKindInfo(FrozenData):
    """One usage kind of ``usage_types.json``."""

    name: str
    service: Literal["ec2", "sagemaker"]
    treatment: Literal["instance_hours", "unused_reservation", "ignored"]
    rest: RestShape
    purchase: Purchase | None = None
    meaning: str
    reason: str | None = Field(None, description="Why an ignored kind is not attributed (shown in the scan document).")
    source: str

    @model_validator(mode="after")
    def _consistent(self) -> Self:
        if self.treatment == "ignored" and not self.reason:
            raise ValueError(f"usage kind {self.name}: an ignored kind needs its reason")
        if self.treatment != "ignored" and (self.rest == "any" or self.purchase is None):
            raise ValueError(f"usage kind {self.name}: an attributed kind names its instance type and purchase")
        return self


class _UsageTypesDocument(SourcedDocument):
    kinds: Annotated[dict[str, UsageKindInfo], keyed_by("name")]
    storage_rest_prefixes: list[str]
    storage_reason: str

    @model_validator(mode="after")
    def _sources(self) -> Self:
        check_sources({k.source for k in self.kinds.values()}, self.sources)
        return self


class UsageKinds:
    """The usage kinds Chipwise knows, by name."""

    def __init__(self, document: _UsageTypesDocument) -> None:
        self.as_of = document.as_of
        self.sources = dict(document.sources)
        self.kinds: dict[str, UsageKindInfo] = dict(document.kinds)
        self.storage_prefixes = tuple(document.storage_rest_prefixes)
        self.storage_reason = document.storage_reason

    def get(self, name: str) -> UsageKindInfo | None:
        return self.kinds.get(name)

    def names(self, treatment: str) -> list[str]:
        """The kinds with this treatment (``instance_hours``: the kinds the account's own rates come from)."""
        return sorted(k.name for k in self.kinds.values() if k.treatment == treatment)


@lru_cache(maxsize=1)
def get_usage_kinds() -> UsageKinds:
    """The shipped ``usage_types.json`` (read once)."""
    return UsageKinds(load_document(_UsageTypesDocument, "usage_types.json"))


class UsageClass(FrozenData):
    """What one usage type is and what Chipwise does with it."""

    usage_type: str
    kind: str = Field(description="The billing kind (BoxUsage, UnusedBox, Processing, ...), 'storage' or 'unknown'.")
    treatment: Treatment
    service: Literal["ec2", "sagemaker"] | None = None
    instance_type: str | None = Field(None, description="For attributed kinds; SageMaker types keep 'ml.'.")
    region: str | None = Field(None, description="From the prefix; us-east-1 when there is none; None: unknown.")
    region_prefix: str | None = None
    purchase: Purchase | None = None
    reason: str | None = Field(None, description="Why it is ignored or unknown.")


def classify_usage_type(usage_type: str) -> UsageClass:
    """One usage type's kind, treatment, instance type and region. Never raises: what cannot be read is
    ``unknown`` with the reason."""
    text = usage_type.strip()
    match = _SHAPE.match(text)
    if match is None:
        return UsageClass(usage_type=text, kind=UNKNOWN_KIND, treatment="unknown", reason="not a usage-type string")
    regions = get_regions()
    prefix = match["prefix"]
    region: str | None
    if prefix is None:
        region = regions.base_region
    else:
        info = regions.by_prefix(prefix)
        region = info.code if info else None
    kind_name, rest = match["kind"], match["rest"]
    kind = get_usage_kinds().get(kind_name)
    if kind is None or (prefix is not None and region is None):
        why = f"region prefix {prefix!r} is not in regions.json" if kind else f"usage kind {kind_name!r} is not known"
        return UsageClass(
            usage_type=text, kind=UNKNOWN_KIND, treatment="unknown", region=region, region_prefix=prefix, reason=why
        )
    base: dict[str, object] = {
        "usage_type": text,
        "service": kind.service,
        "region": region,
        "region_prefix": prefix,
    }
    if kind.treatment == "ignored":
        return UsageClass.model_validate({**base, "kind": kind.name, "treatment": "ignored", "reason": kind.reason})
    storage = get_usage_kinds()
    if rest and rest.startswith(storage.storage_prefixes):
        return UsageClass.model_validate(
            {**base, "kind": STORAGE_KIND, "treatment": "ignored", "reason": storage.storage_reason}
        )
    typed = _REST[kind.rest].match(rest or "")
    if typed is None or (kind.service == "ec2" and typed["type"].startswith(SAGEMAKER_PREFIX)):
        return UsageClass.model_validate(
            {
                **base,
                "kind": UNKNOWN_KIND,
                "treatment": "unknown",
                "reason": f"{kind.name} usage without an instance type",
            }
        )
    return UsageClass.model_validate(
        {
            **base,
            "kind": kind.name,
            "treatment": kind.treatment,
            "instance_type": typed["type"],
            "purchase": kind.purchase,
        }
    )


class ParsedUsageType(FrozenData):
    """An instance-hour usage type taken apart: ``USW2-SpotUsage:p5.48xlarge`` -> spot p5.48xlarge in us-west-2."""

    usage_type: str
    kind: UsageKind
    service: Literal["ec2", "sagemaker"]
    instance_type: str = Field(description="With the ml. prefix for SageMaker usage.")
    region: str = Field(description="From the prefix; us-east-1 when there is none.")
    region_prefix: str | None
    purchase: Purchase


def parse_usage_type(usage_type: str) -> ParsedUsageType | None:
    """Instance hours (EC2 BoxUsage/SpotUsage/DedicatedUsage/Capacity Reservation hours in use; SageMaker
    Host/AsyncInf/Train/Processing/Transform/Notebk/Studio), with or without a region prefix. None for anything
    else (unused reservations, storage, fees, unknown kinds or region prefixes)."""
    found = classify_usage_type(usage_type)
    if found.treatment != "instance_hours" or found.instance_type is None or found.region is None:
        return None
    assert found.service is not None and found.purchase is not None
    return ParsedUsageType(
        usage_type=found.usage_type,
        kind=found.kind,  # type: ignore[arg-type]  # instance-hour kinds are the UsageKind values
        service=found.service,
        instance_type=found.instance_type,
        region=found.region,
        region_prefix=found.region_prefix,
        purchase=found.purchase,
    )
