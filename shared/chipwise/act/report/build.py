"""The HTML scan report: what the store knows about one scan of one account and region, drawn in one static file.

* The totals: the one headline (measured apart from estimated), the scan window's spend from Cost Explorer and its
  run rate over 730 hours.
* Waste by rule, and the spend and savings of every stored scan of the account and region (the trend).
* Per top finding, an hours × days heat-map of the best utilisation metric stored for its resource (Chipwise's
  Neuron agent, then Container Insights, the CloudWatch agent's GPU metric, SageMaker's GPU metric, then CPU), and
  every finding's evidence.

A figure the store does not hold is said to be unknown, never guessed.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, time, timedelta
from decimal import Decimal
from pathlib import Path
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from chipwise.act.report.charts import Bar, HeatMap, Trend, bars, heat_map, trend
from chipwise.act.report.naming import report_filename
from chipwise.economics import per_month, usd
from chipwise.errors import InvalidInput, NotFound
from chipwise.models.findings import FindingDocument
from chipwise.models.scan import ScanDocument
from chipwise.presentation import (
    Headline,
    best_saving,
    console_url,
    counts_in_totals,
    current_capacity,
    headline,
    next_step,
    rank,
    rule_label,
    saving_facts,
    short_id,
    suppress_command,
)
from chipwise.render import render
from chipwise.store.repositories.findings import OPEN, WITHDRAWN, FindingRepository, finding_document
from chipwise.store.repositories.remediations import RemediationRepository, RulePrecision, alert_precision
from chipwise.store.tables import MetricRollup, NeuronRollup, Resource, Scan

HEAT_MAPS = 4  # top findings drawn as heat-maps
MIN_SCAN_PREFIX = 6

# (namespace, metric, label), best first: accelerator utilisation before CPU.
UTILISATION_SOURCES: tuple[tuple[str, str, str], ...] = (
    ("Chipwise/Neuron", "NeuronCoreUtilization", "NeuronCore utilisation (Chipwise Neuron agent)"),
    ("ContainerInsights", "node_neuroncore_utilization", "NeuronCore utilisation (Container Insights)"),
    ("CWAgent", "nvidia_smi_utilization_gpu", "GPU utilisation (CloudWatch agent)"),
    ("/aws/sagemaker/Endpoints", "GPUUtilization", "GPU utilisation (SageMaker; 100 per GPU)"),
    ("/aws/sagemaker/TrainingJobs", "GPUUtilization", "GPU utilisation (SageMaker training; 100 per GPU)"),
    ("AWS/EC2", "CPUUtilization", "CPU utilisation (EC2; no accelerator metric stored)"),
    ("/aws/sagemaker/Endpoints", "CPUUtilization", "CPU utilisation (SageMaker; no accelerator metric stored)"),
    ("/aws/sagemaker/TrainingJobs", "CPUUtilization", "CPU utilisation (training; no accelerator metric stored)"),
)


@dataclass(frozen=True)
class FindingView:
    document: FindingDocument
    short_id: str
    rule_label: str
    saving: str
    measured: bool
    counted: bool
    next_step: str
    console_url: str
    suppress_command: str
    evidence: list[tuple[str, str]]
    capacity: str = ""  # "ml.g5.2xlarge ×4", an inference component's copies
    heat: HeatMap | None = None
    heat_missing: str | None = None


@dataclass(frozen=True)
class TrendRow:
    label: str
    spend_per_month: Decimal | None
    savings: Decimal


@dataclass(frozen=True)
class AuditRow:
    """One apply, refusal, rollback or dismissal of the last 30 days (``chipwise findings apply`` / Slack)."""

    at: datetime
    short_id: str
    resource: str
    rule_label: str
    event: str
    status: str
    who: str
    calls: str
    result: str


@dataclass(frozen=True)
class ReportView:
    account_id: str
    region: str
    scan_id: str
    scan_status: str
    started_at: datetime
    generated_at: datetime
    window_start: date
    window_end: date
    headline: Headline
    spend: Decimal | None  # Cost Explorer, the scan window
    spend_per_month: Decimal | None
    by_rule: list[Bar]
    findings: list[FindingView]
    trend: Trend
    trend_rows: list[TrendRow]
    scans: int
    audit: list[AuditRow] = field(default_factory=list)
    precision: list[RulePrecision] = field(default_factory=list)

    @property
    def filename(self) -> str:
        return report_filename(self.account_id, self.region, self.started_at)


# --- loading -------------------------------------------------------------------------------------------------------


def find_scan(
    session: Session, *, scan_id: str | None = None, account_id: str | None = None, region: str | None = None
) -> Scan:
    """The scan to report: by id (or a prefix of six characters or more), else the latest finished one."""
    if scan_id:
        scan = session.get(Scan, scan_id)
        if scan is None and len(scan_id) >= MIN_SCAN_PREFIX:
            matches = list(session.scalars(select(Scan).where(Scan.id.startswith(scan_id, autoescape=True)).limit(2)))
            if len(matches) > 1:
                raise InvalidInput(f"{scan_id!r} matches several scans: give more of the id")
            scan = matches[0] if matches else None
        if scan is None:
            raise NotFound(f"no scan {scan_id!r}: `chipwise report` without --scan reports the latest")
        return scan
    stmt = select(Scan).where(Scan.status.in_(("succeeded", "partial")), Scan.document.is_not(None))
    if account_id:
        stmt = stmt.where(Scan.account_id == account_id)
    if region:
        stmt = stmt.where(Scan.region == region)
    # latest by the window (a scan run with an explicit ``now``, as the demo does, starts at wall-clock time)
    scan = session.scalars(
        stmt.order_by(Scan.window_end.desc(), Scan.started_at.desc(), Scan.id.desc()).limit(1)
    ).first()
    if scan is None:
        raise NotFound("no finished scan in the store: run `chipwise scan` (or `make demo`) first")
    return scan


def _document(scan: Scan) -> ScanDocument | None:
    return ScanDocument.model_validate(scan.document) if scan.document else None


def _window_hours(document: ScanDocument) -> int:
    return (document.window.end - document.window.start).days * 24


def _spend(document: ScanDocument | None) -> tuple[Decimal | None, Decimal | None]:
    if document is None or _window_hours(document) <= 0:
        return None, None
    total = document.costs.total_usd
    return total, per_month(total, _window_hours(document))


def _trend_rows(session: Session, scan: Scan) -> list[TrendRow]:
    stmt = (
        select(Scan)
        .where(
            Scan.account_id == scan.account_id,
            Scan.region == scan.region,
            Scan.status.in_(("succeeded", "partial")),
            Scan.window_end <= scan.window_end,
            Scan.document.is_not(None),
        )
        .order_by(Scan.window_end, Scan.started_at, Scan.id)
    )
    rows = []
    for past in session.scalars(stmt):
        document = _document(past)
        if document is None:
            continue
        _, monthly = _spend(document)
        label = f"{document.window.end - timedelta(days=1):%d %b}"
        rows.append(TrendRow(label, monthly, headline(document.findings).total_usd))
    return rows


def _hourly(
    session: Session, resource: Resource | None, start: datetime, end: datetime
) -> tuple[dict[datetime, float], str] | None:
    """The best utilisation series stored for ``resource`` in ``[start, end)``: hour → average, and its label."""
    if resource is None:
        return None
    for namespace, metric, label in UTILISATION_SOURCES:
        stmt = select(MetricRollup.hour, MetricRollup.average).where(
            MetricRollup.resource_id == resource.id,
            MetricRollup.namespace == namespace,
            MetricRollup.metric == metric,
            MetricRollup.hour >= start,
            MetricRollup.hour < end,
            MetricRollup.average.is_not(None),
        )
        values: dict[datetime, list[float]] = defaultdict(list)
        for hour, average in session.execute(stmt):
            if average is not None:
                values[_utc(hour)].append(float(average))
        if values:
            return {hour: sum(v) / len(v) for hour, v in values.items()}, label
    instance = resource.arn.rsplit("/", 1)[-1]
    neuron = session.execute(
        select(NeuronRollup.hour, NeuronRollup.neuroncore_utilization_avg).where(
            NeuronRollup.account_id == resource.account_id,
            NeuronRollup.instance_id == instance,
            NeuronRollup.hour >= start,
            NeuronRollup.hour < end,
            NeuronRollup.neuroncore_utilization_avg.is_not(None),
        )
    ).all()
    if neuron:
        merged: dict[datetime, list[float]] = defaultdict(list)
        for hour, value in neuron:
            if value is not None:
                merged[_utc(hour)].append(float(value))
        series = {hour: sum(v) / len(v) for hour, v in merged.items()}
        return series, "NeuronCore utilisation (neuron-monitor reports)"
    return None


def _utc(moment: datetime) -> datetime:
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


def flatten(evidence: dict[str, Any], prefix: str = "") -> list[tuple[str, str]]:
    """Evidence as rows: nested mappings as dotted keys, lists joined, None as "-"."""
    rows: list[tuple[str, str]] = []
    for key, value in evidence.items():
        name = f"{prefix}{key}"
        if isinstance(value, dict):
            rows += flatten(value, f"{name}.") if value else [(name, "-")]
        elif isinstance(value, list | tuple):
            if value and all(isinstance(v, dict) for v in value):
                for i, item in enumerate(value):
                    rows += flatten(item, f"{name}[{i}].")
            else:
                rows.append((name, ", ".join(str(v) for v in value) or "-"))
        else:
            rows.append((name, "-" if value is None else str(value)))
    return rows


def _finding_view(d: FindingDocument) -> FindingView:
    measured = d.measured_monthly_savings_usd is not None
    return FindingView(
        document=d,
        short_id=short_id(d.finding_id),
        rule_label=rule_label(d.rule_id),
        saving=usd(best_saving(d)),
        measured=measured,
        counted=counts_in_totals(d),
        next_step=next_step(d),
        console_url=console_url(d.resource_id, d.region, d.resource_kind),
        suppress_command=suppress_command(d.finding_id),
        evidence=flatten(d.evidence),
        capacity=current_capacity(d.instance_type, d.instance_count, d.resource_kind),
    )


def build_report(session: Session, scan: Scan, *, now: datetime) -> ReportView:
    """The report's view of ``scan`` (its account and region's findings as the store holds them now)."""
    document = _document(scan)
    rows = FindingRepository(session).find(account_id=scan.account_id, region=scan.region, statuses=(OPEN, WITHDRAWN))
    documents = [finding_document(row) for row in rows]
    documents.sort(key=lambda d: (*rank(saving_facts(d)), d.resource_name))  # measured first, set apart last
    views = [_finding_view(d) for d in documents]
    window_start = document.window.start if document else scan.window_start
    window_end = document.window.end if document else scan.window_end
    start = datetime.combine(window_start, time(0), tzinfo=UTC)
    end = datetime.combine(window_end, time(0), tzinfo=UTC)
    resources = {
        r.arn: r for r in session.scalars(select(Resource).where(Resource.arn.in_([d.resource_id for d in documents])))
    }
    drawn: list[FindingView] = []
    for index, view in enumerate(views):
        if index < HEAT_MAPS and view.counted:
            series = _hourly(session, resources.get(view.document.resource_id), start, end)
            if series is None:
                view = _with(view, heat_missing="no hourly utilisation stored for this resource in the scan window")
            else:
                values, label = series
                view = _with(view, heat=heat_map(values, start=window_start, end=window_end, source=label))
        drawn.append(view)
    counted = [d for d in documents if counts_in_totals(d)]
    by_rule: dict[str, list[FindingDocument]] = defaultdict(list)
    for d in counted:
        by_rule[d.rule_id].append(d)
    rule_items = sorted(
        (
            (rule_label(rule), sum((best_saving(d) for d in items), Decimal(0)), f"{len(items)} finding(s)")
            for rule, items in by_rule.items()
            if sum((best_saving(d) for d in items), Decimal(0)) > 0  # a rule with nothing to save draws no bar
        ),
        key=lambda item: (-item[1], item[0]),
    )
    spend, monthly = _spend(document)
    trend_rows = _trend_rows(session, scan)
    chart = trend([(r.label, r.spend_per_month, r.savings) for r in trend_rows], lambda v: usd(v, 0))
    return ReportView(
        account_id=scan.account_id,
        region=scan.region,
        scan_id=scan.id,
        scan_status=scan.status,
        started_at=_utc(scan.started_at),
        generated_at=now,
        window_start=window_start,
        window_end=window_end,
        headline=headline(documents),
        spend=spend,
        spend_per_month=monthly,
        by_rule=bars(rule_items),
        findings=drawn,
        trend=chart,
        trend_rows=trend_rows,
        scans=len(trend_rows),
        audit=_audit(session, scan.account_id, now),
        precision=alert_precision(session, now - AUDIT_WINDOW, scan.account_id),
    )


AUDIT_WINDOW = timedelta(days=30)


def _audit(session: Session, account_id: str, now: datetime) -> list[AuditRow]:
    rows = RemediationRepository(session).since(now - AUDIT_WINDOW, account_id)
    statuses = (OPEN, WITHDRAWN, "suppressed", "resolved")
    names = {f.id: f.resource_name for f in FindingRepository(session).find(account_id=account_id, statuses=statuses)}
    return [
        AuditRow(
            at=_utc(r.created_at),
            short_id=short_id(r.finding_id),
            resource=names.get(r.finding_id, r.resource_arn),
            rule_label=rule_label(r.rule_id),
            event=f"{r.event} {r.action}",
            status=r.status,
            who=f"{r.actor} ({r.source})",
            calls=", ".join(f"{c['service']}.{c['operation']}" for c in r.calls) or "-",
            result=r.result,
        )
        for r in rows
    ]


def _with(view: FindingView, **changes: Any) -> FindingView:
    from dataclasses import replace

    return replace(view, **changes)


def render_report(view: ReportView) -> str:
    return render("report/report.html.j2", report=view, last_day=view.window_end - timedelta(days=1))


def write_report(view: ReportView, directory: Path) -> Path:
    """The report file in ``directory`` (created when missing); returns its path."""
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / view.filename
    path.write_text(render_report(view), encoding="utf-8")
    return path
