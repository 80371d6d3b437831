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
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import date, datetime, timedelta
from decimal import Decimal
from typing import TYPE_CHECKING, Any

from botocore.exceptions import BotoCoreError, ClientError

from chipwise.analyse import ledger as bill_ledger
from chipwise.analyse.verdicts import every_verdict, settle_verdicts
from chipwise.aws import AssumeRole, AwsContext, aws_context
from chipwise.catalog import get_catalog, platform_of
from chipwise.clock import billing_periods, utcnow
from chipwise.collect import costs as cost_collector
from chipwise.collect import metrics, otel_metrics
from chipwise.collect.inventory.registry import inventory_sources
from chipwise.errors import UpstreamError
from chipwise.models.findings import FindingDocument
from chipwise.models.records import CollectedResource, SeriesCoverage
from chipwise.models.resources import EndpointDetails, InferenceComponentDetails, InstanceDetails
from chipwise.models.scan import (
    SCAN_COMPLETED_DETAIL_TYPE,
    SCAN_COMPLETED_SOURCE,
    ScanCompleted,
    ScanCostKind,
    ScanCosts,
    ScanDocument,
    ScanError,
    ScanRequest,
    ScanResource,
    ScanStatus,
    ScanUnknownUsageType,
    ScanUnusedReservation,
    ScanWindow,
)
from chipwise.models.verdicts import ResourceVerdict
from chipwise.observability import logger
from chipwise.pipeline._gc import fewer_collections
from chipwise.rules.registry import rule_title
from chipwise.settings import get_settings
from chipwise.store import Session, SessionFactory, get_session_factory, reading, transaction
from chipwise.store.repositories.accounts import AccountRepository, ScanRepository
from chipwise.store.repositories.bill import BillRepository
from chipwise.store.repositories.inventory import ResourceRepository
from chipwise.store.repositories.usage import (
    NEURON_MONITOR_METRIC,
    NEURON_MONITOR_NAMESPACE,
    CostBreakdown,
    CoverageKey,
    StoredCoverage,
    UsageRepository,
)
from chipwise.store.schema import require_current_schema

if TYPE_CHECKING:
    from chipwise.models.resources import InstanceDetails
from chipwise.models.records import HourlyRollup

StageCallback = Callable[[str], None]
ROLLUP_FLUSH_ROWS = 20_000


@dataclass
class _Run:
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


def scan_error(source: str, exc: BaseException) -> ScanError:
    """A failed source as the scan document records it: the AWS error code when there is one, the first line."""
    code = exc.response.get("Error", {}).get("Code") if isinstance(exc, ClientError) else None
    message = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    return ScanError(source=source, code=code, message=message[:1000])


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
    run = _Run(
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
        _collect_metrics(aws, session_factory, run)
    with _stage(run, "neuron", notify):
        _neuron_coverage(session_factory, run)
    with _stage(run, "rules", notify):
        findings = _evaluate_rules(session_factory, run)
    document = _finish(aws, session_factory, run, findings)
    notify("event")
    _announce(home, session_factory, run, document)
    return document


@contextmanager
def _stage(run: _Run, name: str, notify: StageCallback) -> Iterator[None]:
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


def _open_scan(session_factory: SessionFactory, run: _Run) -> None:
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


def _collect_inventory(aws: AwsContext, session_factory: SessionFactory, run: _Run) -> None:
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


def _choose_cost_source(session_factory: SessionFactory, run: _Run) -> None:
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


def _collect_costs(aws: AwsContext, session_factory: SessionFactory, run: _Run) -> None:
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


def _collect_metrics(aws: AwsContext, session_factory: SessionFactory, run: _Run) -> None:
    """Every metric target, read from where the store leaves off: a (resource, metric) whose coverage says it was
    read up to hour H is read again from H minus the overlap only (``metric_overlap_hours``, for datapoints
    CloudWatch adds late); a new one over the whole window. Coverage is then counted over the whole window from the
    store, so the profile still spans the full window."""
    try:
        discovered = metrics.discover_series(aws, run.resources)
    except AWS_ERRORS as exc:
        run.fail("metrics.list_metrics", exc)
        discovered = metrics.Discovered()
    targets = metrics.plan_targets(run.resources, discovered)
    run.counts["gpu_agent_matched_by"] = metrics.agent_match_counts(run.resources, discovered)
    settings = get_settings()
    prior: dict[CoverageKey, StoredCoverage] = {}
    if run.incremental:
        with transaction(session_factory) as session:
            prior = UsageRepository(session).coverage_windows(run.account_id, run.region)
    last_read = {
        target_index: end
        for target_index, target in enumerate(targets)
        if (found := prior.get((run.resource_ids[target.resource_key], target.spec.namespace, target.spec.metric)))
        and (end := found[0]) > run.metric_start
    }
    groups = metrics.read_starts(
        targets, last_read, run.metric_start, run.metric_end, timedelta(hours=settings.metric_overlap_hours)
    )
    buffered: list[HourlyRollup] = []
    read: list[SeriesCoverage] = []

    def write(rollups: list[HourlyRollup], coverage: list[SeriesCoverage]) -> None:
        buffered.extend(rollups)
        read.extend(coverage)
        if len(buffered) >= ROLLUP_FLUSH_ROWS:
            with transaction(session_factory) as session:
                UsageRepository(session).save_rollups(buffered, run.resource_ids)
            buffered.clear()

    try:  # OTel Container Insights (PromQL) for the EKS nodes classic Container Insights has no series for
        args = (run.resources, discovered, run.metric_start, run.metric_end, write)
        if (otel := otel_metrics.collect_otel_metrics(aws, *args)) is not None:
            run.counts["otel_metrics"] = otel
    except UpstreamError as exc:
        run.fail("metrics.promql", exc)
    totals = metrics.MetricsResult()
    listing = metrics.AgentListing(aws)
    try:
        for start, group in groups:
            queried = _only_listed(group, listing, start, run)
            result = metrics.collect_metrics(aws, queried, start, run.metric_end, write)
            totals.calls += result.calls
            totals.queries += result.queries
            totals.datapoints += result.datapoints
            totals.rollups += result.rollups
    except AWS_ERRORS as exc:
        run.fail("metrics", exc)
    finally:
        with transaction(session_factory) as session:
            if buffered:
                UsageRepository(session).save_rollups(buffered, run.resource_ids)
            _save_window_coverage(session, run, read, prior)
    incremental = sum(len(group) for start, group in groups if start > run.metric_start)
    run.counts |= {
        "metric_queries": totals.queries,
        "datapoints": totals.datapoints,
        "rollups": totals.rollups,
        "metric_targets_incremental": incremental,
        "metric_targets_full": len(targets) - incremental,
    }


def _only_listed(
    group: list[metrics.MetricTarget], listing: metrics.AgentListing, start: datetime, run: _Run
) -> list[metrics.MetricTarget]:
    """The group without the optional agents' series ListMetrics does not list; every series when it cannot list
    them (nothing is lost: the series are read as before)."""
    try:
        return metrics.only_listed(group, listing, start, run.metric_end)
    except AWS_ERRORS as exc:
        logger().warning("ListMetrics failed: every agent series is read", extra={"error": str(exc)[:500]})
        return group


def _save_window_coverage(
    session: Session, run: _Run, read: list[SeriesCoverage], prior: dict[CoverageKey, StoredCoverage]
) -> None:
    """Coverage over the whole window for the targets read: hours with data counted in the store, and a metric
    that existed earlier in the window still exists."""
    if not read:
        return
    window = (run.metric_start, run.metric_end)
    stored = UsageRepository(session).stored_hours(run.account_id, run.region, *window)
    merged = []
    for c in read:
        key = (run.resource_ids[c.resource_key], c.namespace, c.metric)
        hours = stored.get(key, 0)
        earlier = prior.get(key)
        existed = earlier is not None and earlier[1] and earlier[0] > run.metric_start
        merged.append(SeriesCoverage(c.resource_key, c.namespace, c.metric, c.exists or existed or hours > 0, hours))
    UsageRepository(session).save_coverage(merged, run.resource_ids, window, run.now, stored=prior)


def _neuron_coverage(session_factory: SessionFactory, run: _Run) -> None:
    """SeriesCoverage rows saying which EC2 Neuron instances have neuron-monitor reports in the window."""
    neuron = {
        r.details.instance_id: r.key
        for r in run.resources
        if isinstance(r.details, InstanceDetails) and r.platform in ("inferentia", "trainium")
    }
    if not neuron:
        return
    from chipwise.store.repositories.neuron import NeuronRepository  # Neuron instances only

    with transaction(session_factory) as session:
        hours = NeuronRepository(session).hours_by_instance(run.account_id, neuron, run.metric_start, run.metric_end)
        coverage = [
            SeriesCoverage(
                arn, NEURON_MONITOR_NAMESPACE, NEURON_MONITOR_METRIC, hours.get(iid, 0) > 0, hours.get(iid, 0)
            )
            for iid, arn in neuron.items()
        ]
        UsageRepository(session).save_coverage(coverage, run.resource_ids, (run.metric_start, run.metric_end), run.now)
    run.counts["neuron_instances_reporting"] = sum(1 for h in hours.values() if h)


def _evaluate_rules(session_factory: SessionFactory, run: _Run) -> list[FindingDocument]:
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


def _document(aws: AwsContext, session: Session, run: _Run, findings: Sequence[FindingDocument]) -> ScanDocument:
    resources = [_scan_resource(r) for r in sorted(run.resources, key=lambda r: (r.kind, r.name, r.key))]
    if run.cost_source == "bill":
        costs = _bill_costs(session, run, resources, findings)
    else:
        total, by_type = UsageRepository(session).cost_totals(
            run.account_id, run.cost_start, run.cost_end, region=run.region
        )
        breakdown = UsageRepository(session).cost_breakdown(
            run.account_id, run.cost_start, run.cost_end, region=run.region
        )
        days = UsageRepository(session).stored_cost_days(run.account_id, run.cost_start, run.cost_end)
        costs = _scan_costs(total, by_type, breakdown, days_covered=len(days))
    return ScanDocument(
        scan_id=run.scan_id,
        account_id=run.account_id,
        region=run.region,
        status=run.status,
        started_at=run.started_at,
        finished_at=utcnow(),
        window=ScanWindow(start=run.cost_start, end=run.cost_end),
        as_of=run.now,
        resources=resources,
        costs=costs,
        api_calls=aws.counter.snapshot(),
        findings=list(findings),
        errors=list(run.errors),
        verdicts=settle_verdicts(every_verdict(run.verdicts, resources), findings, rule_title),
    )


UNKNOWN_USAGE_TYPES_LISTED = 20


def _bill_costs(
    session: Session, run: _Run, resources: list[ScanResource], findings: Sequence[FindingDocument]
) -> ScanCosts:
    """The costs section from the stored bill (:mod:`chipwise.analyse.ledger`): each resource it names at its own
    effective cost and rate, spend = attributed + not attributed, and the resources it lacks."""
    settings = get_settings()
    bills, apart, days = BillRepository(session).window_bill(
        run.account_id, run.cost_start, run.cost_end, run.bill_periods, region=run.region
    )
    window = bill_ledger.bill_window(bills, apart, days, run.cost_start, run.cost_end)
    collected = {r.key: r for r in run.resources}
    bill_ledger.price_from_bill(
        resources, collected, bills, team_keys=settings.team_tag_keys, owner_keys=settings.owner_tag_keys
    )
    missing = bill_ledger.not_in_bill(
        resources, collected, findings, get_catalog(), region=run.region, last_day=window.last_day
    )
    return bill_ledger.bill_costs(window, run.bill_periods, missing)


def _scan_costs(
    total: Decimal, by_type: dict[str, Decimal], breakdown: CostBreakdown, *, days_covered: int
) -> ScanCosts:
    """The costs section: totals, every usage kind with its treatment (and why an ignored one is not attributed),
    the capacity reserved and not used, and the usage types the catalog does not know (counted, largest listed)."""
    kinds = [
        ScanCostKind(
            kind=k.kind,
            treatment=k.treatment,
            usd=k.unblended,
            usage_types=len(k.usage_types),
            reason=k.reason,
        )
        for k in breakdown.by_kind.values()
    ]
    unused = []
    for line in breakdown.unused_reservations.values():
        platform = platform_of(line.instance_type)
        unused.append(
            ScanUnusedReservation(
                instance_type=line.instance_type,
                platform=platform,
                accelerator=platform is not None and platform not in ("cpu", "other"),
                hours=line.hours,
                usd=line.unblended,
                usage_types=sorted(line.usage_types),
            )
        )
    unknown = sorted(breakdown.unknown_usage_types.items(), key=lambda kv: (-kv[1], kv[0]))
    return ScanCosts(
        total_usd=total,
        by_instance_type=by_type,
        kinds=kinds,
        unused_reservations=sorted(unused, key=lambda u: (not u.accelerator, -u.usd, u.instance_type)),
        unknown_usage_types_count=len(unknown),
        unknown_usage_types=[
            ScanUnknownUsageType(usage_type=t, usd=usd) for t, usd in unknown[:UNKNOWN_USAGE_TYPES_LISTED]
        ],
        days_covered=days_covered,
    )


def _scan_resource(resource: CollectedResource) -> ScanResource:
    details = resource.details
    shared = details if isinstance(details, EndpointDetails | InferenceComponentDetails) else None
    return ScanResource(
        id=resource.key,
        arn=resource.arn,
        variant=resource.variant,
        kind=resource.kind,
        name=resource.name,
        instance_type=resource.instance_type,
        instance_count=resource.instance_count,
        platform=resource.platform,
        state=resource.state,
        unknown_instance_type=resource.unknown_instance_type,
        hints=resource.hints.model_dump(mode="json"),
        billed_instances=shared.billed_instances if shared else None,
        cost_basis=shared.cost_basis if shared else None,
    )


def _finish(
    aws: AwsContext, session_factory: SessionFactory, run: _Run, findings: Sequence[FindingDocument]
) -> ScanDocument:
    with transaction(session_factory) as session:
        document = _document(aws, session, run, findings)
        _store_document(session, run, document)
    return document


def _store_document(session: Session, run: _Run, document: ScanDocument) -> None:
    ScanRepository(session).finish(
        run.scan_id,
        status=document.status,
        finished_at=document.finished_at,
        resource_count=len(document.resources),
        api_calls=document.api_calls,
        timings={**run.timings, "counts": run.counts, "cpu": run.cpu},
        errors=[e.model_dump() for e in document.errors],
        document_json=document.model_dump_json(),
    )
    AccountRepository(session).scanned(run.account_id, document.finished_at)


def _announce(home: AwsContext, session_factory: SessionFactory, run: _Run, document: ScanDocument) -> None:
    """Put ScanCompleted on the bus of Chipwise's own account (``home``); a failure (a missing bus, a rejected entry)
    becomes an error of the stored scan. Without a bus (a local run) nothing is published."""
    bus = get_settings().event_bus_name
    if not bus:
        return
    event = ScanCompleted(
        scan_id=document.scan_id,
        account_id=document.account_id,
        region=document.region,
        status=document.status,
        finished_at=document.finished_at,
        findings=len(document.findings),
        # first seen by this scan: stamped with the scan's ``now`` (given explicitly by the demo and tests), not the
        # wall clock it started at
        new_finding_ids=[f.finding_id for f in document.findings if f.first_seen >= run.now],
    )
    error = _put_event(home, bus, event)
    if error is None:
        return
    run.record(error)
    document.errors.append(error)
    document.status = run.status
    with transaction(session_factory) as session:
        _store_document(session, run, document)


def _put_event(home: AwsContext, bus: str, event: ScanCompleted) -> ScanError | None:
    """One PutEvents entry; the error when the call fails or EventBridge rejects the entry (it answers 200 with a
    per-entry error code), else None."""
    source = f"events.{bus}"
    entry = {
        "Source": SCAN_COMPLETED_SOURCE,
        "DetailType": SCAN_COMPLETED_DETAIL_TYPE,
        "Detail": event.model_dump_json(),
        "EventBusName": bus,
    }
    try:
        response = home.client("events").put_events(Entries=[entry])  # type: ignore[list-item]
    except AWS_ERRORS as exc:
        return scan_error(source, exc)
    rejected = [e for e in response.get("Entries", []) if e.get("ErrorCode")]
    if not rejected and not response.get("FailedEntryCount"):
        return None
    first = rejected[0] if rejected else {}
    message = first.get("ErrorMessage") or "PutEvents rejected the entry"
    return ScanError(source=source, code=first.get("ErrorCode", "PutEventsFailed"), message=message[:1000])


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
    code = exc.response.get("Error", {}).get("Code") if isinstance(exc, ClientError) else type(exc).__name__
    message = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    error = ScanError(source=failed_start_source(exc), code=code, message=message[:1000])
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
    logger().error("scan could not start", extra={"source": error.source, "code": code, "region": region})
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
