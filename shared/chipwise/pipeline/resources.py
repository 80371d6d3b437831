"""``chipwise resources`` and ``chipwise findings explain``: the verdicts of the latest scan of each account and
region, read one scan document at a time (an organisation's 50,000 verdicts never in memory at once)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field

from chipwise.analyse.verdicts import SETTLED_STATUSES, SettlingClass, settle_verdicts, settled_kind, settling_class
from chipwise.errors import NotFound
from chipwise.models.scan import ScanDocument
from chipwise.models.verdicts import ResourceVerdict
from chipwise.pipeline._store import store_scope
from chipwise.pipeline.findings import check_account
from chipwise.presentation import CountingFacts
from chipwise.rules.titles import rule_title
from chipwise.store import Session
from chipwise.store.repositories.accounts import ScanRepository
from chipwise.store.repositories.findings import FindingRepository
from chipwise.store.repositories.scan_verdicts import PageRow, ScanVerdictRepository, Selection


@dataclass(frozen=True)
class VerdictRow:
    """One resource's verdict with where it lives (the account, region and team of its scan)."""

    verdict: ResourceVerdict
    account_id: str
    region: str
    team: str | None
    scan_id: str


@dataclass
class VerdictPage:
    """The first ``limit`` verdicts selected, how many there are by verdict, and the scans they came from."""

    rows: list[VerdictRow] = field(default_factory=list)
    counts: Counter[str] = field(default_factory=Counter)
    scans: list[tuple[str, str, str]] = field(default_factory=list)  # (scan id, account, region)

    @property
    def total(self) -> int:
        return sum(self.counts.values())


def stream_verdicts(
    account: str | None, region: str | None, team: str | None = None, cursor: str | None = None
) -> Iterator[VerdictRow]:
    """Every verdict of the latest scan of each account and region (filtered), a scan document at a time; after
    the resource id ``cursor`` when given."""
    with store_scope() as session:
        if account is not None:
            check_account(session, account)
        scans = ScanRepository(session)
        scan_ids = scans.latest_ids(account, region)
        if not scan_ids and account is None and region is None:
            raise NotFound("no finished scan in the store: run `chipwise scan` (or `make demo`) first")
        waiting = cursor is not None
        for scan_id in scan_ids:
            document = scans.document(scan_id)
            if document is None:
                continue
            if not document.verdicts:
                if len(scan_ids) == 1:
                    raise NotFound(f"scan {document.scan_id[:8]} stored no verdicts (it predates them): scan again")
                continue
            teams = {r.id: r.team for r in document.resources}
            for v in settled(session, document).verdicts:
                if waiting:
                    waiting = v.resource_id != cursor
                    continue
                if team is not None and teams.get(v.resource_id) != team:
                    continue
                yield VerdictRow(v, document.account_id, document.region, teams.get(v.resource_id), document.scan_id)


def verdict_page(
    account: str | None, region: str | None, team: str | None, *, limit: int | None, cursor: str | None = None
) -> VerdictPage:
    """The first ``limit`` verdicts (every one when None) and the counts by verdict of all selected: the same as
    reading :func:`stream_verdicts` to its end, at the cost of the page. The counts are the stored verdicts'
    (``scan_verdicts``, one GROUP BY) moved, for each resource with a finding that settles it (open, withdrawn or
    suppressed), to the kind those findings decide now; only the documents of the page's scans are read."""
    with store_scope() as session:
        if account is not None:
            check_account(session, account)
        scan_ids = ScanRepository(session).latest_ids(account, region)
        if not scan_ids and account is None and region is None:
            raise NotFound("no finished scan in the store: run `chipwise scan` (or `make demo`) first")
        verdicts = ScanVerdictRepository(session)
        if len(scan_ids) == 1 and not verdicts.has_verdicts(scan_ids[0]):
            raise NotFound(f"scan {scan_ids[0][:8]} stored no verdicts (it predates them): scan again")
        page = VerdictPage()
        after = None
        if cursor is not None:
            after = verdicts.place_of(scan_ids, cursor)
            if after is None:  # a cursor no selected scan lists: nothing after it
                return page
        if not scan_ids:
            return page
        selection = Selection(scan_ids, team, after)
        seen: dict[str, tuple[str, str, str]] = {}
        for c in verdicts.counts(selection):
            page.counts[settled_kind(c.verdict, ())] += c.count
            seen.setdefault(c.scan_id, (c.scan_id, c.account_id, c.region))
        page.scans = sorted(seen.values(), key=lambda s: (s[1], s[2]))
        for stored, classes in _settling(verdicts, selection):
            page.counts[settled_kind(stored, ())] -= 1
            page.counts[settled_kind(stored, classes)] += 1
        page.counts = +page.counts  # no kind left at zero
        page.rows = _page_rows(session, verdicts.page(selection, limit))
        return page


def _settling(verdicts: ScanVerdictRepository, selection: Selection) -> Iterator[tuple[str, list[SettlingClass]]]:
    """Each selected verdict with a finding that settles it: its stored kind and its findings' classes."""
    found: dict[tuple[str, int], tuple[str, list[SettlingClass]]] = {}
    for f in verdicts.settling_findings(selection, SETTLED_STATUSES):
        facts = CountingFacts(
            status=f.status,
            excluded_from_totals=f.recommendation.get("excluded_from_totals"),
            action=f.recommendation["action"],
            effort=f.effort,
            evidence=f.evidence,
            estimated_monthly_savings_usd=f.estimated_monthly_savings_usd,
            measured_monthly_savings_usd=f.measured_monthly_savings_usd,
        )
        found.setdefault((f.scan_id, f.position), (f.stored, []))[1].append(settling_class(facts))
    return iter(found.values())


def _page_rows(session: Session, rows: list[PageRow]) -> list[VerdictRow]:
    """The page's verdicts as :func:`stream_verdicts` gives them: each scan's document read once, its verdicts on
    the page settled (only those kept)."""
    positions: dict[str, set[int]] = {}
    for row in rows:
        positions.setdefault(row.scan_id, set()).add(row.position)
    picked: dict[str, Iterator[ResourceVerdict]] = {}
    scans = ScanRepository(session)
    for scan_id, wanted in positions.items():
        document = scans.document(scan_id)
        if document is None:  # pragma: no cover - a verdict row is written with its document
            raise NotFound(f"scan {scan_id[:8]} has no document")
        chosen = [v for i, v in enumerate(document.verdicts) if i in wanted]
        picked[scan_id] = iter(settled(session, document.model_copy(update={"verdicts": chosen})).verdicts)
    return [VerdictRow(next(picked[r.scan_id]), r.account_id, r.region, r.team, r.scan_id) for r in rows]


def latest_scan(account: str | None, region: str | None) -> ScanDocument:
    """The latest finished scan with verdicts (of the account and region when given)."""
    with store_scope() as session:
        document = ScanRepository(session).latest_document(account, region)
        if document is None:
            raise NotFound("no finished scan in the store: run `chipwise scan` (or `make demo`) first")
        if not document.verdicts:
            raise NotFound(f"scan {document.scan_id[:8]} stored no verdicts (it predates them): scan again")
        return settled(session, document)


def settled(session: Session, document: ScanDocument) -> ScanDocument:
    """The scan's verdicts settled by its account's findings as they stand now, after the benchmarks
    (:func:`chipwise.analyse.verdicts.settle_verdicts`: waste only with a counted finding)."""
    findings = FindingRepository(session).documents(
        account_id=document.account_id, region=document.region, statuses=SETTLED_STATUSES
    )
    return document.model_copy(update={"verdicts": settle_verdicts(document.verdicts, findings, rule_title)})
