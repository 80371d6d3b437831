"""Scan messages and events exchanged between the Lambdas (SQS body, EventBridge detail)."""

from __future__ import annotations

from datetime import datetime

from pydantic import BaseModel, ConfigDict, Field

SCAN_COMPLETED_SOURCE = "chipwise"
SCAN_COMPLETED_DETAIL_TYPE = "ScanCompleted"


class ScanRequest(BaseModel):
    """One (account, region) to scan: the body of a message on the scan queue."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    account_id: str = Field(pattern=r"^\d{12}$")
    region: str = Field(pattern=r"^[a-z]{2}(-gov)?-[a-z]+-\d$")
    role_arn: str | None = Field(None, pattern=r"^arn:aws[a-z-]*:iam::\d{12}:role/.+$")
    external_id: str | None = None


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
