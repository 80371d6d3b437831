"""The bill as AWS delivers it (CUR 2.0, FOCUS 1.0 or 1.2 with AWS columns, legacy CUR), at the boundary: the
manifest, and what one billing period yields once read (per-resource effective costs of the compute Chipwise
inventories, per-account and service totals of the rest, commitments, what no resource carries).

Plain and typed, no I/O: :mod:`chipwise.collect.bill_export` builds these, :mod:`chipwise.store.repositories.bill`
stores them."""

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import date
from decimal import Decimal
from typing import Any, Literal, Protocol

from pydantic import BaseModel, ConfigDict, Field

BillTable = Literal["COST_AND_USAGE_REPORT", "FOCUS_1_0_AWS", "FOCUS_1_2_AWS", "LEGACY_CUR"]
BILL_TABLES: tuple[BillTable, ...] = ("COST_AND_USAGE_REPORT", "FOCUS_1_0_AWS", "FOCUS_1_2_AWS", "LEGACY_CUR")
DataFormat = Literal["parquet", "csv"]
# How a usage line was priced: the line item types of the amortised view that are a resource's cost.
Pricing = Literal["on_demand", "spot", "savings_plan", "reservation"]
PRICINGS: tuple[Pricing, ...] = ("on_demand", "spot", "savings_plan", "reservation")
BILLING_PERIOD = re.compile(r"^\d{4}-(0[1-9]|1[0-2])$")


class ManifestColumn(BaseModel):
    model_config = ConfigDict(defer_build=True, extra="ignore", frozen=True)

    name: str
    type: str = ""


class ExportManifest(BaseModel):
    """``metadata/BILLING_PERIOD=YYYY-MM/<export-name>-Manifest.json``: the documented fields Chipwise reads
    (``executionId``, ``exportArn``, ``columns``, ``dataFiles``) plus the billing period and the query statement
    when the delivery carries them. Unknown fields are ignored (AWS adds fields)."""

    model_config = ConfigDict(defer_build=True, extra="ignore", frozen=True, populate_by_name=True)

    execution_id: str = Field("", alias="executionId")
    export_arn: str = Field("", alias="exportArn")
    columns: list[ManifestColumn] = []
    data_files: list[str] = Field(alias="dataFiles")
    query_statement: str | None = Field(None, alias="queryStatement")
    billing_period: dict[str, Any] | None = Field(None, alias="billingPeriod")

    @property
    def column_names(self) -> set[str]:
        return {c.name for c in self.columns}


@dataclass(slots=True)
class ResourceCost:
    """One resource's usage on one day under one pricing (or one EKS pod's split share of its node, named by
    ``parent_resource_id``: a share, never added to the node's own cost again). Not frozen: a large bill builds
    hundreds of thousands and a frozen dataclass's ``__init__`` costs four times as much; none is changed once
    assembled."""

    account_id: str
    region: str
    day: date
    resource_id: str
    service: str
    usage_type: str
    instance_type: str | None
    pricing: Pricing
    effective_cost: Decimal
    billed_cost: Decimal
    public_on_demand_cost: Decimal
    public_on_demand_rate: Decimal | None
    usage_hours: Decimal
    commitment_arn: str | None = None
    parent_resource_id: str | None = None
    tags: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class Commitment:
    """A Savings Plan or reservation over the billing period: what it covered and what went unused."""

    arn: str
    account_id: str
    kind: Literal["savings_plan", "reservation"]
    offering_type: str | None
    family: str | None
    hourly_commitment: Decimal | None
    end_date: date | None
    used_cost: Decimal  # effective cost of the usage it covered
    unused_cost: Decimal  # the commitment paid and not used: the commitment's waste, no resource's cost
    covered_accelerator_hours: Decimal
    accelerator_hours: Decimal  # every accelerator instance hour of the accounts it covered, covered or not
    # its terms (issue 38): CUR 2.0's savings_plan_start_time / reservation_start_time, savings_plan_region (else
    # the Region of the usage it covered), reservation_number_of_reservations; FOCUS has none of them
    start_date: date | None = None
    region: str | None = None
    reserved_count: int | None = None
    covered_on_demand_cost: Decimal = Decimal(0)  # the public on-demand cost of the usage it covered
    effective_rate: Decimal | None = None  # its own rate: effective cost per covered instance hour

    @property
    def discount(self) -> Decimal | None:
        """Off public on demand for the usage it covered, as the bill shows it (effective vs public on-demand)."""
        if self.covered_on_demand_cost <= 0:
            return None
        return (1 - self.used_cost / self.covered_on_demand_cost).quantize(Decimal("0.0001"))

    @property
    def coverage(self) -> Decimal | None:
        if self.accelerator_hours <= 0:
            return None
        return (self.covered_accelerator_hours / self.accelerator_hours).quantize(Decimal("0.0001"))

    @property
    def utilisation(self) -> Decimal | None:
        total = self.used_cost + self.unused_cost
        return (self.used_cost / total).quantize(Decimal("0.0001")) if total > 0 else None


@dataclass(frozen=True)
class Unattributed:
    """Cost no resource carries (credits, tax, refunds, fees, a commitment's unused part, usage with no resource
    id), per account, region and category, with the reason."""

    account_id: str
    region: str
    category: str
    reason: str
    amount: Decimal


@dataclass(frozen=True)
class ServiceCost:
    """The usage of resources Chipwise does not inventory (storage, network, managed services...), per account,
    region and service: a total, not one row per resource and day."""

    account_id: str
    region: str
    service: str
    effective_cost: Decimal
    line_items: int


@dataclass
class BillPeriod:
    """One billing period of one payer account, as read from one export. ``resources`` holds the resource-days
    only when the reader keeps them (no sink): with a sink they go to it in batches as they are fetched."""

    billing_period: str
    table: BillTable
    export_uri: str
    manifest_uri: str
    execution_id: str
    engine: Literal["duckdb", "athena"]
    line_items: int = 0
    bytes_read: int = 0
    payer_account_id: str = ""
    data_format: DataFormat = "parquet"
    other_providers: dict[str, int] = field(default_factory=dict)  # rows of other clouds in a FOCUS file: not read
    resources: list[ResourceCost] = field(default_factory=list)
    commitments: list[Commitment] = field(default_factory=list)
    unattributed: list[Unattributed] = field(default_factory=list)
    service_costs: list[ServiceCost] = field(default_factory=list)


class PeriodSink(Protocol):
    """Where a billing period goes as it is read: ``begin`` once the export is validated (nothing before), then
    the resource-days in batches as they are fetched."""

    def begin(self, period: BillPeriod) -> None: ...

    def resources(self, batch: Sequence[ResourceCost]) -> None: ...


@dataclass
class ResourceBill:
    """One resource's bill over a window: effective, billed and public on-demand cost, hours, how it was priced."""

    resource_id: str
    instance_type: str | None
    service: str
    effective_cost: Decimal = Decimal(0)
    billed_cost: Decimal = Decimal(0)
    public_on_demand_cost: Decimal = Decimal(0)
    usage_hours: Decimal = Decimal(0)
    pricings: set[str] = field(default_factory=set)
    parent_resource_id: str | None = None
    tags: dict[str, str] = field(default_factory=dict)
    periods: set[str] = field(default_factory=set)

    @property
    def effective_rate(self) -> Decimal | None:
        return (self.effective_cost / self.usage_hours).quantize(Decimal("0.000001")) if self.usage_hours > 0 else None

    @property
    def public_on_demand_rate(self) -> Decimal | None:
        if self.usage_hours <= 0:
            return None
        return (self.public_on_demand_cost / self.usage_hours).quantize(Decimal("0.000001"))
