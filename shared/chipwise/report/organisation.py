"""The organisation's HTML report: the latest finished scan of every account and region, in one static file.

Built one scan at a time (memory flat in the number of accounts: one scan's findings and the organisation's top
:data:`~chipwise.report.build.TOP_FINDINGS` at once, never every finding). Each scan's findings make the scan
report's ledger (:func:`chipwise.presentation.ledger`, with the scan's costs and window), so the organisation's
headline is the sum of the scan reports' headlines to the cent; each ledger's rows go to the CSV as they are made
(every finding, the columns of ``chipwise findings --format csv``).

The report shows the organisation's totals (the spend where every scan has a cost figure, else what is unknown and
why), one row per account (the largest :data:`ACCOUNTS_SHOWN`, then how many more), the counted saving per team (the
scan report's by-team section: the resource's team tag, live or the bill's), and the top findings of the
organisation, ranked as the ledger ranks them, each written out as the scan report writes it.
"""

from __future__ import annotations

import heapq
import re
from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field, fields
from datetime import datetime
from decimal import Decimal
from pathlib import Path
from typing import IO, Any

from chipwise.analyse.verdicts import Settled, verdicts_by_resource
from chipwise.economics import break_even_months, cents, round_money, usd
from chipwise.ledger_csv import write_csv
from chipwise.models.findings import FindingDocument
from chipwise.models.resources import split_key
from chipwise.models.scan import ScanCosts, ScanWindow
from chipwise.models.verdicts import VERDICT_WORDS
from chipwise.presentation import Headline, Ledger, LedgerRow, ledger, plural
from chipwise.render import render
from chipwise.report.build import TOP_FINDINGS, FindingView, _finding_view
from chipwise.report.charts import Bar, bars
from chipwise.rules.titles import rule_title
from chipwise.store import Session
from chipwise.store.repositories.accounts import ScanFigures, ScanRepository
from chipwise.store.repositories.bill import BillRepository
from chipwise.store.repositories.finding_pages import NO_TEAM, FindingFilter, FindingPages
from chipwise.store.repositories.finding_rows import OPEN, WITHDRAWN

ACCOUNTS_SHOWN = 50  # rows of the per-account table; the rest counted under it
TEAMS_SHOWN = 50  # and of the per-team table


@dataclass
class AccountRow:
    """One account's latest scans (one per region): findings, counted saving and spend a month."""

    account_id: str
    regions: list[str] = field(default_factory=list)
    findings: int = 0
    counted: int = 0
    saving_usd: Decimal = Decimal(0)
    spend_usd: Decimal | None = Decimal(0)  # None: a scan of the account has no cost figure


@dataclass
class OrgTotals:
    """The sum of the scans' ledgers: the headline, quick wins, projects and blocked, the spend."""

    headline: Headline = field(default_factory=lambda: Headline(Decimal(0), Decimal(0), 0, 0, 0, 0, 0))
    quick_wins_usd: Decimal = Decimal(0)
    quick_wins: int = 0
    projects_usd: Decimal = Decimal(0)
    projects: int = 0
    porting_usd: Decimal = Decimal(0)
    blocked_usd: Decimal = Decimal(0)
    blocked: dict[str, tuple[int, Decimal]] = field(default_factory=dict)  # why -> (findings, $ a month)
    spend_usd: Decimal = Decimal(0)  # the scans with a cost figure
    spend_sources: Counter[str] = field(default_factory=Counter)  # scans per source of their spend
    spend_unknown: list[str] = field(default_factory=list)  # "account region" of the scans without one
    by_team: bool = False  # a team's report: the spend is not split by team, so none is summed

    def add(self, figures: Ledger) -> None:
        self.headline = Headline(
            *(getattr(self.headline, f.name) + getattr(figures.headline, f.name) for f in fields(Headline))
        )
        self.quick_wins_usd += figures.quick_wins_usd
        self.quick_wins += figures.count("quick_win")
        self.projects_usd += figures.projects_usd
        self.projects += figures.count("project")
        self.porting_usd += figures.porting_usd
        self.blocked_usd += figures.blocked_usd
        for why, n, total in figures.blocked_reasons():
            held, amount = self.blocked.get(why, (0, Decimal(0)))
            self.blocked[why] = (held + n, amount + total)

    @property
    def total_usd(self) -> Decimal:
        """The headline: quick wins + projects (equals ``headline.total_usd`` to the cent)."""
        return self.quick_wins_usd + self.projects_usd

    @property
    def spend_known(self) -> bool:
        return not self.spend_unknown and bool(self.spend_sources)

    def spend_words(self) -> str:
        if self.by_team:
            return "Accelerator and compute spend: not split by team (each account's own report has its spend)"
        scans = sum(self.spend_sources.values())
        sources = ", ".join(f"{source}: {plural(n, 'scan')}" for source, n in sorted(self.spend_sources.items()))
        if self.spend_known:
            return (
                f"Accelerator and compute spend: {usd(self.spend_usd)} a month over {plural(scans, 'scan')} ({sources})"
            )
        missing = self.spend_unknown[:5]
        more = f" and {len(self.spend_unknown) - len(missing)} more" if len(self.spend_unknown) > len(missing) else ""
        known = f"; {usd(self.spend_usd)} a month over the other {plural(scans, 'scan')} ({sources})" if scans else ""
        return (
            f"Accelerator and compute spend: unknown: {plural(len(self.spend_unknown), 'scan')} stored no cost "
            f"figure ({', '.join(missing)}{more}){known}"
        )

    def executive_summary(self) -> list[str]:
        """The scan report's five lines, summed over the organisation's scans."""
        share = (
            f", {round_money(self.total_usd * 100 / self.spend_usd, 1)} % of spend"
            if self.spend_known and self.spend_usd > 0
            else ""
        )
        months = break_even_months(self.porting_usd, self.projects_usd) if self.porting_usd > 0 else None
        payback = f", payback {Decimal(str(months))} months" if months is not None else ""
        reasons = sorted(((why, n, cents(t)) for why, (n, t) in self.blocked.items()), key=lambda x: (-x[2], x[0]))
        return [
            self.spend_words(),
            f"Addressable: {usd(self.total_usd)} a month{share} (quick wins + projects)",
            f"Quick wins: {usd(self.quick_wins_usd)} a month from {plural(self.quick_wins, 'finding')}",
            f"Projects: {usd(self.projects_usd)} a month from {plural(self.projects, 'finding')}, porting "
            f"{usd(self.porting_usd)} one-time{payback}",
            f"Blocked: {usd(self.blocked_usd)} a month, not counted: "
            + ("; ".join(f"{why} ({n}, {usd(total)})" for why, n, total in reasons) or "none"),
        ]


@dataclass(frozen=True)
class OrgReportView:
    generated_at: datetime
    region: str | None  # the --region filter, if any
    team: str | None  # the --team filter, if any
    scans: int
    totals: OrgTotals
    accounts: list[AccountRow]  # the largest ACCOUNTS_SHOWN by counted saving
    accounts_total: int
    by_team: list[Bar]  # the largest TEAMS_SHOWN
    teams_total: int
    findings: list[FindingView]  # the organisation's top TOP_FINDINGS
    findings_total: int

    @property
    def filename(self) -> str:
        return org_report_filename(self.generated_at, self.region, self.team)

    @property
    def csv_filename(self) -> str:
        return self.filename.removesuffix(".html") + ".csv"

    @property
    def more_accounts(self) -> int:
        return self.accounts_total - len(self.accounts)

    @property
    def more_teams(self) -> int:
        return self.teams_total - len(self.by_team)

    @property
    def more_findings(self) -> int:
        return max(self.findings_total - len(self.findings), 0)

    @property
    def scope(self) -> str:
        """What the report covers, in words: "every region, every team"."""
        region = f"region {self.region}" if self.region else "every region"
        team = f"team {self.team}" if self.team else "every team"
        return f"{region}, {team}"


def org_report_filename(generated_at: datetime, region: str | None = None, team: str | None = None) -> str:
    """``chipwise-report-organisation[-<region>][-team-<team>]-<YYYYmmddTHHMMZ>.html``."""
    parts = ["chipwise-report-organisation", region or "", f"team-{_slug(team)}" if team else ""]
    return "-".join(p for p in parts if p) + f"-{generated_at:%Y%m%dT%H%MZ}.html"


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "_", text).strip("_") or "_"


def latest_scans(session: Session, region: str | None = None) -> list[ScanFigures]:
    """The latest finished scan of every account and region (of ``region`` when given), by account then region,
    each with its costs and window (the scan report's scan of each place), read in one statement."""
    return ScanRepository(session).latest_finished_figures(region)


TopKey = tuple[Any, ...]


@dataclass
class _Summed:
    """What the scans add up to as they are read: the totals, the accounts, the teams and the top findings."""

    totals: OrgTotals = field(default_factory=OrgTotals)
    accounts: dict[str, AccountRow] = field(default_factory=dict)
    teams: dict[str, list[Any]] = field(default_factory=lambda: defaultdict(lambda: [Decimal(0), 0]))
    top: list[tuple[TopKey, FindingDocument, Settled | None]] = field(default_factory=list)
    findings: int = 0
    scans: int = 0

    def add(self, scan: ScanFigures, figures: Ledger, team_of: dict[str, str], settled: dict[str, Settled]) -> None:
        self.scans += 1
        self.findings += len(figures.rows)
        self.totals.add(figures)
        spend = figures.spend.monthly_usd if figures.spend is not None else None
        if figures.spend is not None:
            self.totals.spend_usd += figures.spend.monthly_usd
            self.totals.spend_sources[figures.spend.source] += 1
        else:
            self.totals.spend_unknown.append(f"{scan.account_id} {scan.region}")
        row = self.accounts.setdefault(scan.account_id, AccountRow(scan.account_id))
        row.regions.append(scan.region)
        row.findings += len(figures.rows)
        row.counted += figures.headline.counted
        row.saving_usd += figures.total_usd
        row.spend_usd = None if row.spend_usd is None or spend is None else row.spend_usd + spend
        for r in figures.rows:
            if r.counted:
                entry = self.teams[_team(team_of, r.document)]
                entry[0] += r.saving_usd
                entry[1] += 1
        candidates = [(_rank(r), r.document, settled.get(r.document.resource_id)) for r in figures.rows[:TOP_FINDINGS]]
        self.top = heapq.nsmallest(TOP_FINDINGS, self.top + candidates, key=lambda item: item[0])

    def team_bars(self) -> list[Bar]:
        """Counted savings per team, the largest first (none when no resource carries a team tag)."""
        named = [(name, total, plural(count, "finding")) for name, (total, count) in self.teams.items() if total > 0]
        found = bars(sorted(named, key=lambda item: (-item[1], item[0])))
        return [] if all(bar.label == NO_TEAM for bar in found) else found


def build_org_report(
    session: Session,
    csv_stream: IO[str],
    *,
    now: datetime,
    region: str | None = None,
    team: str | None = None,
    team_tag_keys: Sequence[str] = (),
) -> OrgReportView:
    """The organisation's view, one scan at a time; every finding written to ``csv_stream`` on the way."""
    summed = _Summed(totals=OrgTotals(by_team=team is not None))
    pages = FindingPages(session)
    for scan in latest_scans(session, region):
        selected = FindingFilter(statuses=(OPEN, WITHDRAWN), account_id=scan.account_id, region=scan.region)
        documents = pages.page(selected, limit=None)
        team_of = BillRepository(session).teams_by_arn(
            scan.account_id, [split_key(d.resource_id)[0] for d in documents], team_tag_keys
        )
        if team is not None:
            documents = [d for d in documents if _team(team_of, d) == team]
            if not documents:
                continue
        # ranked as the scan report ranks them: by name, then (stable) by the ledger's rank
        documents.sort(key=lambda d: d.resource_name)
        costs = ScanCosts.model_validate(scan.costs) if scan.costs is not None and team is None else None
        hours = ScanWindow.model_validate(scan.window).hours if scan.window is not None else 0
        figures = ledger(documents, costs, hours)  # a team's report: spend unknown (it is not split by team)
        settled = verdicts_by_resource(figures.rows, rule_title)
        summed.add(scan, figures, team_of, settled)
        verdicts = {key: (VERDICT_WORDS[kind], why) for key, (kind, why, _) in settled.items()}  # as the CSV words them
        write_csv(figures, csv_stream, header=summed.scans == 1, verdicts=verdicts)
    if summed.scans == 0:  # the header alone: the CSV is never an empty file
        write_csv(ledger(()), csv_stream)
    ordered = sorted(summed.accounts.values(), key=lambda a: (-a.saving_usd, a.account_id))
    team_bars = summed.team_bars()
    return OrgReportView(
        generated_at=now,
        region=region,
        team=team,
        scans=summed.scans,
        totals=summed.totals,
        accounts=ordered[:ACCOUNTS_SHOWN],
        accounts_total=len(ordered),
        by_team=team_bars[:TEAMS_SHOWN],
        teams_total=len(team_bars),
        findings=[_finding_view(d, verdict) for _, d, verdict in summed.top],
        findings_total=summed.findings,
    )


def _rank(row: LedgerRow) -> TopKey:
    """The row's place in the organisation: :func:`chipwise.presentation.rank` (read off the ledger's row), then
    the resource's name, its account and the finding's id."""
    d = row.document
    value = row.net_value_12m_usd if row.counted else row.saving_usd  # a row set apart: by its monthly saving
    return (not row.counted, -value, row.basis != "measured", d.resource_name, d.account_id, d.finding_id)


def _team(team_of: dict[str, str], document: FindingDocument) -> str:
    """The finding's team (its resource's team tag, live or the bill's), else :data:`NO_TEAM`."""
    return team_of.get(split_key(document.resource_id)[0], NO_TEAM)


def render_org_report(view: OrgReportView) -> str:
    return render("report/organisation.html.j2", report=view)


def write_org_report(view: OrgReportView, directory: Path) -> Path:
    """The report's HTML in ``directory`` (its CSV was written while the view was built); returns its path."""
    path = directory / view.filename
    path.write_text(render_org_report(view), encoding="utf-8")
    return path
