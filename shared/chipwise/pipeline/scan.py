"""The scan: one account and region, collected, stored, judged by the rules and announced.

``chipwise scan`` and the ``scan_account`` Lambda both run :func:`run_scan`. Stages, each in its own transaction
so what was collected stays collected:

1. inventory (EC2, SageMaker endpoints and training jobs, Batch), stored by ARN;
2. costs: one Cost Explorer query shape, only the days not stored yet plus the last days CE still revises;
3. metrics: packed GetMetricData from where the store leaves off (the whole look-back window for a resource never
   read, else the last read hour minus a small overlap), hourly rollups and coverage over the whole window;
4. Neuron: which EC2 Neuron instances have neuron-monitor rollups (ingested from S3 by ``ingest_neuron``);
5. rules (:func:`chipwise.rules.evaluate_account`), the scan document on the ``scans`` row, and a
   ``ScanCompleted`` event on the Chipwise bus when one is configured (deployed; a local run publishes nothing).

A source that fails after the clients' retries is recorded as an error and the scan goes on: ``partial``.
The scan is ``failed`` when no inventory could be read at all. Running the same scan twice leaves the same rows.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import datetime, timedelta

from botocore.exceptions import BotoCoreError, ClientError

from chipwise.aws import AssumeRole, AwsContext, aws_context
from chipwise.clock import billing_periods, utcnow
from chipwise.collect import costs as cost_collector
from chipwise.collect import metrics
from chipwise.collect.inventory.registry import inventory_sources
from chipwise.errors import UpstreamError
from chipwise.models.findings import FindingDocument
from chipwise.models.records import CollectedResource
from chipwise.models.scan import ScanDocument, ScanError, ScanRequest
from chipwise.observability import logger
from chipwise.pipeline._gc import fewer_collections
from chipwise.pipeline.scan_document import announce, finish_scan
from chipwise.pipeline.scan_metrics import collect_metrics, neuron_coverage
from chipwise.pipeline.scan_run import AWS_ERRORS, ScanRun, failed_start_source, record_failed_start, scan_error
from chipwise.settings import get_settings
from chipwise.store import SessionFactory, get_session_factory, reading, transaction
from chipwise.store.repositories.accounts import AccountRepository, ScanRepository
from chipwise.store.repositories.bill import BillRepository
from chipwise.store.repositories.inventory import ResourceRepository
from chipwise.store.repositories.usage import UsageRepository
from chipwise.store.schema import require_current_schema

__all__ = [
    "AWS_ERRORS",
    "failed_start_source",
    "record_failed_start",
    "run_scan",
    "scan_account_request",
    "scan_error",
]

StageCallback = Callable[[str], None]


def run_scan(
    aws: AwsContext,
    session_factory: SessionFactory,
    *,
    account_id: str | None = None,
    region: str,
    now: datetime | None = None,
    lookback_days: int | None = None,
    on_stage: StageCallback | None = None,
    incremental: bool | None = None,
    home: AwsContext | None = None,
) -> ScanDocument:
    """Scan one account and region (account from STS when None); returns the stored scan document. ``home`` is
    Chipwise's own account, whose bus ScanCompleted goes on: ``aws`` itself unless the scan assumed a member role."""
    with fewer_collections():
        return _scan(aws, session_factory, account_id, region, now, lookback_days, on_stage, incremental, home or aws)


def _scan(
    aws: AwsContext,
    session_factory: SessionFactory,
    account_id: str | None,
    region: str,
    now: datetime | None,
    lookback_days: int | None,
    on_stage: StageCallback | None,
    incremental: bool | None,
    home: AwsContext,
) -> ScanDocument:
    started_at = utcnow()
    now = now or started_at
    lookback = lookback_days or get_settings().lookback_days
    if account_id is None:
        try:
            account_id = aws.account_id()
        except AWS_ERRORS as exc:  # throttled or denied GetCallerIdentity: the scan cannot start, and says why
            return record_failed_start(session_factory, account_id=None, region=region, exc=exc, lookback_days=lookback)
    metric_start, metric_end = metrics.metric_window(now, lookback)
    cost_end = now.date()
    run = ScanRun(
        scan_id=str(uuid.uuid4()),
        account_id=account_id,
        region=region,
        started_at=started_at,
        now=now,
        metric_start=metric_start,
        metric_end=metric_end,
        cost_start=cost_end - timedelta(days=lookback),
        cost_end=cost_end,
        lookback_days=lookback,
        incremental=get_settings().incremental_metrics if incremental is None else incremental,
    )
    notify = on_stage or (lambda _stage: None)
    _open_scan(session_factory, run)
    with _stage(run, "inventory", notify):
        _collect_inventory(aws, session_factory, run)
    with _stage(run, "costs", notify):
        _collect_costs(aws, session_factory, run)
    with _stage(run, "metrics", notify):
        collect_metrics(aws, session_factory, run)
    with _stage(run, "neuron", notify):
        neuron_coverage(session_factory, run)
    with _stage(run, "rules", notify):
        findings = _evaluate_rules(session_factory, run)
    document = finish_scan(aws, session_factory, run, findings)
    notify("event")
    announce(home, session_factory, run, document)
    return document


@contextmanager
def _stage(run: ScanRun, name: str, notify: StageCallback) -> Iterator[None]:
    notify(name)
    started = time.perf_counter()
    cpu = time.process_time()
    try:
        yield
    finally:
        run.timings[name] = round(time.perf_counter() - started, 3)
        run.cpu[name] = round(time.process_time() - cpu, 3)


# A scan runs in a Lambda with a 15-minute limit: one still "running" an hour after it started was killed or timed
# out, and the next scan of that account and region says so.
ABANDONED_AFTER = timedelta(hours=1)


def _open_scan(session_factory: SessionFactory, run: ScanRun) -> None:
    with transaction(session_factory) as session:
        AccountRepository(session).ensure(run.account_id)
        scans = ScanRepository(session)
        abandoned = scans.mark_abandoned(
            run.account_id, run.region, started_before=run.started_at - ABANDONED_AFTER, at=run.started_at
        )
        if abandoned:
            logger().warning("scans marked abandoned", extra={"count": abandoned})
        scans.open(
            run.scan_id,
            run.account_id,
            run.region,
            started_at=run.started_at,
            window_start=run.cost_start,
            window_end=run.cost_end,
        )


def _collect_inventory(aws: AwsContext, session_factory: SessionFactory, run: ScanRun) -> None:
    """Every inventory source; a source is failed only when its listing fails, and only a source that completed
    marks resources gone (a listed resource it could not describe is a per-resource error, never gone)."""
    found: list[CollectedResource] = []
    listed: set[str] = set()
    complete_kinds: list[str] = []
    keep_children_of: set[str] = set()
    keep_names: set[tuple[str, str]] = set()
    for inventory_source in inventory_sources():
        source, kinds = inventory_source.name, inventory_source.kinds
        try:
            result = inventory_source.collect(aws, run.account_id, run.metric_start)
        except AWS_ERRORS as exc:
            run.fail(source, exc)
            continue
        found.extend(result.resources)
        listed |= result.listed_arns
        keep_children_of |= result.keep_children_of
        keep_names |= result.undescribed_names
        for problem in result.problems:
            kept = "recorded with what is known" if problem.recorded else "not described this scan"
            run.errors.append(
                ScanError(source=f"{source}:{problem.name}", code=problem.code, message=f"{problem.message} ({kept})")
            )
            logger().warning("resource not fully described", extra={"source": source, "code": problem.code})
        complete_kinds.extend(kinds)
        run.inventory_ok += 1
    run.resources = found
    with transaction(session_factory) as session:
        repository = ResourceRepository(session)
        run.resource_ids = repository.save(run.account_id, run.region, found, run.scan_id, run.now)
        described = {r.key for r in found}
        seen = described | listed
        undescribed = listed - described  # listed, not described: its stored variants are kept too
        keep = undescribed | keep_children_of
        gone = repository.mark_gone(run.account_id, run.region, complete_kinds, seen, run.now, keep, keep_names)
    run.counts["resources"] = len(found)
    run.counts["gone"] = gone


def _choose_cost_source(session_factory: SessionFactory, run: ScanRun) -> None:
    """``cost_source``: auto prices from the stored bill when it has the account in every billing period the
    window touches, else from Cost Explorer; bill only from the bill (an error when it does not cover the window);
    cost_explorer only from Cost Explorer."""
    wanted = get_settings().cost_source
    if wanted == "cost_explorer":
        return
    periods = billing_periods(run.cost_start, run.cost_end)
    with reading(session_factory) as session:
        have = BillRepository(session).periods_with_account(run.account_id, periods)
    if set(periods) <= have:
        run.cost_source, run.bill_periods = "bill", periods
        return
    if wanted == "bill":
        run.cost_source, run.bill_periods = "bill", sorted(have)
        missing = ", ".join(p for p in periods if p not in have)
        run.errors.append(
            ScanError(
                source="costs.bill",
                code="BillNotCovering",
                message=f"cost_source is bill but the stored bill lacks {run.account_id} in {missing}: "
                "run `chipwise bill ingest`",
            )
        )


def _collect_costs(aws: AwsContext, session_factory: SessionFactory, run: ScanRun) -> None:
    _choose_cost_source(session_factory, run)
    if run.cost_source == "bill":  # the bill prices this scan: no Cost Explorer call
        run.counts["cost_records"] = 0
        return
    with transaction(session_factory) as session:
        stored = UsageRepository(session).stored_cost_days(run.account_id, run.cost_start, run.cost_end)
    wanted = cost_collector.days_to_fetch(run.cost_start, run.cost_end, stored, today=run.now.date())
    if wanted is None:
        run.counts["cost_records"] = 0
        return
    try:
        records = cost_collector.fetch_cost_records(aws, *wanted)
    except AWS_ERRORS as exc:
        run.fail("costs", exc)
        return
    with transaction(session_factory) as session:
        run.counts["cost_records"] = UsageRepository(session).save_cost_records(run.account_id, records, run.now)


def _evaluate_rules(session_factory: SessionFactory, run: ScanRun) -> list[FindingDocument]:
    try:
        from chipwise.pipeline.evaluate import assess_account

        with transaction(session_factory) as session:
            findings, run.verdicts = assess_account(
                session,
                account_id=run.account_id,
                region=run.region,
                now=run.now,
                lookback_days=run.lookback_days,
                scan_id=run.scan_id,
                bill=run.cost_source == "bill",
            )
    except Exception as exc:  # a rule bug must not lose the collected data: recorded, the scan is partial
        logger().exception("rules failed")
        run.fail("rules", exc)
        return []
    try:
        from chipwise.pipeline.realised import measure_realised

        with transaction(session_factory) as session:
            run.counts["realised_measured"] = measure_realised(
                session, account_id=run.account_id, region=run.region, now=run.now
            )
    except Exception as exc:  # the findings stand; the realised savings wait for the next scan
        logger().exception("realised savings failed")
        run.fail("realised", exc)
    return list(findings)


def scan_account_request(request: ScanRequest) -> ScanDocument:
    """One message of the scan queue: assume the member role when given (with the ExternalId from this function's
    own settings: it never travels in messages), check the identity it gave, scan, store, announce.

    The assumed identity must be the account the message names before anything is written: a message that says
    A but leads to B fails alone and writes nothing."""
    settings = get_settings()
    role = AssumeRole(request.role_arn, settings.external_id) if request.role_arn else None
    require_current_schema(settings.database_url)
    factory = get_session_factory(settings.database_url)
    done = _scanned_today(factory, request)
    if done is not None:
        logger().info("already scanned today", extra={"scan_id": done.scan_id, "region": request.region})
        return done
    try:
        aws = aws_context(request.region, role)
        identity = aws.account_id()  # every message, role or not: one GetCallerIdentity before anything is written
    except (ClientError, BotoCoreError) as exc:  # the role cannot be assumed or the identity call failed
        record_failed_start(
            factory,
            account_id=request.account_id,
            region=request.region,
            exc=exc,
            lookback_days=settings.lookback_days,
            role_arn=request.role_arn,
        )
        how = f"assume {request.role_arn} for" if role else "confirm the identity of"
        raise UpstreamError(f"cannot {how} {request.account_id}: {exc}") from exc
    if identity != request.account_id:
        # Never scan one account's resources under another's id: they would overwrite its inventory and resolve
        # its findings. Logged with the two account ids only (no credentials, no ExternalId).
        logger().error(
            "scan message names another account than its credentials act in: nothing scanned or written",
            extra={
                "account_id": request.account_id,
                "credentials_account_id": identity,
                "region": request.region,
                "assumed_role": role is not None,
            },
        )
        via = "the role for" if role else "the credentials (no role_arn) for"
        raise UpstreamError(f"{via} {request.account_id} answered as another account: nothing scanned or written")
    if request.role_arn:
        with transaction(factory) as session:
            AccountRepository(session).ensure(request.account_id, role_arn=request.role_arn)
    home = aws_context(request.region) if role else aws  # the bus is in Chipwise's own account
    return run_scan(aws, factory, account_id=request.account_id, region=request.region, home=home)


def _scanned_today(factory: SessionFactory, request: ScanRequest) -> ScanDocument | None:
    """The document of today's (UTC) completed scan of this account and region, if there is one: a duplicate
    message (a replayed schedule) scans nothing twice."""
    midnight = utcnow().replace(hour=0, minute=0, second=0, microsecond=0)
    with reading(factory) as session:
        row = ScanRepository(session).latest_started_since(request.account_id, request.region, midnight)
        return ScanDocument.model_validate(row.document) if row is not None and row.document else None
