"""Ingest the bill: the billing periods of an AWS export, read (DuckDB or Athena) and stored, one transaction per
period, each replacing any earlier bill of its payer account and period (from this export or another one).

``chipwise bill ingest`` runs :func:`ingest_bill`; the ``ingest_bill`` Lambda runs :func:`ingest_manifest_object`
on the S3 ObjectCreated event of a period's manifest (delivered after all its data files)."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime, timedelta
from typing import Literal

from chipwise.aws import AwsContext, aws_context
from chipwise.clock import billing_periods, utcnow
from chipwise.collect.bill_export import (
    AthenaTable,
    BillError,
    export_of_manifest_key,
    period_of_manifest_key,
    read_period,
)
from chipwise.collect.bill_export import Engine as BillEngine
from chipwise.models.events import ObjectCreatedEvent, ObjectRef, objects_created
from chipwise.models.results import BillIngestOutcome, StoredBillPeriod
from chipwise.observability import logger
from chipwise.settings import Settings, get_settings
from chipwise.store import SessionFactory, get_session_factory, transaction
from chipwise.store.repositories.bill_writer import PeriodWriter, StoredPeriod
from chipwise.store.schema import require_current_schema


def athena_table(settings: Settings) -> AthenaTable | None:
    if not settings.athena_database or not settings.athena_table:
        return None
    return AthenaTable(
        database=settings.athena_database,
        table=settings.athena_table,
        workgroup=settings.athena_workgroup,
        output_location=settings.athena_output_location,
    )


def window_periods(now: datetime, lookback_days: int) -> list[str]:
    """The billing periods a scan's cost window (the last ``lookback_days`` days before ``now``) touches."""
    end = now.date()
    return billing_periods(end - timedelta(days=lookback_days), end)


def ingest_bill(
    aws: AwsContext | None,
    session_factory: SessionFactory,
    *,
    uri: str,
    periods: Sequence[str],
    engine: BillEngine,
    athena: AthenaTable | None = None,
    now: datetime | None = None,
) -> list[StoredPeriod]:
    """Read and store each billing period, its resource-days written in batches as they are read (each period in
    its own transaction: a bad period stores nothing of itself and stops the run; the periods before it stay
    stored). A period replaces any earlier bill of its payer account and period, whichever export it came from."""
    stored: list[StoredPeriod] = []
    for period in periods:
        with transaction(session_factory) as session:
            writer = PeriodWriter(session, now or utcnow())
            read = read_period(aws, uri, period, engine=engine, athena=athena, sink=writer)
            stored.append(writer.finish(read))
        logger().info(
            "bill period stored",
            extra={
                "period": period,
                "payer": read.payer_account_id,
                "table": read.table,
                "engine": engine,
                "line_items": read.line_items,
                "other_providers": read.other_providers,
            },
        )
    return stored


def ingest_manifest_object(bucket: str, key: str) -> StoredPeriod:
    """One delivered manifest (``<prefix>/<export>/metadata/BILLING_PERIOD=YYYY-MM/<export>-Manifest.json``, or a
    legacy report's ``<prefix>/<report>/yyyymmdd-yyyymmdd/<report>-Manifest.json``): its billing period read with
    the configured engine and stored."""
    found = export_of_manifest_key(key)
    if found is None:
        raise BillError(f"s3://{bucket}/{key}: not a Data Exports or legacy report manifest key")
    export_prefix, period = found
    settings = get_settings()
    require_current_schema(settings.database_url)
    factory = get_session_factory(settings.database_url)
    aws = aws_context(settings.region)
    (stored,) = ingest_bill(
        aws,
        factory,
        uri=f"s3://{bucket}/{export_prefix}",
        periods=[period],
        engine=settings.bill_engine,
        athena=athena_table(settings),
    )
    return stored


def manifests_in_event(created: ObjectCreatedEvent) -> list[ObjectRef]:
    """The Data Exports manifests an "object created" event names (an S3 notification, the EventBridge "Object
    Created" event, or S3 notifications through SQS); data files are ignored (the manifest arrives after them)."""
    return [ref for ref in objects_created(created) if period_of_manifest_key(f"/{ref.key}")]


def ingest_event(created: ObjectCreatedEvent) -> BillIngestOutcome:
    """The ``ingest_bill`` Lambda: each delivered manifest's billing period, stored. A bad export is rejected in
    the answer (retrying cannot mend it); an AWS failure raises, so Lambda retries and the dead-letter queue keeps
    the event."""
    refs = manifests_in_event(created)
    stored: list[StoredBillPeriod] = []
    errors: list[str] = []
    for ref in refs:
        try:
            done = ingest_manifest_object(ref.bucket, ref.key)
        except BillError as exc:
            logger().warning("bill period rejected", extra={"manifest": ref.uri, "error": str(exc)})
            errors.append(str(exc))
            continue
        stored.append(
            StoredBillPeriod(billing_period=done.billing_period, line_items=done.line_items, table=done.table_name)
        )
    status: Literal["stored", "ignored", "rejected"] = (
        "stored" if stored and not errors else ("ignored" if not refs else "rejected" if errors else "stored")
    )
    return BillIngestOutcome(status=status, stored=stored, errors=errors)
