"""Findings read a page at a time, for an organisation's store: filters (account, region, team, status, rule,
least saving) and totals computed in SQL, pages by keyset (after a finding id), never the whole table in memory.

The order is the list's: largest estimated saving first, then rule, resource name and id (a total order, so a
cursor resumes exactly where the previous page stopped). A finding's team is the first of ``team_tag_keys`` its
resource's live tags carry, else the team the latest scan of its account and region gave the resource (from the
cost allocation tags the bill carries for it: ``scan_verdicts``), else "(no team tag)"."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from datetime import datetime
from decimal import Decimal
from typing import Any

from sqlalchemy import and_, func, literal, or_, select
from sqlalchemy.orm import aliased

from chipwise.errors import NotFound
from chipwise.models.findings import FindingDocument
from chipwise.store.repositories.findings import document_columns, document_of_columns
from chipwise.store.repositories.records import Repository
from chipwise.store.tables import Finding, Resource, Scan, ScanVerdict

BATCH = 500  # rows fetched at a time when streaming every finding


@dataclass(frozen=True)
class FindingFilter:
    """Which findings a list shows (None: any)."""

    statuses: tuple[str, ...] = ("open",)
    account_id: str | None = None
    region: str | None = None
    team: str | None = None
    team_tag_keys: tuple[str, ...] = ()
    min_savings: Decimal | None = None
    rule_ids: tuple[str, ...] | None = None
    first_seen_after: datetime | None = None


NO_TEAM = "(no team tag)"  # the team of a finding whose resource carries none of the team tag keys


@dataclass(frozen=True)
class FindingTotals:
    """Every finding the filter selects: how many and their estimated saving a month (before overlaps)."""

    count: int
    estimated_monthly_usd: Decimal


@dataclass(frozen=True)
class Group(FindingTotals):
    """One account's or team's findings (``key``): how many and their estimated saving a month."""

    key: str


def _groups(rows: Iterable[Any]) -> list[Group]:
    """(key, count, estimated saving a month) rows as groups."""
    return [Group(key=str(k), count=int(n), estimated_monthly_usd=Decimal(str(saved))) for k, n, saved in rows]


def _team_matches(team: str, keys: Sequence[str]) -> Any:
    """The findings whose team (:func:`_team_of`) is ``team``: what :meth:`FindingPages.by_team` counts under that
    key, so a resource tagged for two teams under two keys is the first key's team's alone."""
    # The resource's own row (account, ARN and variant: what by_team joins on), found through the unique (arn,
    # variant) index; matched on account and ARN alone, SQLite chose the account index and read every resource of
    # the finding's account for each finding (notify's team digests: 7.07x the CPU at 10x the findings). An alias,
    # so that the test stays inside the subquery in a statement that joins the resources itself (by_team).
    own = aliased(Resource)
    if not keys:
        return literal(team == NO_TEAM)
    live = (
        select(_live(keys, own))
        .where(
            own.account_id == Finding.account_id,
            own.arn == Finding.resource_arn,
            own.variant == Finding.resource_variant,
        )
        .limit(1)
        .scalar_subquery()
    )
    return func.coalesce(live, _scanned_team(), NO_TEAM) == team


def _live(keys: Sequence[str], resource: Any) -> Any:
    """The resource's team from its live tags alone: the first of ``keys`` they name (NULL when none does; SQLite's
    coalesce takes two arguments or more)."""
    named = [resource.tags[k].as_string() for k in keys]
    return named[0] if len(named) == 1 else func.coalesce(*named)


def _scanned_team() -> Any:
    """The team the latest scan of the finding's account and region gave its resource (``scan_verdicts`` keeps that
    scan's rows alone): its live tags, else the cost allocation tags the bill carries for it, so that a team the
    bill alone names is the finding's too, as ``chipwise resources`` and the reports have it. NULL without one."""
    return (
        select(ScanVerdict.team)
        .join(Scan, Scan.id == ScanVerdict.scan_id)
        .where(
            Scan.account_id == Finding.account_id,
            Scan.region == Finding.region,
            ScanVerdict.resource_arn == Finding.resource_arn,
            ScanVerdict.resource_variant == Finding.resource_variant,
            ScanVerdict.team.is_not(None),
        )
        .limit(1)
        .scalar_subquery()
    )


def _where(stmt: Any, f: FindingFilter) -> Any:
    stmt = stmt.where(Finding.status.in_(list(f.statuses)))
    if f.account_id is not None:
        stmt = stmt.where(Finding.account_id == f.account_id)
    if f.region is not None:
        stmt = stmt.where(Finding.region == f.region)
    if f.min_savings is not None:
        stmt = stmt.where(Finding.estimated_monthly_savings_usd >= f.min_savings)
    if f.rule_ids is not None:
        stmt = stmt.where(Finding.rule_id.in_(list(f.rule_ids)))
    if f.team is not None:
        stmt = stmt.where(_team_matches(f.team, f.team_tag_keys))
    if f.first_seen_after is not None:
        stmt = stmt.where(Finding.first_seen > f.first_seen_after)
    return stmt


_ORDER = (Finding.estimated_monthly_savings_usd.desc(), Finding.rule_id, Finding.resource_name, Finding.id)


def _team_of(keys: Sequence[str], resource: Any = Resource) -> Any:
    """A finding's team: the first of ``keys`` its resource's live tags name, else the team its latest scan gave it
    (:func:`_scanned_team`: the bill's cost allocation tags), else "(no team tag)"."""
    if not keys:
        return literal(NO_TEAM)
    return func.coalesce(*(resource.tags[k].as_string() for k in keys), _scanned_team(), NO_TEAM)


def _with_resource(stmt: Any) -> Any:
    """``stmt`` over the findings, each with its resource's own row (account, ARN and variant) when the store holds
    one."""
    return stmt.select_from(Finding).outerjoin(
        Resource,
        and_(
            Resource.account_id == Finding.account_id,
            Resource.arn == Finding.resource_arn,
            Resource.variant == Finding.resource_variant,
        ),
    )


class FindingPages(Repository):
    """Pages, totals and per-account or per-team aggregates of the findings a filter selects."""

    def ids(self, f: FindingFilter) -> set[str]:
        """The ids of the findings the filter selects (for lists keyed by finding: realised savings, benchmarks)."""
        return {str(i) for i in self.session.scalars(_where(select(Finding.id), f))}

    def totals(self, f: FindingFilter, *, after: str | None = None) -> FindingTotals:
        """How many findings the filter selects and their estimated saving a month (those after the finding
        ``after`` in the list's order, when given: what a page cut by a limit leaves)."""
        stmt = _where(select(func.count(), func.coalesce(func.sum(Finding.estimated_monthly_savings_usd), 0)), f)
        if after is not None:
            stmt = stmt.where(self._after(after))
        count, total = self.session.execute(stmt).one()
        return FindingTotals(count=int(count or 0), estimated_monthly_usd=Decimal(str(total or 0)))

    def page(self, f: FindingFilter, *, limit: int | None, after: str | None = None) -> list[FindingDocument]:
        """Up to ``limit`` findings (every one when None) after the finding ``after`` in the list's order."""
        stmt = self._ordered(f, after)
        if limit is not None:
            stmt = stmt.limit(limit)
        # Columns, not entities: run on the session's connection (its transaction), without the ORM's loading of
        # each row (an organisation's report reads every finding, a page per account and region).
        if self.session.autoflush:
            self.session.flush()  # as the session's own execute would
        result = self.session.connection().execute(stmt)
        keys = tuple(result.keys())  # once: a row's ``_fields`` builds its list of names again for every row
        # fetched at once (iterating the result fetches a row at a time)
        return [document_of_columns(dict(zip(keys, row, strict=True))) for row in result.all()]

    def stream(
        self, f: FindingFilter, *, after: str | None = None, limit: int | None = None, batch: int = BATCH
    ) -> Iterator[FindingDocument]:
        """Every finding the filter selects (after the finding ``after``; the first ``limit`` when given) in the
        list's order: one statement, its rows fetched ``batch`` at a time (a server-side cursor on PostgreSQL), so
        memory is flat in the number of findings and the database sorts once. A statement per page (the keyset
        after the last row) sorted what was left again for each page: a dump's CPU grew with the square of the
        findings on SQLite."""
        for document, _ in self._stream(self._ordered(f, after), limit, batch):
            yield document

    def stream_with_tags(
        self, f: FindingFilter, *, after: str | None = None, limit: int | None = None, batch: int = BATCH
    ) -> Iterator[tuple[FindingDocument, dict[str, str]]]:
        """:meth:`stream`, each finding with its resource's live tags (those of the resource row of its ARN and
        variant, as :meth:`ResourceRepository.tags_by_key` reads them; empty when the store holds no such row),
        read by the same statement (no lookup of a batch's resources by ARN lists)."""
        tags = select(Resource.tags).where(
            Resource.arn == Finding.resource_arn, Resource.variant == Finding.resource_variant
        )
        stmt = self._ordered(f, after).add_columns(tags.scalar_subquery().label("resource_tags"))
        for document, found in self._stream(stmt, limit, batch):
            yield document, {str(k): str(v) for k, v in (found or {}).items()}

    def _stream(self, stmt: Any, limit: int | None, batch: int) -> Iterator[tuple[FindingDocument, Any]]:
        """Each row's document and, when ``stmt`` selects it, its ``resource_tags`` (None otherwise)."""
        if limit is not None:
            stmt = stmt.limit(limit)
        result = self.session.execute(stmt, execution_options={"yield_per": batch})
        keys = tuple(result.keys())
        try:
            for rows in result.partitions():
                for row in rows:
                    columns = dict(zip(keys, row, strict=True))
                    yield document_of_columns(columns), columns.get("resource_tags")
        finally:
            result.close()  # a reader that stops early (a capped stream) leaves no open cursor behind

    def _ordered(self, f: FindingFilter, after: str | None) -> Any:
        stmt = _where(select(*document_columns()), f)
        if after is not None:
            stmt = stmt.where(self._after(after))
        return stmt.order_by(*_ORDER)

    def by_account(self, f: FindingFilter, *, limit: int | None = None) -> list[Group]:
        """Per-account counts and estimated savings, largest first."""
        saving = func.coalesce(func.sum(Finding.estimated_monthly_savings_usd), 0)
        stmt = _where(select(Finding.account_id, func.count(), saving), f).group_by(Finding.account_id)
        stmt = stmt.order_by(saving.desc(), Finding.account_id)
        if limit is not None:
            stmt = stmt.limit(limit)
        return _groups(self.session.execute(stmt))

    def by_team(self, f: FindingFilter) -> list[Group]:
        """Per-team counts and estimated savings (the first team tag key that names a team), largest first;
        findings of untagged resources under "(no team tag)"."""
        if not f.team_tag_keys:
            total = self.totals(f)
            return _groups([(NO_TEAM, total.count, total.estimated_monthly_usd)] if total.count else [])
        team = _team_of(f.team_tag_keys)
        saving = func.coalesce(func.sum(Finding.estimated_monthly_savings_usd), 0)
        joined = _with_resource(select(team.label("team"), func.count(), saving))
        stmt = _where(joined, f).group_by(team).order_by(saving.desc(), team)
        return _groups(self.session.execute(stmt))

    def top_by_team(self, f: FindingFilter, *, limit: int) -> dict[str, list[FindingDocument]]:
        """Each team's first ``limit`` findings in the list's order, keyed by the team :meth:`by_team` counts
        them under, in one statement (a window over the findings joined to their resources). A page per team
        read every open finding once per team: on SQLite 25 teams cost 1.9 s at 20,000 open findings."""
        if not f.team_tag_keys or f.team is not None:  # one team: its page
            return {f.team or NO_TEAM: self.page(f, limit=limit)}
        team = _team_of(f.team_tag_keys)
        ranked = _where(
            _with_resource(
                select(
                    Finding.id.label("finding_id"),
                    team.label("team"),
                    func.row_number().over(partition_by=team, order_by=_ORDER).label("place"),
                )
            ),
            f,
        ).subquery()
        stmt = (
            select(*document_columns(), ranked.c.team)
            .select_from(Finding)
            .join(ranked, ranked.c.finding_id == Finding.id)
            .where(ranked.c.place <= limit)
            .order_by(ranked.c.team, *_ORDER)
        )
        result = self.session.execute(stmt)
        keys = tuple(result.keys())
        tops: dict[str, list[FindingDocument]] = {}
        for row in result:
            columns = dict(zip(keys, row, strict=True))
            tops.setdefault(str(columns.pop("team")), []).append(document_of_columns(columns))
        return tops

    def _after(self, finding_id: str) -> Any:
        found = self.session.execute(
            select(Finding.estimated_monthly_savings_usd, Finding.rule_id, Finding.resource_name, Finding.id).where(
                Finding.id == finding_id
            )
        ).first()
        if found is None:
            raise NotFound(f"no finding {finding_id!r} to continue after: give the last id a page printed")
        saving, rule, name, fid = found
        return or_(
            Finding.estimated_monthly_savings_usd < saving,
            and_(Finding.estimated_monthly_savings_usd == saving, Finding.rule_id > rule),
            and_(
                Finding.estimated_monthly_savings_usd == saving, Finding.rule_id == rule, Finding.resource_name > name
            ),
            and_(
                Finding.estimated_monthly_savings_usd == saving,
                Finding.rule_id == rule,
                Finding.resource_name == name,
                Finding.id > fid,
            ),
        )
