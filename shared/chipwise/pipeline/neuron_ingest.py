"""Ingest neuron-monitor reports from S3 (or a local file) into ``neuron_rollups``.

The ``ingest_neuron`` Lambda, ``chipwise ingest-neuron`` and the demo call these. One bad object never stops the
others: an object that is not JSON lines (or not text) is rejected with a logged reason; malformed lines inside a
good object are counted with their line numbers and the rest is stored.

The account an object belongs to comes from its key (``neuron/<account>/<instance>/...``), else from the
inventory (the instance's ARN), else it is the account the ingester runs in.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable, Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import TypedDict, Unpack

from botocore.exceptions import BotoCoreError, ClientError

from chipwise.aws import AwsContext, aws_context
from chipwise.collect.neuron import (
    MAX_OBJECT_BYTES,
    UnreadableLine,
    aggregate_hourly,
    ids_from_key,
    iter_lines,
    parse_lines,
    stream_lines,
)
from chipwise.errors import InvalidInput, UpstreamError
from chipwise.models.events import ObjectCreatedEvent, objects_created
from chipwise.models.events import ObjectRef as ObjectRef
from chipwise.models.neuron import NeuronIngestResult
from chipwise.models.results import NeuronIngestSummary, RejectedObject
from chipwise.observability import logger
from chipwise.store import Session, SessionFactory, transaction
from chipwise.store.repositories.inventory import ResourceRepository
from chipwise.store.repositories.neuron import NeuronRepository

NEURON_PREFIX = "neuron/"


class Origin(TypedDict, total=False):
    """Where reports come from when a line does not say: the account (else the inventory, else ``home_account``),
    the instance and the time."""

    account_id: str | None
    default_instance_id: str | None
    default_time: datetime | None
    home_account: Callable[[], str] | None


def ingest_text(
    session_factory: SessionFactory, text: str, *, source: str, **origin: Unpack[Origin]
) -> NeuronIngestResult:
    """:func:`ingest_lines` of a text already in memory (a local file, a test)."""
    return ingest_lines(session_factory, iter_lines(text), source=source, **origin)


def ingest_lines(
    session_factory: SessionFactory,
    lines: Iterable[str | UnreadableLine],
    *,
    source: str,
    account_id: str | None = None,
    default_instance_id: str | None = None,
    default_time: datetime | None = None,
    home_account: Callable[[], str] | None = None,
) -> NeuronIngestResult:
    """Parse, aggregate per instance, runtime and hour, and merge into the store (idempotent per ``source``).

    Raises InvalidInput when nothing in ``lines`` is a neuron-monitor report.
    """
    parsed = parse_lines(lines, default_time)
    if not parsed.reports:
        detail = f"{parsed.malformed_count} of {parsed.lines} lines malformed" if parsed.lines else "empty"
        detail += f", more than {parsed.lines:,} lines" if parsed.truncated else ""
        raise InvalidInput(f"{source} is not neuron-monitor JSON lines ({detail})")
    parts = aggregate_hourly(parsed.reports, default_instance_id)
    if not parts:
        raise InvalidInput(f"{source}: no report names its instance or time")
    instances = sorted({p.instance_id for p in parts})
    with transaction(session_factory) as session:
        account = account_id or _account_of(session, instances) or (home_account() if home_account else None)
        if account is None:
            raise InvalidInput(f"{source}: cannot tell which account instance {instances[0]} belongs to")
        rollups = NeuronRepository(session).merge(account, source, parts)
    result = NeuronIngestResult(
        source=source,
        account_id=account,
        accepted=True,
        lines=parsed.lines,
        reports=len(parsed.reports),
        malformed=parsed.malformed,
        malformed_count=parsed.malformed_count,
        truncated=parsed.truncated,
        report_errors=sum(len(r.errors) for r in parsed.reports),
        reports_missing=sum(p.missing_reports for p in parts),
        rollups=rollups,
        instances=instances,
    )
    if parsed.malformed_count:
        logger().warning(
            "malformed neuron-monitor lines skipped",
            extra={"source": source, "lines": [m.line for m in parsed.malformed][:50], "count": parsed.malformed_count},
        )
    if parsed.truncated:
        logger().warning("neuron-monitor object has more lines than are read", extra={"source": source})
    return result


def _account_of(session: Session, instance_ids: list[str]) -> str | None:
    repository = ResourceRepository(session)
    for instance_id in instance_ids:
        resource = repository.by_instance_id(instance_id)
        if resource is not None:
            return resource.account_id
    return None


def ingest_object(
    aws: AwsContext,
    session_factory: SessionFactory,
    ref: ObjectRef,
    *,
    account_id: str | None = None,
    home_account: Callable[[], str] | None = None,
) -> NeuronIngestResult:
    """One S3 object of reports; a rejected object comes back with ``accepted=False`` and the reason, logged.

    The object's size (GetObject's ContentLength, known before the body is read) is checked first; the body is
    then read as a stream (:func:`chipwise.collect.neuron.stream_lines`), never whole."""
    key_account, key_instance = ids_from_key(ref.key)
    try:
        response = aws.client("s3").get_object(Bucket=ref.bucket, Key=ref.key)
        body = response["Body"]
        try:
            size = int(response.get("ContentLength") or 0)
            if size > MAX_OBJECT_BYTES:
                raise InvalidInput(f"{ref.uri} is {size:,} bytes, more than {MAX_OBJECT_BYTES // 2**20} MiB")
            return ingest_lines(
                session_factory,
                stream_lines(body.read),
                source=ref.uri,
                account_id=account_id or key_account,
                default_instance_id=key_instance,
                default_time=response.get("LastModified"),
                home_account=home_account or aws.account_id,
            )
        finally:
            body.close()
    except (InvalidInput, ValueError, ClientError, BotoCoreError) as exc:
        reason = _describe(exc)
        retryable = _retryable(exc)
        logger().warning(
            "neuron-monitor object not ingested", extra={"source": ref.uri, "reason": reason, "retryable": retryable}
        )
        return NeuronIngestResult(source=ref.uri, accepted=False, reason=reason, retryable=retryable)


def _retryable(exc: Exception) -> bool:
    """An object S3 could not give us now (throttled, a server error, denied: a policy can be fixed) is tried again;
    one that is gone or not reports is not."""
    if isinstance(exc, BotoCoreError):
        return True
    if isinstance(exc, ClientError):
        return exc.response.get("Error", {}).get("Code") not in ("NoSuchKey", "NoSuchBucket", "InvalidObjectState")
    return False


def _describe(exc: Exception) -> str:
    if isinstance(exc, ClientError):
        error = exc.response.get("Error", {})
        return f"{error.get('Code', 'Error')}: {error.get('Message', '')}".strip()
    return str(exc)


def list_objects(aws: AwsContext, bucket: str, prefix: str = NEURON_PREFIX) -> Iterator[ObjectRef]:
    for page in aws.client("s3").get_paginator("list_objects_v2").paginate(Bucket=bucket, Prefix=prefix):
        for item in page.get("Contents", []):
            if not item["Key"].endswith("/"):
                yield ObjectRef(bucket, item["Key"])


def ingest_refs(
    aws: AwsContext, session_factory: SessionFactory, refs: Iterable[ObjectRef], account_id: str | None = None
) -> list[NeuronIngestResult]:
    """Every object in turn; one failing object never stops the rest."""
    home = functools.cache(aws.account_id)  # asked once, only if some object's account is not known otherwise
    return [ingest_object(aws, session_factory, ref, account_id=account_id, home_account=home) for ref in refs]


def ingest_prefix(
    aws: AwsContext,
    session_factory: SessionFactory,
    bucket: str,
    prefix: str = NEURON_PREFIX,
    account_id: str | None = None,
) -> list[NeuronIngestResult]:
    """Every object under ``s3://bucket/prefix`` (``chipwise ingest-neuron s3://...`` and the demo)."""
    return ingest_refs(aws, session_factory, list_objects(aws, bucket, prefix), account_id)


def neuron_objects(created: ObjectCreatedEvent) -> list[ObjectRef]:
    """The ``neuron/`` objects an "object created" event names: an S3 notification, the EventBridge "Object
    Created" event, or S3 notifications delivered through SQS (S3's test message names none)."""
    return [ref for ref in objects_created(created) if ref.key.startswith(NEURON_PREFIX)]


def ingest_event(created: ObjectCreatedEvent) -> NeuronIngestSummary:
    """The ``ingest_neuron`` Lambda: every ``neuron/`` object the event names, into the configured store."""
    from chipwise.settings import get_settings
    from chipwise.store import get_session_factory
    from chipwise.store.schema import require_current_schema

    refs = neuron_objects(created)
    settings = get_settings()
    require_current_schema(settings.database_url)
    results = ingest_refs(aws_context(settings.region), get_session_factory(settings.database_url), refs)
    unread = [r.source for r in results if r.retryable]
    if unread:  # fail the invocation: Lambda retries it, and the dead-letter queue keeps it if S3 stays down
        raise UpstreamError(f"{len(unread)} of {len(results)} neuron-monitor objects could not be read: {unread[:5]}")
    return NeuronIngestSummary(
        objects=len(results),
        accepted=sum(1 for r in results if r.accepted),
        rejected=[RejectedObject(source=r.source, reason=r.reason) for r in results if not r.accepted],
        reports=sum(r.reports for r in results),
        malformed_lines=sum(r.malformed_count for r in results),
        rollups=sum(r.rollups for r in results),
    )


def ingest_file(
    path: Path, factory: SessionFactory, account: str | None, home_account: Callable[[], str]
) -> NeuronIngestResult:
    """``chipwise ingest-neuron FILE``: one local JSON-lines file (optionally .gz), read as a stream in bounded
    memory like an S3 object; a file that cannot be read is a rejected result saying why."""
    from chipwise.collect.neuron import ids_from_key, stream_lines
    from chipwise.errors import ChipwiseError

    key_account, key_instance = ids_from_key(path.as_posix())
    source = str(path.resolve())
    try:
        with path.open("rb") as stream:
            return ingest_lines(
                factory,
                stream_lines(stream.read),
                source=source,
                account_id=account or key_account,
                default_instance_id=key_instance,
                default_time=datetime.fromtimestamp(path.stat().st_mtime, UTC),
                home_account=home_account,
            )
    except (ChipwiseError, ValueError, OSError) as exc:
        return NeuronIngestResult(source=source, accepted=False, reason=str(exc))
