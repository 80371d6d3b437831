"""The HTML scan report: what the store knows about one scan of one account and region, drawn in one static file.

* The totals: the one headline (measured apart from estimated) and the spend every surface prints
  (:func:`chipwise.spend.spend_of`: the bill's monthly run rate when it covers the window, else Cost Explorer's).
* Waste by rule, and the spend and savings of every stored scan of the account and region (the trend): every point
  the same measure as the reported scan's, its basis named.
* Per top finding, an hours × days heat-map of the utilisation metric it rests on (Chipwise's Neuron agent, then
  Container Insights, the CloudWatch agent's GPU metric, SageMaker's GPU metric, neuron-monitor reports; CPU only
  for a finding judged on CPU), and
  every finding's evidence.

A figure the store does not hold is said to be unknown, never guessed.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, time, timedelta
from decimal import Decimal
from pathlib import Path
from typing import Any

from chipwise.analyse.ledger import bill_costs, bill_window
from chipwise.analyse.verdicts import Settled, verdict_words_by_resource, verdicts_by_resource
from chipwise.clock import billing_periods
from chipwise.economics import usd
from chipwise.errors import InvalidInput, NotFound
from chipwise.ledger_csv import write_csv
from chipwise.links import console_url, short_id, suppress_command
from chipwise.models.findings import FindingDocument
from chipwise.models.resources import split_key
from chipwise.models.scan import ScanCosts, ScanDocument, ScanWindow
from chipwise.models.verdicts import VERDICT_WORDS
from chipwise.presentation import (
    Headline,
    Ledger,
    LedgerRow,
    best_saving,
    counts_in_totals,
    current_capacity,
    ledger,
    ledger_row,
    next_step,
    plural,
    rank,
    saving_facts,
)
from chipwise.render import render
from chipwise.report.charts import Bar, HeatMap, Trend, bars, heat_map, trend
from chipwise.report.naming import report_filename
from chipwise.rules.titles import rule_title
from chipwise.spend import DEFAULT_COST_SOURCE, Spend, reconciliation, spend_of
from chipwise.store import Session
from chipwise.store.repositories.accounts import ScanRecord, ScanRepository
from chipwise.store.repositories.bill import BillRepository
from chipwise.store.repositories.finding_rows import OPEN, WITHDRAWN
from chipwise.store.repositories.findings import (
    FindingRepository,
    Prediction,
    RecommendationRecord,
    finding_document,
)
from chipwise.store.repositories.inventory import ResourceRecord, ResourceRepository
from chipwise.store.repositories.neuron import NeuronRepository
from chipwise.store.repositories.realised import RealisedSavingRepository
from chipwise.store.repositories.remediations import RemediationRepository, RulePrecision
from chipwise.store.repositories.usage import UsageRepository

HEAT_MAPS = 4  # top findings drawn as heat-maps
TOP_FINDINGS = 200  # findings written out in full in the HTML; every finding is in the CSV beside it
MIN_SCAN_PREFIX = 6
PLACES_NAMED = 10  # places (account and region) a "no finished scan of" error names; the rest counted

# (namespace, metric, label), best first: accelerator utilisation before CPU.
UTILISATION_SOURCES: tuple[tuple[str, str, str], ...] = (
    ("Chipwise/Neuron", "NeuronCoreUtilization", "NeuronCore utilisation (Chipwise Neuron agent)"),
    ("ContainerInsights", "node_neuroncore_utilization", "NeuronCore utilisation (Container Insights)"),
    ("ContainerInsights/OTel", "node_neuroncore_utilization", "NeuronCore utilisation (OTel Container Insights)"),
    ("CWAgent", "nvidia_smi_utilization_gpu", "GPU utilisation (CloudWatch agent)"),
    ("ContainerInsights/OTel", "node_gpu_utilization", "GPU utilisation (OTel Container Insights, DCGM)"),
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
    row: LedgerRow
    capacity: str = ""  # "ml.g5.2xlarge ×4", an inference component's copies
    heat: HeatMap | None = None
    heat_missing: str | None = None
    resource_verdict: str = ""  # the resource's verdict and why (chipwise.analyse.verdicts, as `chipwise resources`)


@dataclass(frozen=True)
class TrendRow:
    label: str
    spend_per_month: Decimal | None
    savings: Decimal
    counted: int = 0  # findings the savings count
    basis: str = "unknown"  # the point's measure, in words (every point the same source: the reported scan's)


@dataclass(frozen=True)
class PredictionRow:
    """One rule's estimates against what was measured (benchmarks) or realised (the bill after the fix), per day:
    the error is (actual − estimated) ÷ estimated (positive: the rule under-estimated)."""

    rule_label: str
    kind: str  # "measured" | "realised"
    day: date
    findings: int
    estimated_usd: Decimal
    actual_usd: Decimal

    @property
    def error_percent(self) -> Decimal | None:
        if self.estimated_usd == 0:
            return None
        return round((self.actual_usd - self.estimated_usd) * 100 / self.estimated_usd, 1)


def prediction_errors(predictions: Sequence[Prediction]) -> list[PredictionRow]:
    """Each rule's prediction error over time: estimates and actuals summed per rule, kind and day."""
    groups: dict[tuple[str, str, date], list[Prediction]] = defaultdict(list)
    for p in predictions:
        groups[(p.rule_id, p.kind, _utc(p.at).date())].append(p)
    return [
        PredictionRow(
            rule_title(rule),
            kind,
            day,
            len(items),
            sum((p.estimated_usd for p in items), Decimal(0)),
            sum((p.actual_usd for p in items), Decimal(0)),
        )
        for (rule, kind, day), items in sorted(groups.items(), key=lambda kv: (kv[0][0], kv[0][1], kv[0][2]))
    ]


def _predictions(session: Session, account_id: str, region: str) -> list[Prediction]:
    found = FindingRepository(session).measured_predictions(account_id, region)
    for r in RealisedSavingRepository(session).listed(account_id):
        actual = r.realised_monthly_savings_usd
        if r.region == region and r.status == "measured" and actual is not None:
            found.append(Prediction(r.rule_id, r.measured_at, r.estimated_monthly_savings_usd, actual, "realised"))
    return found


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
    ledger: Ledger
    spend: Spend | None  # chipwise.spend: the one figure every surface prints
    spend_per_month: Decimal | None
    by_rule: list[Bar]
    findings: list[FindingView]
    trend: Trend
    trend_rows: list[TrendRow]
    scans: int
    predictions: list[PredictionRow] = field(default_factory=list)
    by_team: list[Bar] = field(default_factory=list)  # counted savings by the resources' team tag (none: no section)
    findings_total: int = 0  # every open or withdrawn finding; ``findings`` holds the top TOP_FINDINGS of them
    cost_source: str = "cost_explorer"  # where the scan's spend came from: bill | cost_explorer
    audit: list[AuditRow] = field(default_factory=list)
    precision: list[RulePrecision] = field(default_factory=list)
    commitments_html: str = ""  # the commitments section, rendered by its own partial (report.commitments)

    @property
    def reconciliation(self) -> list[str]:
        """Spend = attributed + not attributed, and the resources the bill lacks (at list, not in spend)."""
        return reconciliation(self.spend)

    @property
    def filename(self) -> str:
        return report_filename(self.account_id, self.region, self.started_at)

    @property
    def csv_filename(self) -> str:
        """Every finding as CSV, beside the HTML (which shows the top :data:`TOP_FINDINGS`)."""
        return self.filename.removesuffix(".html") + ".csv"

    @property
    def more_findings(self) -> int:
        return max(self.findings_total - len(self.findings), 0)


# --- loading -------------------------------------------------------------------------------------------------------


def find_scan(
    session: Session, *, scan_id: str | None = None, account_id: str | None = None, region: str | None = None
) -> ScanRecord:
    """The scan to report: by id (or a prefix of six characters or more), else the latest finished one."""
    if scan_id:
        scans = ScanRepository(session)
        scan = scans.get(scan_id)
        if scan is None and len(scan_id) >= MIN_SCAN_PREFIX:
            matches = scans.with_id_prefix(scan_id, limit=2)
            if len(matches) > 1:
                raise InvalidInput(f"{scan_id!r} matches several scans: give more of the id")
            scan = matches[0] if matches else None
        if scan is None:
            raise NotFound(f"no scan {scan_id!r}: `chipwise report` without --scan reports the latest")
        return scan
    # latest by the window (a scan run with an explicit ``now``, as the demo does, starts at wall-clock time)
    scan = ScanRepository(session).latest_finished(account_id, region)
    if scan is None:
        raise NotFound(_no_scan_message(ScanRepository(session).finished_places(), account_id, region))
    return scan


def _no_scan_message(places: list[tuple[str, str, int]], account_id: str | None, region: str | None) -> str:
    """Why no scan matched: an empty store, or the filters (naming the scans the store does have)."""
    if not places:
        return "no finished scan in the store: run `chipwise scan` (or `make demo`) first"
    wanted = " in ".join(part for part in (account_id and f"account {account_id}", region) if part)
    held = ", ".join(f"{account} in {where} ({plural(n, 'scan')})" for account, where, n in places[:PLACES_NAMED])
    if len(places) > PLACES_NAMED:  # an organisation's store: one line, not every place of 200 accounts
        held += f" and {len(places) - PLACES_NAMED} more"
    return f"no finished scan of {wanted}; the store has {held}: pass one of those to --account / --region"


def _document(scan: ScanRecord) -> ScanDocument | None:
    return ScanDocument.model_validate(scan.document) if scan.document else None


def _point_spend(session: Session, account_id: str, region: str, window: ScanWindow, source: str) -> Spend | None:
    """A trend point's spend, the same measure as every other point: the bill's monthly run rate over the days the
    bill covers of the point's window when the reported scan was priced from the bill, else Cost Explorer's over its
    complete days; None when that source has no day of the window."""
    if source == "bill":
        periods = billing_periods(window.start, window.end)
        bills, apart, days = BillRepository(session).window_bill(
            account_id, window.start, window.end, periods, region=region
        )
        costs = bill_costs(bill_window(bills, apart, days, window.start, window.end), periods, ())
    else:
        total, by_type = UsageRepository(session).cost_totals(account_id, window.start, window.end, region=region)
        days_with = UsageRepository(session).stored_cost_days(account_id, window.start, window.end)
        costs = ScanCosts(total_usd=total, by_instance_type=by_type, days_covered=len(days_with))
    return spend_of(costs, window.hours)


def final_figures(document: FindingDocument, outcome: RecommendationRecord | None) -> FindingDocument:
    """A finding as it stood once its benchmark (if one ran before the next scan) had priced it: the scan document
    holds the figures before benchmarks, the trend shows each scan's final ones."""
    if outcome is None or document.measured_monthly_savings_usd is not None or document.status != "open":
        return document
    if outcome.withdrawn:
        return document.model_copy(update={"status": "withdrawn", "measured_monthly_savings_usd": Decimal(0)})
    if outcome.monthly_savings_usd is None:  # the plausibility gate: needs review, out of the totals
        evidence = {**document.evidence, "benchmark": {"status": "needs_review", "reason": outcome.reason}}
        return document.model_copy(update={"evidence": evidence})
    return document.model_copy(update={"measured_monthly_savings_usd": outcome.monthly_savings_usd})


def _trend_rows(
    session: Session, scan: ScanRecord, latest: Ledger, scan_document: ScanDocument | None = None
) -> list[TrendRow]:
    """Spend and the headline of every stored scan up to ``scan``: each scan's final (post-benchmark) figures.
    The reported scan's point is the report's own ledger (the same headline; its document, ``scan_document``, is
    not validated again); an earlier scan's findings get the benchmark outcomes recorded before the next scan
    started."""
    finished = ScanRepository(session).finished_until(scan.account_id, scan.region, scan.window_end)
    scans = [
        (past, document)
        for past in finished
        if (document := scan_document if past.id == scan.id and scan_document else _document(past)) is not None
    ]
    repository = FindingRepository(session)
    source = latest.spend.source if latest.spend is not None else DEFAULT_COST_SOURCE
    kind = "bill" if latest.spend is not None and latest.spend.from_bill else "cost_explorer"
    rows = []
    for index, (past, document) in enumerate(scans):
        label = f"{document.window.end - timedelta(days=1):%d %b}"
        if past.id == scan.id:
            spend = latest.spend
            rows.append(TrendRow(label, _monthly(spend), latest.total_usd, latest.headline.counted, _basis(spend)))
            continue
        spend = _point_spend(session, scan.account_id, scan.region, document.window, kind)
        following = scans[index + 1][0].started_at if index + 1 < len(scans) else None
        outcomes = repository.benchmark_outcomes((d.finding_id for d in document.findings), before=following)
        final = ledger(final_figures(d, outcomes.get(d.finding_id)) for d in document.findings)
        basis = _basis(spend) if spend is not None else f"unknown: {source} has no day of this window"
        rows.append(TrendRow(label, _monthly(spend), final.total_usd, final.headline.counted, basis))
    return rows


def _monthly(spend: Spend | None) -> Decimal | None:
    return spend.monthly_usd if spend is not None else None


def _basis(spend: Spend | None) -> str:
    return f"{spend.source}; {spend.basis}" if spend is not None else "unknown"


CPU_SIGNAL = "cpu_utilization"  # a finding resting on CPU (its signals_used) may draw a CPU heat-map; no other may


def _heat_series(
    session: Session, wanted: Sequence[tuple[ResourceRecord, Sequence[str]]], start: datetime, end: datetime
) -> list[tuple[dict[datetime, float], str] | None]:
    """For each (resource, the finding's signals) of ``wanted``, in order, the series its heat-map draws
    (:func:`_hourly`): every resource's rollups of every source in one statement, then the neuron-monitor rollups
    of those with no accelerator metric in one more (none when every one has one), whatever the number of maps."""
    if not wanted:
        return []
    accelerator = [(namespace, metric) for namespace, metric, _ in UTILISATION_SOURCES if metric != "CPUUtilization"]
    cpu = [(namespace, metric) for namespace, metric, _ in UTILISATION_SOURCES if metric == "CPUUtilization"]
    drawn_on_cpu = any(CPU_SIGNAL in signals for _, signals in wanted)  # else no CPU hour is read at all
    sources = accelerator + cpu if drawn_on_cpu else accelerator
    rollups = UsageRepository(session).metric_averages([r.id for r, _ in wanted], sources, start, end)
    unmeasured = {
        (r.account_id, _instance_id(r)) for r, _ in wanted if not any((r.id, n, m) in rollups for n, m in accelerator)
    }
    neuron = NeuronRepository(session).neuroncore_utilisation(unmeasured, start, end) if unmeasured else {}
    return [_hourly(r, rollups, neuron, signals) for r, signals in wanted]


def _instance_id(resource: ResourceRecord) -> str:
    return resource.arn.rsplit("/", 1)[-1]


def _hourly(
    resource: ResourceRecord,
    rollups: Mapping[tuple[int, str, str], Sequence[tuple[datetime, float]]],
    neuron: Mapping[tuple[str, str], Sequence[tuple[datetime, float]]],
    signals: Sequence[str] = (),
) -> tuple[dict[datetime, float], str] | None:
    """The utilisation series the finding rests on, from the rollups stored for ``resource`` (by resource,
    namespace, metric) and the neuron-monitor rollups (by account, instance): hour → average, and its label.
    Accelerator metrics first (neuron-monitor reports included); CPU only for a finding whose signals name CPU: a
    Neuron or GPU finding never draws a CPU map in place of the metric it was judged on."""
    for namespace, metric, label in UTILISATION_SOURCES:
        if metric == "CPUUtilization":
            continue
        found = _series(rollups.get((resource.id, namespace, metric), ()))
        if found:
            return found, label
    reports = neuron.get((resource.account_id, _instance_id(resource)), ())
    if reports:
        return _series(reports), "NeuronCore utilisation (neuron-monitor reports)"
    if CPU_SIGNAL not in signals:
        return None
    for namespace, metric, label in UTILISATION_SOURCES:
        cpu = _series(rollups.get((resource.id, namespace, metric), ())) if metric == "CPUUtilization" else None
        if cpu:
            return cpu, label
    return None


def _series(rows: Iterable[tuple[datetime, float]]) -> dict[datetime, float]:
    """Hour → the mean of its values (in row order)."""
    values: dict[datetime, list[float]] = defaultdict(list)
    for hour, value in rows:
        values[_utc(hour)].append(float(value))
    return {hour: sum(v) / len(v) for hour, v in values.items()}


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


def _finding_view(d: FindingDocument, verdict: Settled | None = None) -> FindingView:
    measured = d.measured_monthly_savings_usd is not None
    said = f"{VERDICT_WORDS[verdict[0]]}: {verdict[1]}" if verdict else ""
    return FindingView(
        document=d,
        short_id=short_id(d.finding_id),
        rule_label=rule_title(d.rule_id),
        saving=usd(best_saving(d)),
        measured=measured,
        counted=counts_in_totals(d),
        next_step=next_step(d),
        console_url=console_url(d.resource_id, d.region, d.resource_kind, d.resource_name),
        suppress_command=suppress_command(d.finding_id),
        evidence=flatten(d.evidence),
        row=ledger_row(d),
        capacity=current_capacity(d.instance_type, d.instance_count, d.resource_kind),
        resource_verdict=said,
    )


def _team_bars(
    session: Session, account_id: str, documents: Sequence[FindingDocument], keys: Sequence[str]
) -> list[Bar]:
    """Counted savings per team (the resource's team tag, live or the bill's cost allocation tag); empty when no
    finding's resource carries one."""
    teams = BillRepository(session).teams_by_arn(account_id, [split_key(d.resource_id)[0] for d in documents], keys)
    if not teams:
        return []
    totals: dict[str, list[Any]] = defaultdict(lambda: [Decimal(0), 0])
    for d in documents:
        entry = totals[teams.get(split_key(d.resource_id)[0], "(no team tag)")]
        entry[0] += best_saving(d)
        entry[1] += 1
    items = sorted(
        ((team, total, plural(count, "finding")) for team, (total, count) in totals.items() if total > 0),
        key=lambda item: (-item[1], item[0]),
    )
    return bars(items)


def build_report(session: Session, scan: ScanRecord, *, now: datetime, team_tag_keys: Sequence[str] = ()) -> ReportView:
    """The report's view of ``scan`` (its account and region's findings as the store holds them now)."""
    document = _document(scan)
    rows = FindingRepository(session).find(account_id=scan.account_id, region=scan.region, statuses=(OPEN, WITHDRAWN))
    documents = [finding_document(row) for row in rows]
    documents.sort(key=lambda d: (*rank(saving_facts(d)), d.resource_name))  # by 12-month value, set apart last
    figures = ledger(documents, document.costs if document else None, document.window.hours if document else 0)
    verdicts = verdicts_by_resource(figures.rows, rule_title)
    top = documents[:TOP_FINDINGS]  # the HTML's size does not grow past the top
    views = [_finding_view(d, verdicts.get(d.resource_id)) for d in top]
    window_start = document.window.start if document else scan.window_start
    window_end = document.window.end if document else scan.window_end
    start = datetime.combine(window_start, time(0), tzinfo=UTC)
    end = datetime.combine(window_end, time(0), tzinfo=UTC)
    resources = ResourceRepository(session).by_keys(d.resource_id for d in documents)
    mapped = [  # the heat-maps' findings: the first HEAT_MAPS of the top, if counted and their resource stored
        (index, resource, view.document.signals_used)
        for index, view in enumerate(views[:HEAT_MAPS])
        if view.counted and (resource := resources.get(view.document.resource_id)) is not None
    ]
    drawn_series = _heat_series(session, [(r, s) for _, r, s in mapped], start, end)
    series = dict(zip((i for i, _, _ in mapped), drawn_series, strict=True))
    missing = "no hourly utilisation of the metric this finding rests on stored in the scan window"
    drawn: list[FindingView] = []
    for index, view in enumerate(views):
        if index < HEAT_MAPS and view.counted:
            found = series.get(index)
            if found is None:
                view = _with(view, heat_missing=missing)
            else:
                values, label = found
                view = _with(view, heat=heat_map(values, start=window_start, end=window_end, source=label))
        drawn.append(view)
    counted = [d for d in documents if counts_in_totals(d)]
    by_rule: dict[str, list[FindingDocument]] = defaultdict(list)
    for d in counted:
        by_rule[d.rule_id].append(d)
    rule_items = sorted(
        (
            (rule_title(rule), sum((best_saving(d) for d in items), Decimal(0)), plural(len(items), "finding"))
            for rule, items in by_rule.items()
            if sum((best_saving(d) for d in items), Decimal(0)) > 0  # a rule with nothing to save draws no bar
        ),
        key=lambda item: (-item[1], item[0]),
    )
    trend_rows = _trend_rows(session, scan, figures, document)
    chart = trend([(r.label, r.spend_per_month, r.savings) for r in trend_rows], lambda v: usd(v, 0))
    return ReportView(  # the scan's identity and window first, in the view's field order
        *(scan.account_id, scan.region, scan.id, scan.status, _utc(scan.started_at), now, window_start, window_end),
        headline=figures.headline,
        ledger=figures,
        spend=figures.spend,
        spend_per_month=_monthly(figures.spend),
        by_rule=bars(rule_items),
        findings=drawn,
        trend=chart,
        trend_rows=trend_rows,
        scans=len(trend_rows),
        predictions=prediction_errors(_predictions(session, scan.account_id, scan.region)),
        by_team=_team_bars(session, scan.account_id, counted, team_tag_keys),
        findings_total=len(documents),
        cost_source=document.costs.source if document else "cost_explorer",
        audit=_audit(session, scan.account_id, now),
        precision=RemediationRepository(session).alert_precision(now - AUDIT_WINDOW, scan.account_id),
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
            rule_label=rule_title(r.rule_id),
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
    """The report file in ``directory`` (created when missing), and beside it every finding as CSV in ledger
    order; returns the report's path."""
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / view.filename
    path.write_text(render_report(view), encoding="utf-8")
    verdicts = verdict_words_by_resource(view.ledger.rows, rule_title)  # the rows: every open and withdrawn one
    with (directory / view.csv_filename).open("w", encoding="utf-8", newline="") as stream:
        write_csv(view.ledger, stream, verdicts=verdicts)
    return path
