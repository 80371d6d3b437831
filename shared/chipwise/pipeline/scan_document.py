"""The scan's outcome: its document (the resources, the costs from the bill or Cost Explorer, the findings and one
verdict per resource) stored on the ``scans`` row, and ``ScanCompleted`` put on Chipwise's bus."""

from __future__ import annotations

from collections.abc import Sequence
from decimal import Decimal

from chipwise.analyse import ledger as bill_ledger
from chipwise.analyse.verdicts import every_verdict, settle_verdicts
from chipwise.aws import AwsContext
from chipwise.catalog import get_catalog, platform_of
from chipwise.clock import utcnow
from chipwise.models.findings import FindingDocument
from chipwise.models.records import CollectedResource
from chipwise.models.resources import EndpointDetails, InferenceComponentDetails, InstanceDetails, resource_key
from chipwise.models.scan import (
    SCAN_COMPLETED_DETAIL_TYPE,
    SCAN_COMPLETED_SOURCE,
    ScanCompleted,
    ScanCostKind,
    ScanCosts,
    ScanDocument,
    ScanError,
    ScanResource,
    ScanUnknownUsageType,
    ScanUnusedReservation,
    ScanWindow,
)
from chipwise.pipeline.scan_run import AWS_ERRORS, ScanRun, scan_error
from chipwise.rules.titles import rule_title
from chipwise.settings import get_settings
from chipwise.store import Session, SessionFactory, transaction
from chipwise.store.repositories.accounts import AccountRepository, ScanRepository
from chipwise.store.repositories.bill import BillRepository
from chipwise.store.repositories.inventory import ResourceRepository
from chipwise.store.repositories.usage import CostBreakdown, UsageRepository


def _document(aws: AwsContext, session: Session, run: ScanRun, findings: Sequence[FindingDocument]) -> ScanDocument:
    resources = [_scan_resource(r) for r in sorted(run.resources, key=lambda r: (r.kind, r.name, r.key))]
    _judged_on(session, run, resources)
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


def _judged_on(session: Session, run: ScanRun, resources: list[ScanResource]) -> None:
    """Each EC2 instance a live Batch compute environment launched names the environment (``judged_on``): the tie
    the rules read (:meth:`ResourceRepository.batch_launched`, the same statement), whatever priced the scan. In a
    scan the bill priced, ``billed_on`` names it too when the bill names the instance (:mod:`chipwise.analyse.ledger`).
    Fills ``resources`` in place."""
    launchers = ResourceRepository(session).batch_launchers(run.account_id, run.region)
    if not launchers:
        return
    collected = {r.key: r for r in run.resources}
    for resource in resources:
        details = collected[resource.id].details
        if resource.kind != "ec2_instance" or not isinstance(details, InstanceDetails) or not details.instance_id:
            continue
        launcher = launchers.get(details.instance_id.lower())
        if launcher is not None:
            resource.judged_on = resource_key(launcher[1], None)


UNKNOWN_USAGE_TYPES_LISTED = 20


def _bill_costs(
    session: Session, run: ScanRun, resources: list[ScanResource], findings: Sequence[FindingDocument]
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


def finish_scan(
    aws: AwsContext, session_factory: SessionFactory, run: ScanRun, findings: Sequence[FindingDocument]
) -> ScanDocument:
    with transaction(session_factory) as session:
        document = _document(aws, session, run, findings)
        _store_document(session, run, document)
    return document


def _store_document(session: Session, run: ScanRun, document: ScanDocument) -> None:
    ScanRepository(session).finish(
        run.scan_id,
        status=document.status,
        finished_at=document.finished_at,
        resource_count=len(document.resources),
        api_calls=document.api_calls,
        timings={**run.timings, "counts": run.counts, "cpu": run.cpu},
        errors=[e.model_dump() for e in document.errors],
        document_json=document.model_dump_json(),
        verdicts=held_verdicts(document),
    )
    AccountRepository(session).scanned(run.account_id, document.finished_at)


def held_verdicts(document: ScanDocument) -> list[tuple[str, str | None, str]]:
    """The document's verdicts as their rows need them (resource id, its resource's team, verdict), from the
    document the stage holds: its JSON is not decoded again."""
    teams = {r.id: r.team for r in document.resources}
    return [(v.resource_id, teams.get(v.resource_id), v.verdict) for v in document.verdicts]


def announce(home: AwsContext, session_factory: SessionFactory, run: ScanRun, document: ScanDocument) -> None:
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
