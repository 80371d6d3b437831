"""The verdicts of the stored scan documents as rows (``scan_verdicts``): written with each document, read by
``chipwise resources`` to count an organisation's verdicts in SQL and to find the rows of the page it shows.

A selection is the verdicts of some scans (the latest of each account and region: :meth:`ScanRepository.latest_ids`),
in the order ``chipwise resources`` lists them (the scan's account and region, then the verdict's position in its
document), of one team when given, after a place in that order when given (a cursor)."""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from sqlalchemy import ColumnElement, delete, func, insert, select, tuple_

from chipwise.models.resources import resource_key, split_key
from chipwise.store.repositories.records import Repository
from chipwise.store.tables import Finding, Scan, ScanVerdict

Verdict = tuple[str, str | None, str]  # a verdict as its row needs it: (resource id, its resource's team, verdict)


def verdict_rows(scan_id: str, document_json: str) -> list[dict[str, Any]]:
    """The ``scan_verdicts`` rows of a scan document given as JSON text: each verdict at its position, its
    resource's ARN and variant, and the team of its resource in the document's ``resources``."""
    document = json.loads(document_json)
    if not isinstance(document, dict):
        return []
    teams = {r.get("id"): r.get("team") for r in document.get("resources") or []}
    verdicts = document.get("verdicts") or []
    return rows_of(
        scan_id, [(str(v["resource_id"]), teams.get(str(v["resource_id"])), str(v["verdict"])) for v in verdicts]
    )


def rows_of(scan_id: str, verdicts: Sequence[Verdict]) -> list[dict[str, Any]]:
    """The ``scan_verdicts`` rows of a scan's verdicts in their document's order (:func:`verdict_rows` without
    the document's JSON: for a caller that holds the document)."""
    rows = []
    for position, (resource_id, team, verdict) in enumerate(verdicts):
        arn, variant = split_key(resource_id)
        rows.append(
            {
                "scan_id": scan_id,
                "position": position,
                "resource_id": resource_id,
                "resource_arn": arn,
                "resource_variant": variant or "",
                "team": team,
                "verdict": verdict,
            }
        )
    return rows


@dataclass(frozen=True, slots=True)
class Place:
    """A verdict's place in the listing order: its scan's account and region, then its position in the document."""

    account_id: str
    region: str
    position: int


@dataclass(frozen=True, slots=True)
class Selection:
    """Which verdicts: those of ``scan_ids`` (of ``team`` when given) after ``after`` when given."""

    scan_ids: Sequence[str]
    team: str | None = None
    after: Place | None = None


@dataclass(frozen=True, slots=True)
class VerdictCount:
    scan_id: str
    account_id: str
    region: str
    verdict: str  # as stored
    count: int


@dataclass(frozen=True, slots=True)
class PageRow:
    scan_id: str
    account_id: str
    region: str
    position: int
    resource_id: str
    team: str | None


@dataclass(frozen=True, slots=True)
class SettlingFinding:
    """A finding (of a status that settles verdicts) of a selected verdict's resource, with that verdict: the
    finding's columns that decide how it settles the verdict (no document is made of it)."""

    scan_id: str
    position: int
    stored: str  # the verdict as the scan stored it
    status: str
    recommendation: dict[str, Any]
    evidence: dict[str, Any]
    effort: str
    estimated_monthly_savings_usd: Decimal
    measured_monthly_savings_usd: Decimal | None


class ScanVerdictRepository(Repository):
    def replace(self, scan_id: str, document_json: str, verdicts: Sequence[Verdict] | None = None) -> None:
        """The scan's verdict rows, from its document (given as JSON text, decoded only when ``verdicts``, the
        document's own, are not given): those stored before are replaced."""
        self.session.execute(delete(ScanVerdict).where(ScanVerdict.scan_id == scan_id))
        rows = verdict_rows(scan_id, document_json) if verdicts is None else rows_of(scan_id, verdicts)
        if rows:
            self.session.execute(insert(ScanVerdict), rows)

    def keep_only(self, account_id: str, region: str, scan_ids: Sequence[str]) -> None:
        """Delete the verdict rows of the account's scans in ``region`` but ``scan_ids``."""
        others = select(Scan.id).where(
            Scan.account_id == account_id, Scan.region == region, Scan.id.not_in(list(scan_ids))
        )
        self.session.execute(delete(ScanVerdict).where(ScanVerdict.scan_id.in_(others)))

    def has_verdicts(self, scan_id: str) -> bool:
        stmt = select(ScanVerdict.position).where(ScanVerdict.scan_id == scan_id).limit(1)
        return self.session.execute(stmt).first() is not None

    def place_of(self, scan_ids: Sequence[str], resource_id: str) -> Place | None:
        """The first place (in the listing order) of the resource's verdict among the scans' (any team)."""
        stmt = (
            select(Scan.account_id, Scan.region, ScanVerdict.position)
            .join(Scan, Scan.id == ScanVerdict.scan_id)
            .where(ScanVerdict.scan_id.in_(list(scan_ids)), ScanVerdict.resource_id == resource_id)
            .order_by(Scan.account_id, Scan.region, ScanVerdict.position)
            .limit(1)
        )
        found = self.session.execute(stmt).first()
        return None if found is None else Place(found.account_id, found.region, found.position)

    def counts(self, selection: Selection) -> list[VerdictCount]:
        """How many verdicts of each stored kind each scan has in the selection (one GROUP BY)."""
        stmt = _selected(
            select(Scan.id, Scan.account_id, Scan.region, ScanVerdict.verdict, func.count()), selection
        ).group_by(Scan.id, Scan.account_id, Scan.region, ScanVerdict.verdict)
        return [VerdictCount(str(i), str(a), str(r), str(v), int(n)) for i, a, r, v, n in self.session.execute(stmt)]

    def page(self, selection: Selection, limit: int | None) -> list[PageRow]:
        """The first ``limit`` verdicts of the selection (every one when None), in the listing order."""
        stmt = _selected(
            select(
                Scan.id, Scan.account_id, Scan.region, ScanVerdict.position, ScanVerdict.resource_id, ScanVerdict.team
            ),
            selection,
        ).order_by(Scan.account_id, Scan.region, ScanVerdict.position)
        if limit is not None:
            stmt = stmt.limit(limit)
        return [PageRow(*row) for row in self.session.execute(stmt)]

    def settling_findings(self, selection: Selection, statuses: Sequence[str]) -> Iterator[SettlingFinding]:
        """Every finding of ``statuses`` of a selected verdict's resource, in its scan's account and region (the
        findings that settle the verdicts again), with the verdict it settles; a thousand rows at a time."""
        columns = (
            ScanVerdict.scan_id,
            ScanVerdict.position,
            ScanVerdict.verdict,
            ScanVerdict.resource_id,
            Finding.resource_arn,
            Finding.resource_variant,
            Finding.status,
            Finding.recommendation,
            Finding.evidence,
            Finding.effort,
            Finding.estimated_monthly_savings_usd,
            Finding.measured_monthly_savings_usd,
        )
        stmt = (
            _selected(select(*columns), selection)
            .join(
                Finding,
                (Finding.account_id == Scan.account_id)
                & (Finding.region == Scan.region)
                & (Finding.resource_arn == ScanVerdict.resource_arn)
                & (Finding.resource_variant == ScanVerdict.resource_variant),
            )
            .where(Finding.status.in_(list(statuses)))
        )
        result = self.session.execute(stmt.execution_options(yield_per=1000))
        for scan_id, position, stored, resource_id, arn, variant, *facts in result:
            if resource_key(arn, variant) != resource_id:
                continue  # the same ARN and variant written another way: not this resource's finding
            yield SettlingFinding(scan_id, position, stored, *facts)


def _selected(stmt: Any, selection: Selection) -> Any:
    """``stmt`` over the selected verdicts joined to their scans."""
    where: list[ColumnElement[bool]] = [ScanVerdict.scan_id.in_(list(selection.scan_ids))]
    if selection.team is not None:
        where.append(ScanVerdict.team == selection.team)
    if selection.after is not None:
        after = selection.after
        where.append(
            tuple_(Scan.account_id, Scan.region, ScanVerdict.position)
            > tuple_(after.account_id, after.region, after.position)
        )
    return stmt.select_from(ScanVerdict).join(Scan, Scan.id == ScanVerdict.scan_id).where(*where)
