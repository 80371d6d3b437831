"""Scheduled fan-out: one scan-queue message per (account, region), so thousands of accounts scale out as
Lambda invocations behind SQS (whose concurrency limit protects the AWS APIs), with no home-made scheduler."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, date, datetime

from chipwise.aws import AwsContext, aws_context
from chipwise.errors import ConfigError, UpstreamError
from chipwise.models.events import ScheduledEvent
from chipwise.models.scan import ScanRequest
from chipwise.observability import logger
from chipwise.settings import Settings, get_settings

SQS_BATCH = 10  # SendMessageBatch takes at most 10 entries


@dataclass(frozen=True)
class Member:
    account_id: str
    name: str | None = None


@dataclass
class FanoutReport:
    requests: list[ScanRequest] = field(default_factory=list)
    sent: int = 0
    failed: list[str] = field(default_factory=list)  # "account/region: reason"

    def as_dict(self) -> dict[str, object]:
        return {"planned": len(self.requests), "sent": self.sent, "failed": self.failed}


def member_accounts(aws: AwsContext, settings: Settings) -> list[Member]:
    """Active accounts: every ACTIVE member of the organization, or the configured list."""
    if not settings.use_organizations:
        return [Member(account_id) for account_id in settings.account_ids]
    members: list[Member] = []
    for page in aws.client("organizations").get_paginator("list_accounts").paginate():
        members.extend(
            Member(a["Id"], a.get("Name")) for a in page["Accounts"] if a.get("Status", "ACTIVE") == "ACTIVE"
        )
    return sorted(members, key=lambda m: m.account_id)


def scan_requests(members: list[Member], settings: Settings, home_account: str | None) -> Iterator[ScanRequest]:
    """One request per (account, region); the home account is scanned with its own credentials."""
    for member in members:
        for region in settings.scan_regions:
            own = member.account_id == home_account
            role_arn = None if own else f"arn:aws:iam::{member.account_id}:role/{settings.member_role_name}"
            yield ScanRequest(
                account_id=member.account_id,
                region=region,
                role_arn=role_arn,
            )


def _entry(index: int, request: ScanRequest, *, fifo: bool, day: date) -> dict[str, str]:
    """One SendMessageBatch entry. On the FIFO scan queue the deduplication id is (account, region, day): a
    replayed schedule, a retried dispatch or a second run the same day queue nothing new (SQS drops a duplicate
    for five minutes; ``scan_account`` skips an (account, region) already scanned that day after that)."""
    entry = {"Id": str(index), "MessageBody": request.model_dump_json()}
    if fifo:
        entry["MessageGroupId"] = request.account_id
        entry["MessageDeduplicationId"] = f"{request.account_id}-{request.region}-{day.isoformat()}"
    return entry


def dispatch_scans(aws: AwsContext, settings: Settings, *, dry_run: bool = False) -> FanoutReport:
    """List the accounts and put one ScanRequest per (account, region) on the scan queue."""
    if not dry_run and not settings.scan_queue_url:
        raise ConfigError("scan_queue_url (CHIPWISE_SCAN_QUEUE_URL) is not set: there is no queue to fan out to")
    members = member_accounts(aws, settings)
    if not members:
        raise ConfigError(
            "no accounts to scan: set account_ids (CHIPWISE_ACCOUNT_IDS) "
            "or use_organizations (CHIPWISE_USE_ORGANIZATIONS)"
        )
    report = FanoutReport(requests=list(scan_requests(members, settings, aws.account_id())))
    day = datetime.now(UTC).date()
    if dry_run:
        return report
    sqs = aws.client("sqs")
    for start in range(0, len(report.requests), SQS_BATCH):
        batch = report.requests[start : start + SQS_BATCH]
        fifo = str(settings.scan_queue_url).endswith(".fifo")
        entries = [_entry(i, r, fifo=fifo, day=day) for i, r in enumerate(batch)]
        result = sqs.send_message_batch(QueueUrl=str(settings.scan_queue_url), Entries=entries)  # type: ignore[arg-type]
        report.sent += len(result.get("Successful", []))
        for failure in result.get("Failed", []):
            request = batch[int(failure["Id"])]
            report.failed.append(f"{request.account_id}/{request.region}: {failure.get('Message', failure['Code'])}")
    logger().info("scans dispatched", extra=report.as_dict())
    if report.failed and not report.sent:
        raise UpstreamError(f"no scan could be queued: {report.failed[0]}")
    return report


def dispatch_on_schedule(schedule: ScheduledEvent, settings: Settings | None = None) -> FanoutReport:
    """The ``scan_dispatch`` Lambda: the daily schedule queues one scan per account and region the settings name
    (``chipwise accounts dispatch`` calls :func:`dispatch_scans` with the same settings)."""
    settings = settings or get_settings()
    logger().info("scheduled dispatch", extra={"schedule": schedule.resources[:1], "time": schedule.time.isoformat()})
    return dispatch_scans(aws_context(settings.region), settings)
