"""``chipwise bill show``: what the stored bill says, read through the bill's repository in one read transaction
(:func:`reading`); resources stream from the store (``iter_spend``), never held all at once."""

from __future__ import annotations

from collections.abc import Iterator, Sequence

from chipwise.pipeline._store import store_scope as reading
from chipwise.store import Session
from chipwise.store.repositories.bill import (
    BillPeriodRecord,
    BillRepository,
    CommitmentRecord,
    SpendLine,
    StoredServiceCost,
    UnattributedRecord,
)

__all__ = [
    "SpendLine",
    "StoredServiceCost",
    "commitments",
    "iter_spend",
    "reading",
    "service_costs",
    "stored_periods",
    "unattributed",
]


def stored_periods(session: Session) -> list[BillPeriodRecord]:
    return BillRepository(session).stored_periods()


def commitments(session: Session, account_id: str | None = None) -> list[tuple[CommitmentRecord, str]]:
    return BillRepository(session).commitments(account_id)


def unattributed(session: Session, account_id: str | None = None) -> list[UnattributedRecord]:
    return BillRepository(session).unattributed(account_id)


def service_costs(session: Session, account_id: str | None = None) -> list[StoredServiceCost]:
    return BillRepository(session).service_costs(account_id)


def iter_spend(session: Session, account_id: str | None = None, team_keys: Sequence[str] = ()) -> Iterator[SpendLine]:
    return BillRepository(session).iter_spend(account_id, team_keys)
