"""The findings use cases of the command line: a bounded list (filters, totals and a page in SQL; the rest
streamed in batches), one finding with its history and audit trail, a suppression, and the realised savings."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from decimal import Decimal
from pathlib import Path
from typing import Any, NamedTuple

from chipwise.analyse.verdicts import SETTLED_STATUSES, verdict_words_by_resource
from chipwise.clock import utcnow
from chipwise.errors import NotFound
from chipwise.models.findings import FindingDocument
from chipwise.pipeline._store import store_scope
from chipwise.presentation import Ledger, ledger, ledger_row, owner_label
from chipwise.rules.titles import rule_title
from chipwise.settings import get_settings
from chipwise.store import Session
from chipwise.store.repositories.accounts import AccountRepository
from chipwise.store.repositories.finding_pages import FindingFilter, FindingPages, FindingTotals, Group
from chipwise.store.repositories.findings import FindingRepository, finding_document
from chipwise.store.repositories.inventory import ResourceRepository
from chipwise.store.repositories.realised import RealisedSavingRepository, RuleAccuracy, accuracy_by_rule
from chipwise.store.repositories.remediations import RemediationRepository

__all__ = [
    "FindingFilter",
    "FindingsPage",
    "Group",
    "ResourceVerdicts",
    "StreamedBatch",
    "list_findings",
    "rest_after",
    "stream_findings",
]

GROUPS_SHOWN = 10  # accounts and teams summed under a cut list


@dataclass(frozen=True)
class FindingsPage:
    """The top ``limit`` findings (ranked as the ledger ranks them), with the totals of every finding selected."""

    figures: Ledger
    owners: dict[str, str]
    totals: FindingTotals
    store_empty: bool
    next_cursor: str | None  # the id to pass as --cursor for the next page; None when this is the last
    by_account: list[Group] = field(default_factory=list)  # when the page is cut: the largest accounts
    by_team: list[Group] = field(default_factory=list)  # and teams, over every selected finding

    @property
    def documents(self) -> list[FindingDocument]:
        return [r.document for r in self.figures.rows]

    @property
    def rest_count(self) -> int:
        return self.totals.count - len(self.figures.rows)


def with_team_keys(f: FindingFilter) -> FindingFilter:
    """The filter with the configured team tag keys (a --team filter matches them)."""
    keys = tuple(get_settings().team_tag_keys)
    return FindingFilter(**{**f.__dict__, "team_tag_keys": keys})


def check_account(session: Session, account: str) -> None:
    """An account the store does not know is an error naming (some of) the ones it does, not an empty list."""
    known = AccountRepository(session).known_ids()
    if account not in known:
        shown = ", ".join(known[:10]) + (f" and {len(known) - 10} more" if len(known) > 10 else "")
        held = f"it holds {shown}" if known else "it holds no account yet: run `chipwise scan` first"
        raise NotFound(f"no account {account} in the store: {held}")


def _owners(session: Session, documents: list[FindingDocument]) -> dict[str, str]:
    tags = ResourceRepository(session).tags_by_key(d.resource_id for d in documents)
    return {key: owner_label(value) for key, value in tags.items()}


def list_findings(f: FindingFilter, *, limit: int | None, cursor: str | None = None) -> FindingsPage:
    """One page: totals and the page in SQL, so a store of 50,000 findings costs what its first page costs."""
    f = with_team_keys(f)
    with store_scope() as session:
        if f.account_id is not None:
            check_account(session, f.account_id)
        pages = FindingPages(session)
        totals = pages.totals(f)
        documents = pages.page(f, limit=None if limit is None else limit + 1, after=cursor)
        more = limit is not None and len(documents) > limit
        documents = documents[:limit] if limit is not None else documents
        empty = totals.count == 0 and FindingRepository(session).count() == 0
        owners = _owners(session, documents)
        cut = totals.count > len(documents)
        accounts = pages.by_account(f, limit=GROUPS_SHOWN) if cut and f.account_id is None else []
        teams = pages.by_team(f)[:GROUPS_SHOWN] if cut and f.team is None else []
    return FindingsPage(
        figures=ledger(documents),
        owners=owners,
        totals=totals,
        store_empty=empty,
        next_cursor=documents[-1].finding_id if more and documents else None,
        by_account=accounts,
        by_team=teams,
    )


ResourceVerdicts = dict[str, tuple[str, str]]  # resource id -> (its verdict in words, why)
STREAM_BATCH = 1_000


def resource_verdicts(session: Session, documents: Sequence[FindingDocument]) -> ResourceVerdicts:
    """The verdict of each resource of ``documents``, from every finding that speaks for it (open, suppressed or
    withdrawn, whatever the list's filter selected), settled by :func:`chipwise.analyse.verdicts.verdicts_by_resource`:
    the source ``chipwise resources``, ``findings explain`` and the report read. A resource none of whose findings
    speaks for it any more (only resolved ones) has none here."""
    settled = FindingRepository(session).documents_of_resources(
        {d.resource_id for d in documents}, account_ids={d.account_id for d in documents}, statuses=SETTLED_STATUSES
    )
    return verdict_words_by_resource((ledger_row(d) for d in settled), rule_title)


class StreamedBatch(NamedTuple):
    """One batch of a stream: ranked as the ledger ranks, with its resources' owners and verdicts, and the id of
    its last finding in the store's order (the ``cursor`` that continues after it: the ledger's ranking within a
    batch may print another finding last)."""

    figures: Ledger
    owners: dict[str, str]
    verdicts: ResourceVerdicts
    last_id: str


def stream_findings(
    f: FindingFilter, *, limit: int | None = None, cursor: str | None = None, verdicts: bool = True
) -> Iterator[StreamedBatch]:
    """Every selected finding (or the first ``limit``), a batch at a time, each batch ranked as the ledger ranks,
    with its resources' owners and verdicts (a store of any size in flat memory: CSV and JSON lines). A batch's
    verdicts come from all of its resources' findings, read for that batch: memory stays bounded by the batch.
    ``verdicts=False`` (JSON, which carries no resource verdict) leaves them empty and reads no finding twice."""
    f = with_team_keys(f)
    with store_scope() as session:
        if f.account_id is not None:
            check_account(session, f.account_id)

        def done(batch: list[FindingDocument], owners: dict[str, str]) -> StreamedBatch:
            settled = resource_verdicts(session, batch) if verdicts else {}
            return StreamedBatch(ledger(batch), owners, settled, batch[-1].finding_id)

        batch: list[FindingDocument] = []
        owners: dict[str, str] = {}
        for document, tags in FindingPages(session).stream_with_tags(f, after=cursor, limit=limit):
            batch.append(document)
            if tags:  # as _owners: a resource the store holds, its owner and team in words
                owners[document.resource_id] = owner_label(tags)
            if len(batch) >= STREAM_BATCH:
                yield done(batch, owners)
                batch, owners = [], {}
        if batch:
            yield done(batch, owners)


def rest_after(f: FindingFilter, last_id: str) -> tuple[int, FindingTotals]:
    """What a stream cut by a limit left: how many selected findings follow ``last_id`` (a batch's
    :attr:`StreamedBatch.last_id`) in the list's order, and the totals of every selected finding."""
    f = with_team_keys(f)
    with store_scope() as session:
        pages = FindingPages(session)
        return pages.totals(f, after=last_id).count, pages.totals(f)


@dataclass(frozen=True)
class FindingDetail:
    """One finding as ``chipwise findings show`` prints it."""

    document: FindingDocument
    suppression: dict[str, Any]
    history: list[dict[str, Any]]
    audit: list[dict[str, Any]]


def finding_detail(finding_id: str) -> FindingDetail:
    """A finding (by id or unambiguous prefix), the history of its recommendation and its remediation audit."""
    with store_scope() as session:
        repository = FindingRepository(session)
        row = repository.get(finding_id)
        history = [
            {
                "at": h.created_at.isoformat(),
                "source": h.source,
                "action": h.action,
                "target": h.target_instance_type,
                "count": h.target_count,
                "monthly_savings_usd": None if h.monthly_savings_usd is None else f"{h.monthly_savings_usd:.2f}",
                "confidence": h.confidence,
                "withdrawn": h.withdrawn,
            }
            for h in repository.history(row.id)
        ]
        audit = [
            {
                "at": a.created_at.isoformat(),
                "event": a.event,
                "action": a.action,
                "status": a.status,
                "who": f"{a.actor} ({a.source})",
                "calls": [f"{c['service']}.{c['operation']}" for c in a.calls],
                "result": a.result,
            }
            for a in RemediationRepository(session).for_finding(row.id)
        ]
        return FindingDetail(
            document=finding_document(row),
            suppression={"until": row.suppressed_until, "reason": row.suppress_reason},
            history=history,
            audit=audit,
        )


@dataclass(frozen=True)
class Suppressed:
    rule_id: str
    resource_name: str
    until: datetime | None


def suppress_finding(finding_id: str, *, until: datetime, reason: str) -> Suppressed:
    """Hide a finding until a moment, with a reason kept beside it."""
    with store_scope() as session:
        finding = FindingRepository(session).suppress(finding_id, until=until, reason=reason, now=utcnow())
        return Suppressed(finding.rule_id, finding.resource_name, finding.suppressed_until)


@dataclass(frozen=True)
class RealisedView:
    """Measured fixes (the first ``limit``), how many there are in all, and each rule's accuracy."""

    fixes: list[dict[str, Any]]
    total: int
    rules: list[RuleAccuracy] = field(default_factory=list)


EVERY_STATUS = ("open", "suppressed", "resolved", "withdrawn")


def finding_ids(session: Session, *, account: str | None, region: str | None, team: str | None) -> set[str] | None:
    """The ids of every finding (any status) of the account, region and team; None when no filter is given."""
    if account is None and region is None and team is None:
        return None
    selected = FindingFilter(statuses=EVERY_STATUS, account_id=account, region=region, team=team)
    return FindingPages(session).ids(with_team_keys(selected))


def realised_savings(
    account: str | None, *, limit: int | None, region: str | None = None, team: str | None = None
) -> RealisedView:
    """What resolved findings really saved, each next to its estimate, and each rule's accuracy (of every fix,
    or of those of the account, region and team)."""
    with store_scope() as session:
        repository = RealisedSavingRepository(session)
        rows = repository.listed(account)
        wanted = finding_ids(session, account=account, region=region, team=team)
        if wanted is not None:
            rows = [r for r in rows if r.finding_id in wanted]
        fixes = [
            {
                "finding_id": r.finding_id,
                "account_id": r.account_id,
                "region": r.region,
                "resource": r.resource_name,
                "rule": r.rule_id,
                "cause": r.cause,
                "status": r.status,
                "estimated_monthly_usd": r.estimated_monthly_savings_usd,
                "realised_monthly_usd": r.realised_monthly_savings_usd,
                "days_before": r.before_days,
                "days_after": r.after_days,
                "resolved_at": r.resolved_at,
            }
            for r in (rows if limit is None else rows[:limit])
        ]
        return RealisedView(fixes=fixes, total=len(rows), rules=accuracy_by_rule(rows))


def measured_total(rules: list[RuleAccuracy]) -> Decimal:
    return sum((r.realised_monthly_usd for r in rules), Decimal(0))


@dataclass(frozen=True)
class Reevaluated:
    """The open findings after running the rules again on the store, and the accounts it covered."""

    documents: list[FindingDocument]
    accounts: list[str]


def reevaluate(account: str | None, region: str | None, config: Path | None) -> Reevaluated:
    """Run the rules again on what the store holds (no AWS calls), as the latest scan ran them (its moment, its
    window, its bill): an unchanged store gives the same findings; a policy file tries thresholds without
    rescanning."""
    from chipwise.pipeline.evaluate import reevaluate_account
    from chipwise.pipeline.policy import load_policy
    from chipwise.presentation import ranked

    policy = load_policy(config)
    documents: list[FindingDocument] = []
    with store_scope() as session:
        if account is not None:
            check_account(session, account)
        accounts = [account] if account is not None else AccountRepository(session).known_ids()
        if not accounts:
            raise NotFound("the store holds no account yet: run `chipwise scan` (or `make demo`) first")
        for account_id in accounts:
            documents += reevaluate_account(
                session,
                account_id=account_id,
                region=region or get_settings().region,
                now=utcnow(),
                policy=policy,
            ).findings
    return Reevaluated(documents=ranked(documents), accounts=accounts)
