"""The notification outbox: every message is a row, rendered once, sent at most once per dedupe key.

Why an outbox: the digest and alerts are decided inside a database transaction, but sending is an external
side effect that can fail. Writing the rendered message first and sending it afterwards means a failed send
loses nothing (the row stays ``pending`` and is retried with exponential backoff) and a repeated run sends
nothing twice (the dedupe key is unique, so enqueueing the same message again is a no-op).

A sender claims a row before sending by bumping ``attempts`` and pushing ``next_attempt_at`` a lease into the
future in one conditional UPDATE, so two drains running at once never send the same row. If a process dies
between sending and recording the result, the row becomes due again when the lease ends; that one case can
send twice (no mail or webhook API takes an idempotency key), everything else is exactly once.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any, Literal, Protocol

from pydantic import BaseModel, ConfigDict, EmailStr, Field, ValidationError

from chipwise.clock import utcnow
from chipwise.errors import InvalidInput
from chipwise.observability import logger
from chipwise.store import Session, SessionFactory, reading, transaction
from chipwise.store.repositories.messaging import OutboxRecord, OutboxRepository

Channel = Literal["email", "slack"]
CHANNELS: tuple[Channel, ...] = ("email", "slack")

LEASE = timedelta(minutes=15)  # how long a claimed row is hidden from other drains while it is being sent
MAX_BACKOFF = timedelta(hours=6)
SLACK_MAX_BLOCKS = 50
SLACK_MAX_SECTION_TEXT = 3000
_ERROR_LIMIT = 2000  # characters of last_error kept
MAX_DEDUPE_KEY = 256  # the column's width


# --- payloads ----------------------------------------------------------------------------------------------


class Attachment(BaseModel):
    """A small text attachment (a JSON draft, a CSV): the content is stored in the outbox row as text."""

    model_config = ConfigDict(defer_build=True, extra="forbid", frozen=True)

    filename: str = Field(min_length=1, max_length=200, pattern=r"^[^/\\\r\n]+$")
    content_type: str = Field("text/plain", pattern=r"^[a-z]+/[a-z0-9.+-]+$")
    content: str


class EmailPayload(BaseModel):
    """An email row's payload: both bodies, already rendered, and the addresses.

    ``to`` defaults to the row's ``recipient``; ``cc`` and ``reply_to`` are optional. The subject is the
    row's ``subject`` column (required for email).
    """

    model_config = ConfigDict(defer_build=True, extra="forbid", frozen=True)

    html: str = Field(min_length=1)
    text: str = Field(min_length=1)
    to: list[EmailStr] = Field(default_factory=list, max_length=50)
    cc: list[EmailStr] = Field(default_factory=list, max_length=49)
    reply_to: list[EmailStr] = Field(default_factory=list, max_length=5)
    attachments: list[Attachment] = Field(default_factory=list, max_length=10)


class SlackPayload(BaseModel):
    """A Slack incoming-webhook body: the notification text (required fallback) and Block Kit blocks."""

    model_config = ConfigDict(defer_build=True, extra="forbid", frozen=True)

    text: str = Field(min_length=1, max_length=40_000)
    blocks: list[dict[str, Any]] = Field(default_factory=list, max_length=SLACK_MAX_BLOCKS)


def validate_payload(channel: str, subject: str | None, payload: Mapping[str, Any]) -> dict[str, Any]:
    """The payload checked against its channel's shape (as stored); InvalidInput names what is wrong."""
    try:
        if channel == "email":
            if not subject or not subject.strip():
                raise InvalidInput("an email needs a subject")
            return EmailPayload.model_validate(payload).model_dump(mode="json")
        if channel == "slack":
            slack = SlackPayload.model_validate(payload)
            _check_slack_sections(slack)
            return slack.model_dump(mode="json")
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"]) or "payload"
        raise InvalidInput(f"invalid {channel} payload: {where}: {first['msg']}") from exc
    raise InvalidInput(f"unknown channel {channel!r} (use one of {', '.join(CHANNELS)})")


def _check_slack_sections(payload: SlackPayload) -> None:
    for index, block in enumerate(payload.blocks):
        text = block.get("text")
        if block.get("type") == "section" and isinstance(text, dict):
            length = len(str(text.get("text", "")))
            if length > SLACK_MAX_SECTION_TEXT:
                raise InvalidInput(f"invalid slack payload: blocks.{index}: section text is {length} characters")


# --- enqueue -----------------------------------------------------------------------------------------------


def enqueue(
    session: Session,
    *,
    channel: Channel,
    kind: str,
    recipient: str,
    dedupe_key: str,
    subject: str | None,
    payload: dict[str, Any],
    account_id: str | None = None,
    now: datetime | None = None,
) -> OutboxRecord | None:
    """Store one rendered message to be sent; None when ``dedupe_key`` was already enqueued (sent or not).

    Payload shapes (validated here, so a bad message fails at enqueue time, not at 3 a.m. in the sender):

    * ``channel="email"``: ``{"html": str, "text": str, "to": [addr, ...], "cc": [...], "reply_to": [...],
      "attachments": [{"filename": str, "content_type": "application/json", "content": str}]}``; only
      ``html`` and ``text`` are required, ``to`` defaults to ``[recipient]``, and ``subject`` is required.
    * ``channel="slack"``: ``{"text": fallback, "blocks": [Block Kit blocks]}`` within Slack's limits
      (50 blocks, 3,000 characters per section text).

    The caller owns the transaction: the row exists once the caller commits.
    """
    if not 0 < len(dedupe_key) <= MAX_DEDUPE_KEY:
        raise InvalidInput(f"a dedupe key is 1 to {MAX_DEDUPE_KEY} characters, got {len(dedupe_key)}")
    if channel == "email" and not payload.get("to"):
        payload = {**payload, "to": [recipient]}
    stored = validate_payload(channel, subject, payload)
    when = now or utcnow()
    values = {
        "channel": channel,
        "kind": kind,
        "recipient": recipient[:512],
        "dedupe_key": dedupe_key,
        "subject": " ".join(subject.split())[:998] if subject else None,
        "payload": stored,
        "status": "pending",
        "attempts": 0,
        "account_id": account_id,
        "created_at": when,
        "next_attempt_at": when,
    }
    return OutboxRepository(session).insert(values)


def existing_keys(session: Session, keys: Collection[str]) -> set[str]:
    """Which of ``keys`` are already in the outbox (for dry runs and to skip rendering)."""
    return OutboxRepository(session).keys(keys)


# --- senders -----------------------------------------------------------------------------------------------


class SendError(Exception):
    """A send failed. ``permanent``: retrying cannot help (mark failed now); ``retry_after``: seconds to wait."""

    def __init__(self, message: str, *, permanent: bool = False, retry_after: float | None = None) -> None:
        super().__init__(message)
        self.permanent = permanent
        self.retry_after = retry_after


class Sender(Protocol):
    """Sends one outbox row on its channel; returns the provider's message id (if any) or raises SendError."""

    def send(self, message: OutboxRecord) -> str | None: ...


# --- drain -------------------------------------------------------------------------------------------------


@dataclass
class DrainReport:
    """What one drain did, by outbox row id."""

    sent: list[int] = field(default_factory=list)
    retrying: list[int] = field(default_factory=list)
    failed: list[int] = field(default_factory=list)
    errors: dict[int, str] = field(default_factory=dict)

    def merge(self, other: DrainReport) -> None:
        self.sent += other.sent
        self.retrying += other.retrying
        self.failed += other.failed
        self.errors.update(other.errors)

    def as_dict(self) -> dict[str, Any]:
        return {
            "sent": len(self.sent),
            "retrying": len(self.retrying),
            "failed": len(self.failed),
            "errors": {str(k): v for k, v in self.errors.items()},
        }


def backoff(attempts: int, base_seconds: int) -> timedelta:
    """Delay after the ``attempts``-th failure: base, 2×base, 4×base … capped at six hours."""
    return min(timedelta(seconds=base_seconds * 2 ** max(0, attempts - 1)), MAX_BACKOFF)


def due_ids(
    session: Session, *, now: datetime, channels: Collection[str], limit: int, ids: Collection[int] | None = None
) -> list[int]:
    """Pending rows whose time has come, oldest first."""
    return OutboxRepository(session).due_ids(now=now, channels=channels, limit=limit, ids=ids)


def _claim(session_factory: SessionFactory, message_id: int, now: datetime) -> OutboxRecord | None:
    """Take the row for this drain (None when another drain took it first)."""
    with transaction(session_factory) as session:
        return OutboxRepository(session).claim(message_id, now, LEASE)


def _record(
    session_factory: SessionFactory,
    message: OutboxRecord,
    now: datetime,
    error: SendError | None,
    *,
    max_attempts: int,
    retry_seconds: int,
    give_up_after: timedelta,
) -> str:
    """Write the outcome of one send; returns the new status (sent, pending or failed)."""
    with transaction(session_factory) as session:
        outbox = OutboxRepository(session)
        row = outbox.get(message.id)
        if row is None:  # deleted while we were sending: nothing to record
            return "sent" if error is None else "failed"
        if error is None:
            outbox.mark_sent(row.id, now)
            return "sent"
        if error.permanent or row.attempts >= max_attempts or now - _aware(row.created_at) >= give_up_after:
            outbox.mark_failed(row.id, str(error)[:_ERROR_LIMIT])
            return "failed"
        delay = backoff(row.attempts, retry_seconds)
        if error.retry_after is not None:
            delay = max(delay, timedelta(seconds=error.retry_after))
        outbox.retry_later(row.id, str(error)[:_ERROR_LIMIT], now + delay)
        return "pending"


def _aware(value: datetime) -> datetime:
    """SQLite returns naive UTC datetimes."""
    return value if value.tzinfo is not None else value.replace(tzinfo=UTC)


def undelivered(session: Session, *, now: datetime, older_than: timedelta) -> int:
    """Pending or failed messages queued more than ``older_than`` ago: the figure an alarm watches."""
    return OutboxRepository(session).count_undelivered(now - older_than)


def drain(
    session_factory: SessionFactory,
    *,
    now: datetime | None = None,
    senders: Mapping[str, Sender],
    max_attempts: int = 30,
    retry_seconds: int = 60,
    give_up_after: timedelta = timedelta(hours=48),
    limit: int = 500,
    ids: Collection[int] | None = None,
) -> DrainReport:
    """Send every due pending row whose channel has a sender (only ``ids`` when given); one row at a time.

    Each row is claimed, sent outside any transaction, then marked ``sent``; a failure leaves it ``pending``
    with ``next_attempt_at`` pushed back (``retry_seconds`` doubling per attempt up to six hours, or the sender's
    Retry-After if longer). It is ``failed`` only when retrying cannot help (a permanent error), or once it has
    waited ``give_up_after`` since it was queued (or used ``max_attempts``): an outage of a few hours delays
    messages, it does not lose them, and `chipwise notify retry` still requeues failed ones.
    """
    when = now or utcnow()
    report = DrainReport()
    with reading(session_factory) as session:
        candidates = due_ids(session, now=when, channels=list(senders), limit=limit, ids=ids)
    for message_id in candidates:
        message = _claim(session_factory, message_id, when)
        if message is None:
            continue
        error = _send_one(senders[message.channel], message)
        status = _record(
            session_factory,
            message,
            when,
            error,
            max_attempts=max_attempts,
            retry_seconds=retry_seconds,
            give_up_after=give_up_after,
        )
        _report(report, message, status, error)
    return report


def _send_one(sender: Sender, message: OutboxRecord) -> SendError | None:
    try:
        provider_id = sender.send(message)
    except SendError as exc:
        return exc
    except Exception as exc:  # a sender bug must not stop the other messages; the row keeps the reason
        logger().exception("outbox sender crashed", extra={"outbox_id": message.id})
        return SendError(f"{type(exc).__name__}: {exc}")
    logger().info(
        "notification sent",
        extra={"outbox_id": message.id, "channel": message.channel, "kind": message.kind, "provider_id": provider_id},
    )
    return None


def _report(report: DrainReport, message: OutboxRecord, status: str, error: SendError | None) -> None:
    if status == "sent":
        report.sent.append(message.id)
        return
    assert error is not None
    report.errors[message.id] = str(error)
    (report.failed if status == "failed" else report.retrying).append(message.id)
    logger().warning(
        "notification not sent",
        extra={"outbox_id": message.id, "channel": message.channel, "status": status, "error": str(error)},
    )


# --- status ------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class OutboxStatus:
    """Counts by (channel, status), the failed rows, and the pending rows with their next attempt."""

    counts: dict[tuple[str, str], int]
    failed: list[OutboxRecord]
    pending: list[OutboxRecord]


def outbox_status(session: Session, *, limit: int = 50) -> OutboxStatus:
    outbox = OutboxRepository(session)
    return OutboxStatus(
        counts=outbox.counts(),
        failed=outbox.of_status("failed", order="newest", limit=limit),
        pending=outbox.of_status("pending", order="next_attempt", limit=limit),
    )


def requeue_failed(session: Session, ids: Collection[int] | None = None, *, now: datetime | None = None) -> int:
    """Give failed rows (all, or ``ids``) a fresh set of attempts: for after the cause was fixed."""
    return OutboxRepository(session).requeue_failed(now or utcnow(), ids)
