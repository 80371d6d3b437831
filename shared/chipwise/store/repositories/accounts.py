"""Accounts and scans: :class:`AccountRepository` and :class:`ScanRepository` return :class:`AccountRecord` and
:class:`ScanRecord`; a scan is opened (``open``), finished with its document (``finish``) or stored failed at its
start (``add_failed``), and the account remembers when it was last scanned (``scanned``)."""

from __future__ import annotations

import builtins
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import date, datetime
from typing import Any

from sqlalchemy import Select, func, select, update
from sqlalchemy.dialects import postgresql, sqlite

from chipwise.models.scan import ScanDocument
from chipwise.store.base import SerializedJson
from chipwise.store.repositories.records import Repository, record_of
from chipwise.store.repositories.scan_verdicts import ScanVerdictRepository, Verdict
from chipwise.store.tables import Account, Finding, Scan

FINISHED = ("succeeded", "partial")  # a scan that wrote its document


@dataclass(frozen=True, slots=True)
class AccountRecord:
    account_id: str
    name: str | None
    role_arn: str | None
    created_at: datetime
    last_scan_at: datetime | None


@dataclass(frozen=True, slots=True)
class ScanRecord:
    """One scan of an account and region (:mod:`chipwise.store.tables.scans` says what each column holds)."""

    id: str
    account_id: str
    region: str
    status: str  # running|succeeded|partial|failed|abandoned
    started_at: datetime
    finished_at: datetime | None
    window_start: date
    window_end: date
    resource_count: int
    api_calls: dict[str, Any]
    timings: dict[str, Any]
    errors: list[Any]
    document: dict[str, Any] | None


@dataclass(frozen=True)
class ScanFigures:
    """What a report of many scans needs of one: its id and its document's costs and window (as JSON)."""

    id: str
    account_id: str
    region: str
    costs: dict[str, Any] | None
    window: dict[str, Any] | None


def _scan(row: Scan | None) -> ScanRecord | None:
    return None if row is None else record_of(ScanRecord, row)


def _scans(rows: Iterable[Scan]) -> list[ScanRecord]:
    return [record_of(ScanRecord, row) for row in rows]


class AccountRepository(Repository):
    def get(self, account_id: str) -> AccountRecord | None:
        row = self.session.get(Account, account_id)
        return None if row is None else record_of(AccountRecord, row)

    def ensure(self, account_id: str, name: str | None = None, role_arn: str | None = None) -> AccountRecord:
        """The account, created if absent (its name and role kept unless given)."""
        return record_of(AccountRecord, self._ensure(account_id, name, role_arn))

    def scanned(self, account_id: str, at: datetime) -> None:
        """The account's last scan finished ``at`` (the account created if absent)."""
        self._ensure(account_id).last_scan_at = at

    def _ensure(self, account_id: str, name: str | None = None, role_arn: str | None = None) -> Account:
        """The account's row, created if absent. An insert-if-absent, so two scans of a new account at once both
        go on (a read-then-insert would let the second fail on the primary key)."""
        account = self.session.get(Account, account_id)
        if account is None:
            dialect = self.session.get_bind().dialect.name
            insert = postgresql.insert if dialect == "postgresql" else sqlite.insert
            self.session.execute(
                insert(Account)
                .values(account_id=account_id, name=name, role_arn=role_arn)
                .on_conflict_do_nothing(index_elements=["account_id"])
            )
            account = self.session.get(Account, account_id)
            if account is None:  # pragma: no cover - the row was just inserted or found
                raise LookupError(f"account {account_id} neither inserted nor found")
        account.name = name or account.name
        account.role_arn = role_arn or account.role_arn
        return account

    def list(self) -> list[AccountRecord]:
        return [
            record_of(AccountRecord, row) for row in self.session.scalars(select(Account).order_by(Account.account_id))
        ]

    def known_ids(self) -> builtins.list[str]:
        """Every account the store knows: registered, scanned, or with findings (sorted)."""
        ids = set(self.session.scalars(select(Account.account_id)))
        ids.update(self.session.scalars(select(Scan.account_id).distinct()))
        ids.update(self.session.scalars(select(Finding.account_id).distinct()))
        return sorted(ids)


class ScanRepository(Repository):
    def open(
        self, scan_id: str, account_id: str, region: str, *, started_at: datetime, window_start: date, window_end: date
    ) -> None:
        """A scan that starts now (``running``)."""
        self._add(scan_id, account_id, region, window_start, window_end, status="running", started_at=started_at)

    def add_failed(
        self,
        scan_id: str,
        account_id: str,
        region: str,
        *,
        at: datetime,
        window_start: date,
        window_end: date,
        errors: list[Any],
        document: dict[str, Any],
    ) -> None:
        """A scan that could not start: ``failed`` at once, with its errors and document."""
        columns = {"status": "failed", "started_at": at, "finished_at": at, "errors": errors, "document": document}
        self._add(scan_id, account_id, region, window_start, window_end, **columns)

    def _add(
        self, scan_id: str, account_id: str, region: str, window_start: date, window_end: date, **columns: Any
    ) -> None:
        """A new scan of ``account_id`` in ``region`` over the window, with ``columns`` (flushed at once)."""
        self.session.add(
            Scan(
                id=scan_id,
                account_id=account_id,
                region=region,
                window_start=window_start,
                window_end=window_end,
                **columns,
            )
        )
        self.session.flush()

    def finish(
        self,
        scan_id: str,
        *,
        status: str,
        finished_at: datetime,
        resource_count: int,
        api_calls: dict[str, Any],
        timings: dict[str, Any],
        errors: list[Any],
        document_json: str,
        verdicts: Sequence[Verdict] | None = None,
    ) -> None:
        """The scan's outcome and its document (given as JSON text, written as it is; ``verdicts``, the document's
        own when the caller holds them, spare decoding it again for the verdict rows)."""
        scan = self.session.get(Scan, scan_id)
        if scan is None:  # pragma: no cover - a scan is finished only after it was opened
            raise LookupError(f"no scan {scan_id}")
        scan.status = status
        scan.finished_at = finished_at
        scan.resource_count = resource_count
        scan.api_calls = api_calls
        scan.timings = timings
        scan.errors = errors
        self.save_document(scan_id, document_json, verdicts)

    def get(self, scan_id: str) -> ScanRecord | None:
        return _scan(self.session.get(Scan, scan_id))

    def save_document(self, scan_id: str, document_json: str, verdicts: Sequence[Verdict] | None = None) -> None:
        """Store a scan's document given as JSON text (written as it is: never parsed and serialised again), and its
        verdicts as rows (:class:`ScanVerdictRepository`: what ``chipwise resources`` counts), kept for the latest
        finished scan of its account and region only (:meth:`latest_ids`: the one ``chipwise resources`` reads)."""
        stmt = update(Scan).where(Scan.id == scan_id).values(document=SerializedJson(document_json))
        self.session.execute(stmt.execution_options(synchronize_session=False))
        rows = ScanVerdictRepository(self.session)
        rows.replace(scan_id, document_json, verdicts)
        account_id, region = self.session.execute(select(Scan.account_id, Scan.region).where(Scan.id == scan_id)).one()
        rows.keep_only(account_id, region, self.latest_ids(account_id, region))
        for held in self.session.identity_map.values():  # a loaded scan reads its document again, as a dict
            if isinstance(held, Scan) and held.id == scan_id:
                self.session.expire(held, ["document"])

    def latest(self, account_id: str | None = None) -> ScanRecord | None:
        stmt = select(Scan).order_by(Scan.started_at.desc()).limit(1)
        if account_id:
            stmt = stmt.where(Scan.account_id == account_id)
        return _scan(self.session.scalars(stmt).first())

    def latest_document(self, account_id: str | None, region: str | None = None) -> ScanDocument | None:
        """The document of the latest finished scan (by its window) of the account (any when None), in ``region``
        when given."""
        scan = self.latest_finished(account_id, region)
        return ScanDocument.model_validate(scan.document) if scan is not None and scan.document else None

    def latest_ids(self, account_id: str | None, region: str | None = None) -> builtins.list[str]:
        """The id of the latest finished scan with a document of each (account, region), filtered when given, in
        account and region order (one statement; :meth:`document` reads the documents one at a time)."""
        stmt = select(Scan.id, Scan.account_id, Scan.region).where(
            Scan.status.in_(FINISHED), Scan.document.is_not(None)
        )
        if account_id is not None:
            stmt = stmt.where(Scan.account_id == account_id)
        if region is not None:
            stmt = stmt.where(Scan.region == region)
        stmt = stmt.order_by(
            Scan.account_id, Scan.region, Scan.window_end.desc(), Scan.started_at.desc(), Scan.id.desc()
        )
        latest: dict[tuple[str, str], str] = {}
        for scan_id, account, scanned_region in self.session.execute(stmt):
            latest.setdefault((account, scanned_region), scan_id)
        return builtins.list(latest.values())

    def document(self, scan_id: str) -> ScanDocument | None:
        """One stored scan's document (None when it has none)."""
        document = self.session.scalar(select(Scan.document).where(Scan.id == scan_id))
        return ScanDocument.model_validate(document) if document else None

    def finished_places(self) -> list[tuple[str, str, int]]:
        """(account, region, number of finished scans) for every place the store has a finished scan of."""
        stmt = (
            select(Scan.account_id, Scan.region, func.count())
            .where(Scan.status.in_(FINISHED), Scan.document.is_not(None))
            .group_by(Scan.account_id, Scan.region)
            .order_by(Scan.account_id, Scan.region)
        )
        return [(str(a), str(r), int(n)) for a, r, n in self.session.execute(stmt)]

    def finished_since(self, since: datetime) -> list[ScanRecord]:
        stmt = select(Scan).where(Scan.finished_at >= since).order_by(Scan.finished_at)
        return _scans(self.session.scalars(stmt))

    def mark_abandoned(self, account_id: str, region: str, started_before: datetime, at: datetime) -> int:
        """Scans of the account and region still ``running`` that started before ``started_before``: marked
        ``abandoned`` (finished ``at``); how many."""
        result = self.session.execute(
            update(Scan)
            .where(
                Scan.account_id == account_id,
                Scan.region == region,
                Scan.status == "running",
                Scan.started_at < started_before,
            )
            .values(status="abandoned", finished_at=at)
            .execution_options(synchronize_session=False)
        )
        return int(result.rowcount or 0)  # type: ignore[attr-defined]

    def with_id_prefix(self, prefix: str, limit: int = 2) -> list[ScanRecord]:
        """Up to ``limit`` scans whose id starts with ``prefix``."""
        stmt = select(Scan).where(Scan.id.startswith(prefix, autoescape=True)).limit(limit)
        return _scans(self.session.scalars(stmt))

    def latest_finished(
        self,
        account_id: str | None = None,
        region: str | None = None,
        *,
        with_document: bool = True,
        started_since: datetime | None = None,
    ) -> ScanRecord | None:
        """The latest succeeded or partial scan (by its window, then its start; with a document unless told),
        of an account and region when given, started at or after ``started_since`` when given."""
        stmt = select(Scan).where(Scan.status.in_(FINISHED))
        if with_document:
            stmt = stmt.where(Scan.document.is_not(None))
        if account_id:
            stmt = stmt.where(Scan.account_id == account_id)
        if region:
            stmt = stmt.where(Scan.region == region)
        if started_since is not None:
            stmt = stmt.where(Scan.started_at >= started_since)
        order = (Scan.window_end.desc(), Scan.started_at.desc(), Scan.id.desc())
        return _scan(self.session.scalars(stmt.order_by(*order).limit(1)).first())

    def latest_finished_figures(self, region: str | None = None) -> list[ScanFigures]:
        """The latest finished scan (as :meth:`latest_finished` finds it) of every place the store has one of (of
        ``region`` when given), by account then region, each with only its document's costs and window (read in
        SQL: not the document's resources and verdicts), in one statement. Each place's latest scan is chosen on the
        scans' columns alone (a window function over :meth:`latest_finished`'s order), then only the chosen scans'
        documents are read. A statement per place ordered by the window with the costs and window selected made
        SQLite extract them from every scan of the place before sorting (30 days of history: 30 documents each)."""
        order = (Scan.window_end.desc(), Scan.started_at.desc(), Scan.id.desc())
        place = func.row_number().over(partition_by=(Scan.account_id, Scan.region), order_by=order)
        ranked = select(Scan.id, place.label("place")).where(Scan.status.in_(FINISHED), Scan.document.is_not(None))
        if region is not None:
            ranked = ranked.where(Scan.region == region)
        chosen = ranked.subquery()
        document = Scan.document
        stmt = (
            select(Scan.id, Scan.account_id, Scan.region, document["costs"], document["window"])
            .join(chosen, chosen.c.id == Scan.id)
            .where(chosen.c.place == 1)
            .order_by(Scan.account_id, Scan.region)
        )
        return [
            ScanFigures(str(scan_id), str(account), str(where), costs, window)
            for scan_id, account, where, costs, window in self.session.execute(stmt)
        ]

    def latest_started_since(self, account_id: str, region: str, since: datetime) -> ScanRecord | None:
        """The latest-started finished scan with a document of the account and region started at or after
        ``since``."""
        stmt = _documented(account_id, region).where(Scan.started_at >= since)
        return _scan(self.session.scalars(stmt.order_by(Scan.started_at.desc()).limit(1)).first())

    def finished_until(self, account_id: str, region: str, window_end: date) -> list[ScanRecord]:
        """Finished scans with a document of the account and region whose window ends by ``window_end``, oldest
        first (a trend)."""
        stmt = _documented(account_id, region).where(Scan.window_end <= window_end)
        return _scans(self.session.scalars(stmt.order_by(Scan.window_end, Scan.started_at, Scan.id)))


def _documented(account_id: str, region: str) -> Select[Scan]:
    """The finished scans with a document of the account and region."""
    return select(Scan).where(
        Scan.account_id == account_id,
        Scan.region == region,
        Scan.status.in_(FINISHED),
        Scan.document.is_not(None),
    )
