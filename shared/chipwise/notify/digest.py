"""The digest and alert view-models, built from the findings store (templates never query the database).

``load_snapshot`` reads one account's findings, owners and benchmark results once; ``build_digest`` and
``build_alert`` are pure functions of that snapshot, so the same figures go to every channel and recipient.

"What changed since the last digest" is: findings first seen after it (new), findings resolved after it
(resolved), and benchmark results recorded after it (benchmarked: the measured saving next to the estimate).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime
from decimal import Decimal

from chipwise.clock import utcnow
from chipwise.links import REPORT_STEP, console_url, short_id, suppress_command, suppress_step
from chipwise.models.findings import FindingDocument
from chipwise.models.resources import parse_hints
from chipwise.models.scan import ScanCosts, ScanWindow
from chipwise.notify.owners import owner_emails as owner_emails
from chipwise.notify.owners import owners_opted_in
from chipwise.presentation import (
    EXCLUSION_WORDS,
    Headline,
    SavingFacts,
    best_saving,
    current_capacity,
    exclusion,
    headline,
    ledger,
    next_step_words,
    one_time_cost,
    rank,
    target_label,
)
from chipwise.report.commitments import ending_soon
from chipwise.rules.titles import rule_title
from chipwise.spend import billed_costs, resources_costing
from chipwise.store import Session
from chipwise.store.repositories.accounts import AccountRepository, ScanRepository
from chipwise.store.repositories.bill import BillRepository
from chipwise.store.repositories.digests import DigestRepository
from chipwise.store.repositories.findings import FindingRecord, RecommendationRecord, finding_document
from chipwise.store.repositories.realised import RealisedSavingRepository

TOP_FINDINGS = 10
CHANGES_SHOWN = 15
# --- view-models -------------------------------------------------------------------------------------------


# The fields a FindingLine takes from its FindingDocument as they are (same name, same value).
_DOCUMENT_FIELDS = (
    "finding_id", "rule_id", "account_id", "region", "resource_id", "resource_name", "resource_kind",
    "instance_type", "instance_count", "monthly_cost_usd", "confidence", "effort", "summary", "status", "first_seen",
)  # fmt: skip


@dataclass(frozen=True)
class FindingLine:
    """One finding as messages show it: the money first, then what to do."""

    finding_id: str
    rule_id: str
    rule_label: str
    account_id: str
    region: str
    resource_id: str
    resource_name: str
    resource_kind: str
    instance_type: str | None
    instance_count: int
    monthly_cost_usd: Decimal
    monthly_savings_usd: Decimal
    measured: bool
    action: str
    target: str | None
    confidence: str
    effort: str
    summary: str
    status: str
    first_seen: datetime
    owners: tuple[str, ...] = ()
    excluded_from_totals: str | None = None  # "quote_needed" or "committed": its saving is not counted
    team: str | None = None  # from the resource's team tag (live, or the bill's cost allocation tag)
    console_url: str = ""  # the resource's page in the AWS console
    document: FindingDocument | None = None  # what the line was built from (the ledger reads it)

    @classmethod
    def from_document(cls, doc: FindingDocument, owners: tuple[str, ...] = (), team: str | None = None) -> FindingLine:
        return cls(
            **{name: getattr(doc, name) for name in _DOCUMENT_FIELDS},
            rule_label=rule_title(doc.rule_id),
            monthly_savings_usd=best_saving(doc),
            measured=doc.measured_monthly_savings_usd is not None,
            action=doc.recommendation.action,
            target=target_label(doc.recommendation),
            owners=owners,
            team=team,
            excluded_from_totals=exclusion(doc),
            console_url=console_url(doc.resource_id, doc.region, doc.resource_kind, doc.resource_name),
            document=doc,
        )

    @property
    def short_id(self) -> str:
        """The id as lists show it (every command accepts it)."""
        return short_id(self.finding_id)

    @property
    def suppress_command(self) -> str:
        """The CLI command that hides it (for CLI output only: mail and Slack readers get :attr:`suppress_step`)."""
        return suppress_command(self.finding_id)

    @property
    def suppress_step(self) -> str:
        """How a reader of an email or Slack message has it hidden: no command to run, the person who runs
        Chipwise does it."""
        return suppress_step(self.finding_id)

    @property
    def counted(self) -> bool:
        """Its saving counts in the totals."""
        return self.status == "open" and self.excluded_from_totals is None

    @property
    def apart_reason(self) -> str:
        """Why a line not counted is not counted, in words ("" when it counts)."""
        if self.counted:
            return ""
        if self.status == "withdrawn":
            return EXCLUSION_WORDS["withdrawn"]
        return EXCLUSION_WORDS.get(self.excluded_from_totals or "", self.excluded_from_totals or self.status)

    @property
    def saving_facts(self) -> SavingFacts:
        return SavingFacts(
            self.status,
            self.excluded_from_totals,
            self.measured,
            self.monthly_savings_usd,
            one_time_cost(self.action, self.effort),
        )

    @property
    def current(self) -> str:
        """The current capacity, e.g. "ml.g5.2xlarge ×4"."""
        return current_capacity(self.instance_type, self.instance_count, self.resource_kind)

    @property
    def next_step(self) -> str:
        """The recommendation in a few words: "Migrate → inf2.xlarge ×2", "Delete"."""
        return next_step_words(self.action, self.target)


@dataclass(frozen=True)
class BenchmarkedLine:
    """A benchmark result recorded since the last digest: the measured saving beside the estimate."""

    finding: FindingLine
    estimated_savings_usd: Decimal
    measured_savings_usd: Decimal | None
    target_instance_type: str | None
    withdrawn: bool
    reason: str | None
    recorded_at: datetime


@dataclass(frozen=True)
class RuleBar:
    """One bar of the "waste by rule" chart; ``percent`` is relative to the largest bar (1–100)."""

    rule_id: str
    label: str
    findings: int
    monthly_savings_usd: Decimal
    percent: int


@dataclass(frozen=True)
class RealisedLine:
    """A resolved finding's fix, measured: the realised monthly saving next to the estimate (None while pending)."""

    rule_id: str
    rule_label: str
    resource_name: str
    cause: str  # gone | resized
    estimated_savings_usd: Decimal
    realised_savings_usd: Decimal | None
    accuracy: Decimal | None
    after_days: int


@dataclass(frozen=True)
class RuleAccuracyLine:
    """Realised against estimated savings of one rule's measured fixes."""

    rule_id: str
    label: str
    measured: int
    pending: int
    estimated_usd: Decimal
    realised_usd: Decimal
    accuracy: Decimal | None


def realised_by_rule(lines: Iterable[RealisedLine]) -> list[RuleAccuracyLine]:
    """Per rule: how many fixes were measured (and pending), their estimated and realised savings, the ratio."""
    grouped: dict[str, list[RealisedLine]] = defaultdict(list)
    for line in lines:
        grouped[line.rule_id].append(line)
    found = []
    for rule_id, items in sorted(grouped.items()):
        measured = [i for i in items if i.realised_savings_usd is not None]
        estimated = sum((i.estimated_savings_usd for i in measured), Decimal(0))
        realised = sum((i.realised_savings_usd or Decimal(0) for i in measured), Decimal(0))
        accuracy = (realised / estimated).quantize(Decimal("0.001")) if measured and estimated > 0 else None
        found.append(
            RuleAccuracyLine(
                rule_id, rule_title(rule_id), len(measured), len(items) - len(measured), estimated, realised, accuracy
            )
        )
    return found


@dataclass(frozen=True)
class AccountSnapshot:
    """What the store knows about one account's findings, read once for every message about it."""

    account_id: str
    account_name: str | None
    since: datetime
    open: list[FindingLine]
    resolved: list[FindingLine]
    benchmarked: list[BenchmarkedLine]
    realised: tuple[RealisedLine, ...] = ()  # every measured fix of the account (to date), not only since
    costs: ScanCosts | None = None  # the latest scan's costs (the ledger's spend line)
    window_hours: int = 0
    ending_soon: tuple[str, ...] = ()  # commitments and Capacity Blocks ending within 90 days (issue 38)
    window: ScanWindow | None = None  # the latest scan's cost window
    billed: Mapping[str, Decimal] = field(default_factory=dict)  # resource id → its bill over the window

    @property
    def display_name(self) -> str:
        return f"{self.account_name} ({self.account_id})" if self.account_name else self.account_id

    def owners(self) -> list[str]:
        """Every owner address named on an open, resolved or benchmarked finding, in first-seen order."""
        found: dict[str, None] = {}
        lines = [*self.open, *self.resolved, *(b.finding for b in self.benchmarked)]
        for line in lines:
            found.update(dict.fromkeys(line.owners))
        return list(found)

    def for_owner(self, owner: str) -> AccountSnapshot:
        """Only the findings on resources ``owner`` owns."""
        return replace(
            self,
            open=[f for f in self.open if owner in f.owners],
            resolved=[f for f in self.resolved if owner in f.owners],
            benchmarked=[b for b in self.benchmarked if owner in b.finding.owners],
            realised=(),  # account-wide figures: in the account digest only
            costs=None,  # so is the account's spend
            window=None,
            billed={},
        )


@dataclass(frozen=True)
class TeamLine:
    """One team's open findings and their counted saving (resources with no team tag: ``team`` None)."""

    team: str | None
    findings: int
    monthly_savings_usd: Decimal


def waste_by_team(lines: Sequence[FindingLine]) -> tuple[TeamLine, ...]:
    """Counted savings per team, largest first; empty when no finding's resource carries a team tag."""
    if not any(line.team for line in lines):
        return ()
    totals: dict[str | None, Decimal] = defaultdict(Decimal)
    counts: dict[str | None, int] = defaultdict(int)
    for line in lines:
        if line.status != "open":
            continue
        counts[line.team] += 1
        if line.excluded_from_totals is None:
            totals[line.team] += line.monthly_savings_usd
    return tuple(
        TeamLine(team, counts[team], totals[team])
        for team in sorted(counts, key=lambda t: (-totals[t], t is None, t or ""))
    )


@dataclass(frozen=True)
class PrecisionLine:
    """A rule's alert precision over the last 30 days, and whether it is held to the digest (under the floor)."""

    rule_id: str
    label: str
    alerted: int
    acted: int
    dismissed: int
    precision: float | None
    digest_only: bool = False


@dataclass(frozen=True)
class ActionLine:
    """An apply, refusal, rollback or dismissal since the last digest (the remediation audit)."""

    at: datetime
    resource_name: str
    rule_label: str
    event: str
    status: str
    who: str


@dataclass(frozen=True)
class Digest:
    """The daily digest of one account (or of the part of it one owner owns)."""

    account_id: str
    account_display: str
    generated_at: datetime
    since: datetime
    owner: str | None
    headline: Headline
    open_count: int
    total_monthly_cost_usd: Decimal | None  # what the bill says the resources with open findings cost (≤ spend)
    total_monthly_waste_usd: Decimal
    measured_monthly_waste_usd: Decimal
    top: list[FindingLine]
    more_count: int
    by_rule: list[RuleBar]
    new: list[FindingLine]
    resolved: list[FindingLine]
    benchmarked: list[BenchmarkedLine]
    new_monthly_waste_usd: Decimal = field(default=Decimal(0))
    owners_not_allowed: tuple[str, ...] = ()  # owner tags outside the allow-list: listed here, never emailed
    list_limit: int = CHANGES_SHOWN  # lines per "what changed" list in an email; the rest is counted
    realised: tuple[RealisedLine, ...] = ()
    summary: tuple[
        str, ...
    ] = ()  # the five-line executive summary (:meth:`chipwise.presentation.Ledger.executive_summary`)
    by_team: tuple[TeamLine, ...] = ()
    ending_soon: tuple[str, ...] = ()  # commitments and Capacity Blocks ending within 90 days (issue 38)

    @property
    def realised_to_date_usd(self) -> Decimal:
        """Monthly savings realised by measured fixes (Cost Explorer before vs after), to date."""
        return sum((r.realised_savings_usd or Decimal(0) for r in self.realised), Decimal(0))

    @property
    def realised_by_rule(self) -> list[RuleAccuracyLine]:
        return realised_by_rule(self.realised)

    baseline: bool = False  # the account's first digest: everything found so far, no alerts sent
    report_link: str | None = None  # the HTML scan report (None: the digest says whom to ask for it)
    alerts_held: int = 0  # new findings above the alert threshold not alerted (over alert_max_per_run)
    precision: tuple[PrecisionLine, ...] = ()  # alert precision per rule over 30 days (rules alerted on only)
    actions: tuple[ActionLine, ...] = ()  # the audit since the last digest

    @property
    def has_news(self) -> bool:
        """Anything worth a message: open waste or a change since the last digest."""
        return bool(self.open_count or self.resolved or self.benchmarked)

    @property
    def changes(self) -> int:
        return len(self.new) + len(self.resolved) + len(self.benchmarked)

    @property
    def report_step(self) -> str:
        """Where a reader finds the report when none is published (no command: mail readers have no CLI)."""
        return REPORT_STEP


@dataclass(frozen=True)
class Alert:
    """An immediate alert: one new finding whose saving is above the threshold."""

    account_id: str
    account_display: str
    generated_at: datetime
    threshold_usd: Decimal
    finding: FindingLine


# --- loading -----------------------------------------------------------------------------------------------


def account_ids_with_findings(session: Session) -> list[str]:
    """Accounts that have any finding (the digest loop's accounts)."""
    return DigestRepository(session).account_ids_with_findings()


def _owners_by_arn(
    session: Session, arns: Iterable[str], *, opt_in_by_default: bool = False
) -> dict[str, tuple[str, ...]]:
    """The owner addresses of each resource whose owners opted in to email (see :func:`owners_opted_in`)."""
    owners: dict[str, tuple[str, ...]] = {}
    for arn, tags, hints in DigestRepository(session).resource_owner_fields(arns):
        if owners_opted_in(tags, opt_in_by_default=opt_in_by_default):
            owners[arn] = owner_emails(tags, parse_hints(hints))
    return owners


def load_snapshot(
    session: Session,
    account_id: str,
    *,
    since: datetime,
    owner_opt_in: bool = False,
    team_tag_keys: Sequence[str] = (),
) -> AccountSnapshot:
    """Open findings, findings resolved after ``since`` and benchmark results recorded after ``since``."""
    digests = DigestRepository(session)
    rows = digests.open_or_resolved_since(account_id, since)
    benchmarks = digests.recommendations_since(account_id, "benchmark", since)
    findings = {row.id: row for row in rows} | {finding.id: finding for _, finding in benchmarks}
    owners = _owners_by_arn(session, (f.resource_arn for f in findings.values()), opt_in_by_default=owner_opt_in)
    teams = BillRepository(session).teams_by_arn(account_id, (f.resource_arn for f in findings.values()), team_tag_keys)
    lines = {
        fid: FindingLine.from_document(finding_document(f), owners.get(f.resource_arn, ()), teams.get(f.resource_arn))
        for fid, f in findings.items()
    }
    account = AccountRepository(session).get(account_id)
    scan = ScanRepository(session).latest_document(account_id)
    return AccountSnapshot(
        costs=scan.costs if scan else None,
        window_hours=scan.window.hours if scan else 0,
        window=scan.window if scan else None,
        billed=billed_costs(scan),
        account_id=account_id,
        account_name=account.name if account else None,
        since=since,
        open=[lines[r.id] for r in rows if r.status == "open"],
        resolved=[lines[r.id] for r in rows if r.status == "resolved"],
        benchmarked=[_benchmarked(rec, finding, lines[finding.id]) for rec, finding in benchmarks],
        realised=_realised(session, account_id),
        ending_soon=ending_soon(session, account_id, utcnow().date()),
    )


def _realised(session: Session, account_id: str) -> tuple[RealisedLine, ...]:
    rows = RealisedSavingRepository(session).listed(account_id)
    return tuple(
        RealisedLine(
            rule_id=r.rule_id,
            rule_label=rule_title(r.rule_id),
            resource_name=r.resource_name,
            cause=r.cause,
            estimated_savings_usd=r.estimated_monthly_savings_usd,
            realised_savings_usd=r.realised_monthly_savings_usd if r.status == "measured" else None,
            accuracy=r.accuracy if r.status == "measured" else None,
            after_days=r.after_days,
        )
        for r in rows
    )


def _benchmarked(rec: RecommendationRecord, finding: FindingRecord, line: FindingLine) -> BenchmarkedLine:
    return BenchmarkedLine(
        finding=line,
        estimated_savings_usd=finding.estimated_monthly_savings_usd,
        measured_savings_usd=rec.monthly_savings_usd,
        target_instance_type=rec.target_instance_type,
        withdrawn=rec.withdrawn,
        reason=rec.reason,
        recorded_at=rec.created_at,
    )


# --- building (pure) ---------------------------------------------------------------------------------------


def headline_of(lines: Iterable[FindingLine]) -> Headline:
    """The one headline (:func:`chipwise.presentation.headline`) over digest lines."""
    return headline(line.saving_facts for line in lines)


def by_savings(lines: Iterable[FindingLine]) -> list[FindingLine]:
    """In :func:`chipwise.presentation.rank` order (measured before estimated, largest first); ties by resource
    name so messages are stable from run to run."""
    return sorted(lines, key=lambda f: (*rank(f.saving_facts), f.resource_name, f.rule_id))


def waste_by_rule(lines: Sequence[FindingLine]) -> list[RuleBar]:
    """The chart's bars: saving per rule, largest first, only rules with a saving, over the findings the headline
    counts (a saving that needs a quote or sits on committed hours is not in any rule's bar)."""
    totals: dict[str, Decimal] = defaultdict(Decimal)
    counts: dict[str, int] = defaultdict(int)
    for line in lines:
        if line.status != "open" or line.excluded_from_totals is not None:
            continue
        totals[line.rule_id] += line.monthly_savings_usd
        counts[line.rule_id] += 1
    ranked = sorted(((rule, total) for rule, total in totals.items() if total > 0), key=lambda rt: (-rt[1], rt[0]))
    if not ranked:
        return []
    largest = ranked[0][1]
    return [
        RuleBar(rule, rule_title(rule), counts[rule], total, max(1, int((total * 100 / largest).to_integral_value())))
        for rule, total in ranked
    ]


def build_digest(
    snapshot: AccountSnapshot, *, now: datetime, owner: str | None = None, top_n: int = TOP_FINDINGS
) -> Digest:
    """The digest of ``snapshot`` (already narrowed to ``owner``'s findings when it is an owner digest)."""
    ranked = by_savings(snapshot.open)
    new = by_savings(f for f in snapshot.open if f.first_seen > snapshot.since)
    totals = headline_of(ranked)
    figures = ledger((f.document for f in ranked if f.document is not None), snapshot.costs, snapshot.window_hours)
    return Digest(
        summary=tuple(figures.executive_summary()),
        account_id=snapshot.account_id,
        account_display=snapshot.display_name,
        generated_at=now,
        since=snapshot.since,
        owner=owner,
        headline=totals,
        open_count=len(ranked),
        total_monthly_cost_usd=resources_costing(
            figures.spend, snapshot.billed, (f.document for f in ranked if f.document is not None)
        ),
        total_monthly_waste_usd=totals.total_usd,
        measured_monthly_waste_usd=totals.measured_usd,
        top=ranked[:top_n],
        more_count=max(0, len(ranked) - top_n),
        by_rule=waste_by_rule(ranked),
        by_team=waste_by_team(ranked),
        new=new,
        resolved=by_savings(snapshot.resolved),
        benchmarked=list(snapshot.benchmarked),
        new_monthly_waste_usd=headline_of(new).total_usd,
        realised=snapshot.realised,
        ending_soon=snapshot.ending_soon,
    )


def alert_candidates(
    snapshot: AccountSnapshot, *, threshold_usd: Decimal, finding_ids: Iterable[str] = ()
) -> list[FindingLine]:
    """Open findings above the threshold that are new: first seen after ``since``, or named by the scan."""
    named = set(finding_ids)
    return by_savings(
        f
        for f in snapshot.open
        if f.counted
        and f.monthly_savings_usd > threshold_usd
        and (f.first_seen > snapshot.since or f.finding_id in named)
    )


def build_alert(snapshot: AccountSnapshot, finding: FindingLine, *, now: datetime, threshold_usd: Decimal) -> Alert:
    return Alert(
        account_id=snapshot.account_id,
        account_display=snapshot.display_name,
        generated_at=now,
        threshold_usd=threshold_usd,
        finding=finding,
    )
