"""Scan messages and events exchanged between the Lambdas (SQS body, EventBridge detail)."""

from __future__ import annotations

from datetime import date, datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from chipwise.models.common import AccountId, MoneyStr, Platform, ResourceKind
from chipwise.models.findings import FindingDocument

SCAN_COMPLETED_SOURCE = "chipwise"
SCAN_COMPLETED_DETAIL_TYPE = "ScanCompleted"

ScanStatus = Literal["succeeded", "partial", "failed"]


class ScanRequest(BaseModel):
    """One (account, region) to scan: the body of a message on the scan queue."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    account_id: AccountId
    region: str = Field(pattern=r"^[a-z]{2}(-gov)?-[a-z]+-\d$")
    role_arn: str | None = Field(None, pattern=r"^arn:aws[a-z-]*:iam::\d{12}:role/.+$")

    @model_validator(mode="after")
    def _role_in_the_account(self) -> ScanRequest:
        """A message's role must be in the account it names: a scan of B written under A would corrupt A."""
        if self.role_arn is not None and self.role_arn.split(":")[4] != self.account_id:
            raise ValueError("role_arn names another account than account_id")
        return self


class ScanCompleted(BaseModel):
    """Detail of the ``ScanCompleted`` event on the Chipwise bus (benchmark dispatch and notify listen)."""

    model_config = ConfigDict(extra="ignore", frozen=True)

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

    model_config = ConfigDict(extra="forbid")

    start: date
    end: date


class ScanResource(BaseModel):
    """One resource as the scan saw it; ``id`` is its ARN."""

    model_config = ConfigDict(extra="forbid")

    id: str
    kind: ResourceKind
    name: str
    instance_type: str | None
    instance_count: int
    platform: Platform
    state: str | None = None
    unknown_instance_type: bool = False
    hints: dict[str, Any] = {}


class ScanCosts(BaseModel):
    """Unblended cost over the window (EC2 compute and SageMaker, this region), in US dollars."""

    model_config = ConfigDict(extra="forbid")

    total_usd: MoneyStr
    by_instance_type: dict[str, MoneyStr] = {}


class ScanError(BaseModel):
    """A source that failed (after retries): the scan goes on and is recorded as partial."""

    model_config = ConfigDict(extra="forbid")

    source: str
    code: str | None = None
    message: str


class ScanDocument(BaseModel):
    """The scan document: what one scan of one account and region collected, and the findings it led to."""

    model_config = ConfigDict(extra="forbid")

    scan_id: str
    account_id: str
    region: str
    status: ScanStatus
    started_at: datetime
    finished_at: datetime
    window: ScanWindow
    resources: list[ScanResource] = []
    costs: ScanCosts
    api_calls: dict[str, int] = {}
    findings: list[FindingDocument] = []
    errors: list[ScanError] = []
