"""Realised savings: the resolved findings still to be measured, the daily costs they are measured with, the rows."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import date, datetime
from decimal import Decimal
from typing import Any

from sqlalchemy import and_, func, or_, select
from sqlalchemy.orm import Session

from chipwise.store.repositories.findings import FindingRecord, finding_record
from chipwise.store.repositories.inventory import ResourceRecord, resource_record
from chipwise.store.repositories.records import record_of
from chipwise.store.tables import Finding, RealisedSaving, Resource
from chipwise.store.upsert import upsert


@dataclass(frozen=True)
class RuleAccuracy:
    """Realised against estimated savings of one rule's measured fixes."""

    rule_id: str
    measured: int
    pending: int
    estimated_monthly_usd: Decimal
    realised_monthly_usd: Decimal

    @property
    def accuracy(self) -> Decimal | None:
        if self.estimated_monthly_usd <= 0 or not self.measured:
            return None
        return (self.realised_monthly_usd / self.estimated_monthly_usd).quantize(Decimal("0.001"))


@dataclass(frozen=True, slots=True)
class RealisedRecord:
    """A resolved finding's saving as the bill shows it (:mod:`chipwise.store.tables.realised`)."""

    finding_id: str
    account_id: str
    region: str
    rule_id: str
    resource_name: str
    instance_type: str | None
    cause: str  # gone|resized|unchanged
    status: str  # pending|measured
    estimated_monthly_savings_usd: Decimal
    realised_monthly_savings_usd: Decimal | None
    accuracy: Decimal | None
    before_daily_usd: Decimal | None
    after_daily_usd: Decimal | None
    before_days: int
    after_days: int
    changed_after: date
    resolved_at: datetime
    measured_at: datetime


class RealisedSavingRepository:
    def __init__(self, session: Session) -> None:
        self.session = session

    def to_measure(
        self, account_id: str, region: str, since: datetime, final_after_days: int
    ) -> list[tuple[FindingRecord, ResourceRecord | None]]:
        """Findings resolved since ``since`` with no measurement yet, or one with fewer than ``final_after_days``
        days after the change (it is refined scan by scan), with their resource when it is still stored."""
        stmt = (
            select(Finding, Resource)
            .outerjoin(
                Resource, and_(Resource.arn == Finding.resource_arn, Resource.variant == Finding.resource_variant)
            )
            .outerjoin(RealisedSaving, RealisedSaving.finding_id == Finding.id)
            .where(
                Finding.account_id == account_id,
                Finding.region == region,
                Finding.status == "resolved",
                Finding.resolved_at >= since,
                or_(RealisedSaving.finding_id.is_(None), RealisedSaving.after_days < final_after_days),
            )
            .order_by(Finding.resolved_at)
        )
        return [
            (finding_record(row[0]), None if row[1] is None else resource_record(row[1]))
            for row in self.session.execute(stmt)
        ]

    def daily_cost(
        self, account_id: str, region: str, instance_type: str, start: date, end: date
    ) -> dict[date, Decimal]:
        """Amortized cost per day of ``instance_type`` (any case) in ``region`` over ``[start, end)``."""
        from chipwise.store.tables import CostRecord  # the cost tables: only the measurement (the scan) reads them

        stmt = select(CostRecord.day, CostRecord.amortized_cost).where(
            CostRecord.account_id == account_id,
            CostRecord.day >= start,
            CostRecord.day < end,
            func.lower(CostRecord.instance_type) == instance_type.lower(),
            or_(CostRecord.region == region, CostRecord.region.is_(None)),
        )
        found: dict[date, Decimal] = {}
        for day, amount in self.session.execute(stmt):
            found[day] = found.get(day, Decimal(0)) + amount
        return found

    def save(self, rows: Iterable[dict[str, Any]]) -> int:
        return upsert(self.session, RealisedSaving, list(rows), conflict=["finding_id"])

    def listed(self, account_id: str | None = None) -> list[RealisedRecord]:
        stmt = select(RealisedSaving).order_by(RealisedSaving.resolved_at)
        if account_id is not None:
            stmt = stmt.where(RealisedSaving.account_id == account_id)
        return [record_of(RealisedRecord, row) for row in self.session.scalars(stmt)]

    def by_rule(self, account_id: str | None = None) -> list[RuleAccuracy]:
        """Per rule: measured fixes, pending ones, and their estimated and realised monthly savings."""
        return accuracy_by_rule(self.listed(account_id))


def accuracy_by_rule(rows: Iterable[RealisedRecord]) -> list[RuleAccuracy]:
    """Per rule of ``rows``: measured fixes, pending ones, and their estimated and realised monthly savings."""
    totals: dict[str, list[Any]] = {}
    for row in rows:
        entry = totals.setdefault(row.rule_id, [0, 0, Decimal(0), Decimal(0)])
        if row.status == "measured" and row.realised_monthly_savings_usd is not None:
            entry[0] += 1
            entry[2] += row.estimated_monthly_savings_usd
            entry[3] += row.realised_monthly_savings_usd
        else:
            entry[1] += 1
    return [RuleAccuracy(rule, m, p, e, r) for rule, (m, p, e, r) in sorted(totals.items())]
