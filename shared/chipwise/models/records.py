"""Records collectors hand to the store: plain, typed, no I/O (the boundary between collect and store)."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import date, datetime
from decimal import Decimal

from chipwise.models.common import Platform, ResourceKind
from chipwise.models.resources import NoDetails, ResourceDetails, WorkloadHints, resource_key


@dataclass(frozen=True)
class CostLine:
    """One Cost Explorer group on one day (a row of ``cost_records``)."""

    day: date
    service: str
    usage_type: str
    usage_kind: str | None
    instance_type: str | None
    region: str | None
    unblended_cost: Decimal
    amortized_cost: Decimal
    usage_quantity: Decimal
    estimated: bool


@dataclass(frozen=True)
class HourlyRollup:
    """One hour of one metric of one resource (a row of ``metric_rollups`` without the resource id)."""

    resource_key: str
    namespace: str
    metric: str
    hour: datetime
    average: float | None
    maximum: float | None
    sum: float | None
    sample_count: float | None


@dataclass(frozen=True, slots=True)
class SeriesCoverage:
    """Whether a metric exists for a resource over the window, and how many hours had datapoints."""

    resource_key: str
    namespace: str
    metric: str
    exists: bool
    hours_with_data: int


@dataclass
class CollectedResource:
    """One resource as a collector saw it (the columns of ``resources``, before the store assigns an id)."""

    arn: str
    kind: ResourceKind
    name: str
    instance_type: str | None
    instance_count: int
    platform: Platform
    state: str | None
    unknown_instance_type: bool
    launched_at: datetime | None = None
    ended_at: datetime | None = None
    tags: dict[str, str] = field(default_factory=dict)
    hints: WorkloadHints = field(default_factory=WorkloadHints)
    details: ResourceDetails = field(default_factory=NoDetails)
    # One production variant of a multi-variant endpoint (``arn`` is then the endpoint's): the variant's name.
    variant: str | None = None
    # The endpoint a variant or an inference component belongs to (kept as stored when its endpoint could not be
    # described this scan).
    parent_arn: str | None = None

    @property
    def key(self) -> str:
        """Chipwise's id of this resource (:func:`chipwise.models.resources.resource_key`)."""
        return resource_key(self.arn, self.variant)


@dataclass(frozen=True)
class ResourceProblem:
    """One resource a collector listed but could not fully describe (the rest of its source went on)."""

    arn: str
    name: str
    code: str | None
    message: str
    recorded: bool  # the resource is still recorded, with what is known


@dataclass
class Inventory:
    """What an inventory source found: the resources, and the listed ones it could not describe."""

    resources: list[CollectedResource] = field(default_factory=list)
    problems: list[ResourceProblem] = field(default_factory=list)
    listed_arns: set[str] = field(default_factory=set)  # every resource key the listing named (never marked gone)
    # (kind, name) of listed resources that could not be described and whose key only the describe call gives (a
    # Studio app's ARN is DescribeApp's): kept as stored, never marked gone.
    undescribed_names: set[tuple[str, str]] = field(default_factory=set)
    # Resources whose children (variants, inference components) could not all be read this scan: kept as stored.
    keep_children_of: set[str] = field(default_factory=set)
