"""``chipwise resources`` and ``chipwise findings explain``: the verdicts of the latest scan of each account and
region, read one scan document at a time (an organisation's 50,000 verdicts never in memory at once)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field

from chipwise.analyse.verdicts import SETTLED_STATUSES, settle_verdicts
from chipwise.errors import NotFound
from chipwise.models.scan import ScanDocument
from chipwise.models.verdicts import ResourceVerdict
from chipwise.pipeline._store import store_scope
from chipwise.pipeline.findings import check_account
from chipwise.rules.titles import rule_title
from chipwise.store import Session
from chipwise.store.repositories.accounts import ScanRepository
from chipwise.store.repositories.findings import FindingRepository


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
    """The first ``limit`` verdicts (every one when None) and the counts by verdict of all selected."""
    page = VerdictPage()
    seen: set[str] = set()
    for row in stream_verdicts(account, region, team, cursor):
        page.counts[row.verdict.verdict] += 1
        if row.scan_id not in seen:
            seen.add(row.scan_id)
            page.scans.append((row.scan_id, row.account_id, row.region))
        if limit is None or len(page.rows) < limit:
            page.rows.append(row)
    return page


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
