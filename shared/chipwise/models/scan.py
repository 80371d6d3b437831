"""Scan messages and events exchanged between the Lambdas (SQS body, EventBridge detail)."""

from datetime import date, datetime
from decimal import Decimal
from typing import Any, Literal, Self

from pydantic import BaseModel, ConfigDict, Field, model_validator

from chipwise.models.common import AccountId, MoneyStr, Platform, ResourceKind
from chipwise.models.findings import FindingDocument
from chipwise.models.verdicts import ResourceVerdict

SCAN_COMPLETED_SOURCE = "chipwise"
SCAN_COMPLETED_DETAIL_TYPE = "ScanCompleted"

ScanStatus = Literal["succeeded", "partial", "failed"]


class ScanRequest(BaseModel):
    """One (account, region) to scan: the body of a message on the scan queue."""

    model_config = ConfigDict(defer_build=True, extra="forbid", frozen=True)

    account_id: AccountId
    region: str = Field(pattern=r"^[a-z]{2}(-gov)?-[a-z]+-\d$")
    role_arn: str | None = Field(None, pattern=r"^arn:aws[a-z-]*:iam::\d{12}:role/.+$")

    @model_validator(mode="after")
    def _role_in_the_account(self) -> Self:
        """A message's role must be in the account it names: a scan of B written under A would corrupt A."""
        if self.role_arn is not None and self.role_arn.split(":")[4] != self.account_id:
            raise ValueError("role_arn names another account than account_id")
        return self


class ScanCompleted(BaseModel):
    """Detail of the ``ScanCompleted`` event on the Chipwise bus (benchmark dispatch and notify listen)."""

    model_config = ConfigDict(defer_build=True, extra="ignore", frozen=True)

    scan_id: str
    account_id: str
    region: str
    status: str  # succeeded|partial|failed
    finished_at: datetime
    findings: int = 0
    new_finding_ids: list[str] = []


# --- the scan document (`chipwise scan --json`): the contract for tools built on Chipwise --------------------


class ScanWindow(BaseModel):
    """The cost window of a scan, half-open like Cost Explorer's: ``[start, end)`` in UTC days."""

    model_config = ConfigDict(defer_build=True, extra="forbid")

    start: date
    end: date

    @property
    def hours(self) -> int:
        """The window's hours (whole UTC days)."""
        return (self.end - self.start).days * 24


class ScanResource(BaseModel):
    """One resource as the scan saw it. ``id`` is Chipwise's id of it: its ARN, or for one production variant of a
    multi-variant endpoint the endpoint's ARN then ``#variant/<VariantName>``; ``arn`` is always an ARN AWS accepts
    (the endpoint's, for a variant) and ``variant`` names the variant."""

    model_config = ConfigDict(defer_build=True, extra="forbid")

    id: str
    arn: str | None = None
    variant: str | None = None
    kind: ResourceKind
    name: str
    instance_type: str | None
    instance_count: int
    platform: Platform
    state: str | None = None
    unknown_instance_type: bool = False
    hints: dict[str, Any] = {}
    # Capacity shared by inference components: the instance-equivalents this resource pays for (a component's share,
    # a variant's unreserved rest; absent: its whole count, or unknown for a component) and how that was worked out.
    billed_instances: Decimal | None = None
    cost_basis: str | None = None
    # Priced from the bill (costs.source "bill"): what the bill says this resource cost over the window, at its own
    # effective rate (Savings Plans, reservations, Spot), against the public on-demand rate; its team and owner.
    cost_usd: MoneyStr | None = None
    effective_hourly_rate_usd: Decimal | None = None
    public_on_demand_rate_usd: Decimal | None = None
    usage_hours: Decimal | None = None
    pricing: list[str] = []
    team: str | None = None
    owner: str | None = None
    # The resource whose cost carries this one's bill lines (the Batch compute environment that launched this
    # instance): its cost is counted there, once, and this resource is not missing from the bill. Only in a scan the
    # bill priced (costs.source "bill"), and only when the bill names the instance: Cost Explorer prices no resource
    # (its costs are by instance type, no resource has a cost_usd), so no resource's cost carries another's there.
    billed_on: str | None = None
    # The resource this one is judged on (the Batch compute environment that launched this instance, as the rules
    # read the tie from the inventory): set whatever priced the scan; the instance has no finding of its own, and
    # its verdict names the environment.
    judged_on: str | None = None


class ScanCostKind(BaseModel):
    """One billing usage kind over the window: attributed (instance hours, unused reservations), deliberately
    ignored (with the reason) or unknown (kept and counted, never dropped)."""

    model_config = ConfigDict(defer_build=True, extra="forbid")

    kind: str
    treatment: Literal["instance_hours", "unused_reservation", "ignored", "unknown"]
    usd: MoneyStr
    usage_types: int = Field(description="How many distinct usage types of this kind the window had.")
    reason: str | None = None


class ScanUnusedReservation(BaseModel):
    """Capacity reserved and not used (UnusedBox/UnusedDed): money on an instance type that no resource ran."""

    model_config = ConfigDict(defer_build=True, extra="forbid")

    instance_type: str
    platform: Platform | None = Field(None, description="None: a type the catalog does not know.")
    accelerator: bool = Field(description="An accelerator type (Inferentia, Trainium, GPU).")
    hours: Decimal
    usd: MoneyStr
    usage_types: list[str] = []
    label: str = "reserved but unused"


class ScanUnknownUsageType(BaseModel):
    model_config = ConfigDict(defer_build=True, extra="forbid")

    usage_type: str
    usd: MoneyStr


class ScanNotAttributed(BaseModel):
    """Cost of the bill over the window that no resource carries (a commitment's unused part, tax, credits, usage
    with no resource id), by category, with the reason: part of spend, attributed to nothing."""

    model_config = ConfigDict(defer_build=True, extra="forbid")

    category: str
    reason: str
    usd: MoneyStr


class ScanNotInBill(BaseModel):
    """A resource the bill should contain and does not: it ran in a period the bill covers, and no line names it
    by ARN or id. Priced at list (the public on-demand rate), labelled so, and kept out of "% of spend"."""

    model_config = ConfigDict(defer_build=True, extra="forbid")

    resource_id: str
    name: str
    kind: ResourceKind
    instance_type: str | None
    instance_count: int
    list_monthly_usd: MoneyStr | None = Field(
        None, description="Public on-demand rate x count x 730 h; None: no list price."
    )
    reasons: list[str] = Field(description="Why the bill may lack it, the likeliest first.")


class ScanCosts(BaseModel):
    """Unblended cost over the window (EC2 compute and SageMaker, this region), in US dollars; from the bill
    (``source`` "bill"): the effective cost of every resource the bill names in this region.

    ``by_instance_type`` is instance hours only; unused capacity reservations are their own lines; ``kinds`` says
    what every usage kind was and why an ignored one is not attributed; usage types the catalog does not know are
    counted in ``unknown_usage_types`` (with their dollars, the largest first)."""

    model_config = ConfigDict(defer_build=True, extra="forbid")

    total_usd: MoneyStr
    source: Literal["bill", "cost_explorer"] = Field(
        "cost_explorer",
        description="bill: the stored AWS Data Exports bill (effective cost); cost_explorer: Cost Explorer.",
    )
    billing_periods: list[str] = Field(default_factory=list, description="The bill's periods the window used.")
    by_instance_type: dict[str, MoneyStr] = {}
    kinds: list[ScanCostKind] = []
    unused_reservations: list[ScanUnusedReservation] = []
    unknown_usage_types_count: int = 0
    unknown_usage_types: list[ScanUnknownUsageType] = []
    days_covered: int | None = Field(
        None,
        description="Whole days of the window the source has data for (the bill's days, or Cost Explorer's complete "
        "days): the monthly run rate is over these, never a partial window scaled up. None: a document from before.",
    )
    last_day: date | None = Field(None, description="The last day the bill has lines for (the bill only).")
    not_attributed: list[ScanNotAttributed] = Field(
        default_factory=list, description="The bill only: what no resource carries (in total_usd)."
    )
    not_in_bill: list[ScanNotInBill] = Field(
        default_factory=list, description="The bill only: resources it should contain and lacks (not in total_usd)."
    )


class ScanError(BaseModel):
    """A source that failed (after retries): the scan goes on and is recorded as partial."""

    model_config = ConfigDict(defer_build=True, extra="forbid")

    source: str
    code: str | None = None
    message: str


class ScanDocument(BaseModel):
    """The scan document: what one scan of one account and region collected, and the findings it led to."""

    model_config = ConfigDict(defer_build=True, extra="forbid")

    scan_id: str
    account_id: str
    region: str
    status: ScanStatus
    started_at: datetime
    finished_at: datetime
    window: ScanWindow
    as_of: datetime | None = Field(
        None,
        description="The moment the rules judged at (the end of every look-back window): `findings evaluate` "
        "judges the stored data again at this moment, so it reproduces the scan's findings.",
    )
    resources: list[ScanResource] = []
    costs: ScanCosts
    api_calls: dict[str, int] = {}
    findings: list[FindingDocument] = []
    errors: list[ScanError] = []
    verdicts: list[ResourceVerdict] = []  # one per resource the rules looked at (issue 24: every dollar accounted for)
