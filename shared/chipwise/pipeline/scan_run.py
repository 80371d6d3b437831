"""The state of one scan while it runs, and how a source's failure is recorded: the scan goes on (``partial``), or
could not start at all (``failed``, with the reason)."""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from datetime import date, datetime, timedelta
from decimal import Decimal
from typing import Any

from botocore.exceptions import BotoCoreError, ClientError

from chipwise.clock import utcnow
from chipwise.models.records import CollectedResource
from chipwise.models.scan import ScanCosts, ScanDocument, ScanError, ScanStatus, ScanWindow
from chipwise.models.verdicts import ResourceVerdict
from chipwise.observability import logger
from chipwise.store import SessionFactory, transaction
from chipwise.store.repositories.accounts import AccountRepository, ScanRepository


@dataclass
class ScanRun:
    """The state of one scan while it runs."""

    scan_id: str
    account_id: str
    region: str
    started_at: datetime
    now: datetime
    metric_start: datetime
    metric_end: datetime
    cost_start: date
    cost_end: date
    lookback_days: int
    errors: list[ScanError] = field(default_factory=list)
    timings: dict[str, float] = field(default_factory=dict)
    resources: list[CollectedResource] = field(default_factory=list)
    resource_ids: dict[str, int] = field(default_factory=dict)
    inventory_ok: int = 0
    counts: dict[str, Any] = field(default_factory=dict)
    verdicts: list[ResourceVerdict] = field(default_factory=list)  # one per resource, from the rules
    cpu: dict[str, float] = field(default_factory=dict)
    incremental: bool = True
    cost_source: str = "cost_explorer"  # bill | cost_explorer: where this scan's costs come from
    bill_periods: list[str] = field(default_factory=list)

    def fail(self, source: str, exc: BaseException) -> None:
        self.record(scan_error(source, exc))

    def record(self, error: ScanError) -> None:
        self.errors.append(error)
        logger().warning(
            "scan source failed", extra={"source": error.source, "code": error.code, "error": error.message}
        )

    @property
    def status(self) -> ScanStatus:
        if not self.inventory_ok:
            return "failed"
        return "partial" if self.errors else "succeeded"


AWS_ERRORS = (ClientError, BotoCoreError)


def scan_error(source: str, exc: BaseException, *, code: str | None = None) -> ScanError:
    """A failed source as the scan document records it: the AWS error code when there is one (else ``code``), the
    first line."""
    if isinstance(exc, ClientError):
        code = exc.response.get("Error", {}).get("Code")
    message = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    return ScanError(source=source, code=code, message=message[:1000])


def failed_start_source(exc: BaseException) -> str:
    """The call a scan failed to start on: ``sts.GetCallerIdentity``, ``sts.AssumeRole`` (``sts`` when unknown)."""
    operation = getattr(exc, "operation_name", None)
    return f"sts.{operation}" if isinstance(exc, ClientError) and operation else "sts"


def record_failed_start(
    factory: SessionFactory,
    *,
    account_id: str | None,
    region: str,
    exc: BaseException,
    lookback_days: int,
    role_arn: str | None = None,
) -> ScanDocument:
    """A scan that could not start (the member role not assumed, GetCallerIdentity throttled or denied): a
    ``failed`` scan document with the reason. Stored as a ``scans`` row when the account is known; without an
    account id (the caller's identity is what failed) it is only returned and logged."""
    now = utcnow()
    error = scan_error(failed_start_source(exc), exc, code=type(exc).__name__)
    window = ScanWindow(start=(now - timedelta(days=lookback_days)).date(), end=now.date())
    document = ScanDocument(
        scan_id=str(uuid.uuid4()),
        account_id=account_id or "unknown",
        region=region,
        status="failed",
        started_at=now,
        finished_at=now,
        window=window,
        costs=ScanCosts(total_usd=Decimal(0)),
        errors=[error],
    )
    logger().error("scan could not start", extra={"source": error.source, "code": error.code, "region": region})
    if account_id is None:
        return document
    with transaction(factory) as session:
        AccountRepository(session).ensure(account_id, role_arn=role_arn)
        ScanRepository(session).add_failed(
            document.scan_id,
            account_id,
            region,
            at=now,
            window_start=window.start,
            window_end=window.end,
            errors=[error.model_dump()],
            document=document.model_dump(mode="json"),
        )
    return document
