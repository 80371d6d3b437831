"""What an inventory source knows of a resource's instance type: the catalog's row, else EC2's own
DescribeInstanceTypes answer, else the family's platform, else ``other``; and the resource record built on it.

An instance type the catalog does not know is kept and flagged (``unknown_instance_type``), never dropped.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from botocore.exceptions import ClientError

from chipwise.aws import AwsContext
from chipwise.catalog import get_catalog
from chipwise.catalog.ec2_facts import facts_from_ec2, platform_from_ec2
from chipwise.collect.hints import workload_hints
from chipwise.collect.inventory.answers import error_code, message
from chipwise.models.common import Platform, ResourceKind
from chipwise.models.records import CollectedResource, ResourceProblem
from chipwise.models.resources import ResourceDetails, WorkloadHints

DESCRIBE_TYPES_PAGE = 100  # DescribeInstanceTypes takes up to 100 names per call


@dataclass(frozen=True)
class TypeFacts:
    """What the catalog (or EC2 itself) says about an instance type, and whether the catalog lacks it."""

    platform: Platform
    unknown: bool
    facts: dict[str, Any]


def type_facts(instance_type: str | None, described: Mapping[str, Mapping[str, Any]] | None = None) -> TypeFacts:
    """Platform and facts: the catalog's row; else EC2's own DescribeInstanceTypes answer (``described``, by EC2
    name) with no price; else the platform the catalog records for the family; else ``other`` (an accelerator may
    hide behind a name nobody knows: it is kept, flagged, never guessed from its prefix)."""
    if not instance_type:
        return TypeFacts("cpu", False, {})
    catalog = get_catalog()
    found = catalog.get(instance_type)
    if found is not None:
        facts = {
            "accelerator": found.accelerator,
            "accelerator_count": found.accelerator_count,
            "neuron_cores": found.neuron_cores,
            "neuron_devices": found.neuron_devices,
            "accelerator_memory_gib": str(found.accelerator_memory_gib),
            "vcpu": found.vcpu,
            "memory_gib": str(found.memory_gib),
            "price_usd_per_hour": None if found.price_usd_per_hour is None else str(found.price_usd_per_hour),
            "price_source": found.price_source,
        }
        if found.accelerator_fraction is not None:
            facts["accelerator_fraction"] = str(found.accelerator_fraction)
        return TypeFacts(found.platform, False, facts)
    ec2_name = instance_type.strip().lower().removeprefix("ml.")
    info = (described or {}).get(ec2_name)
    if info is not None:
        return TypeFacts(platform_from_ec2(info), True, facts_from_ec2(info))
    known: Platform | None = catalog.platform_of_family(ec2_name.split(".", 1)[0])
    return TypeFacts(known or "other", True, {})


class TypeFactsReader:
    """DescribeInstanceTypes for the types the catalog lacks, asked once per type and collector. A type EC2 does
    not know (a SageMaker-only name, a typo) or a refused call leaves the type to :func:`type_facts`' fallbacks.
    A refused call (denied, throttled past the retries: any error but ``InvalidInstanceType``) is not silent: it is
    kept in :attr:`problems` (name ``describe_instance_types``, the code, the types asked), which the collector's
    :class:`Inventory` carries to the scan document (the scan ends ``partial``; the inventory goes on)."""

    PROBLEM_NAME = "describe_instance_types"

    def __init__(self, aws: AwsContext | None) -> None:
        self._aws = aws
        self.described: dict[str, dict[str, Any]] = {}
        self._asked: set[str] = set()
        self.problems: list[ResourceProblem] = []

    def prefetch(self, names: Iterable[str | None]) -> None:
        catalog = get_catalog()
        unknown = {n.strip().lower().removeprefix("ml.") for n in names if n and "." in n and catalog.get(n) is None}
        wanted = sorted(unknown - self._asked)
        if not wanted or self._aws is None:
            return
        self._asked.update(wanted)
        for start in range(0, len(wanted), DESCRIBE_TYPES_PAGE):
            self._describe(wanted[start : start + DESCRIBE_TYPES_PAGE])

    def _describe(self, names: list[str]) -> None:
        assert self._aws is not None
        try:
            answer = self._aws.client("ec2").describe_instance_types(InstanceTypes=names)  # type: ignore[arg-type]
        except ClientError as exc:
            code = error_code(exc)
            if code == "InvalidInstanceType":
                if len(names) > 1:
                    for name in names:  # one unknown name fails the whole call: ask for each alone
                        self._describe([name])
                return  # EC2 does not know this one type: the family table or `other`, as documented
            text = (
                f"DescribeInstanceTypes refused for {', '.join(names)}: {message(exc)}; "
                "these types fall back to the catalog's family table or 'other'"
            )
            self.problems.append(ResourceProblem("", self.PROBLEM_NAME, code, text, recorded=True))
            return
        for item in answer.get("InstanceTypes", []):
            self.described[str(item["InstanceType"])] = dict(item)

    def facts(self, instance_type: str | None) -> TypeFacts:
        self.prefetch([instance_type])
        return type_facts(instance_type, self.described)


def typed_resource(
    typ: TypeFacts,
    *,
    arn: str,
    kind: ResourceKind,
    name: str,
    instance_type: str | None,
    instance_count: int,
    state: str | None,
    details: ResourceDetails,
    launched_at: datetime | None = None,
    ended_at: datetime | None = None,
    tags: dict[str, str] | None = None,
    hints: WorkloadHints | None = None,
    variant: str | None = None,
    parent_arn: str | None = None,
) -> CollectedResource:
    """A resource on an instance type: its platform and ``unknown_instance_type`` from ``typ``; its workload hints
    from its tags unless the source read more (an image, a model's environment)."""
    tags = tags or {}
    return CollectedResource(
        arn=arn,
        variant=variant,
        parent_arn=parent_arn,
        kind=kind,
        name=name,
        instance_type=instance_type,
        instance_count=instance_count,
        platform=typ.platform,
        state=state,
        unknown_instance_type=typ.unknown,
        launched_at=launched_at,
        ended_at=ended_at,
        tags=tags,
        hints=hints if hints is not None else workload_hints(tags=tags, kind=kind),
        details=details,
    )
