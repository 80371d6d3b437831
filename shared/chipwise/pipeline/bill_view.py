"""``chipwise bill show``: what the stored bill says, read through the bill's repository in one read transaction
(:func:`reading`); resources stream from the store (``iter_spend``), never held all at once, or the database sums
them and cuts the largest (``spend_table``) for a table."""

from __future__ import annotations

from collections.abc import Iterator, Sequence

from chipwise.pipeline._store import store_scope as reading
from chipwise.store import Session
from chipwise.store.repositories.bill import (
    BillPeriodRecord,
    BillRepository,
    CommitmentRecord,
    SpendLine,
    SpendTotal,
    StoredServiceCost,
    UnattributedRecord,
)

__all__ = [
    "SpendLine",
    "SpendTotal",
    "StoredServiceCost",
    "commitments",
    "iter_spend",
    "reading",
    "service_costs",
    "spend_table",
    "stored_periods",
    "unattributed",
]


def stored_periods(session: Session) -> list[BillPeriodRecord]:
    return BillRepository(session).stored_periods()


def commitments(session: Session, account_id: str | None = None) -> list[tuple[CommitmentRecord, str]]:
    return BillRepository(session).commitments(account_id)


def unattributed(
    session: Session, account_id: str | None = None, region: str | None = None
) -> list[UnattributedRecord]:
    rows = BillRepository(session).unattributed(account_id)
    return rows if region is None else [u for u in rows if u.region == region]


def service_costs(
    session: Session, account_id: str | None = None, region: str | None = None
) -> list[StoredServiceCost]:
    rows = BillRepository(session).service_costs(account_id)
    return rows if region is None else [c for c in rows if c.region == region]


def iter_spend(
    session: Session,
    account_id: str | None = None,
    team_keys: Sequence[str] = (),
    *,
    region: str | None = None,
    team: str | None = None,
) -> Iterator[SpendLine]:
    """The resources' spend, largest first (filtered by account and region in SQL; by team, the value of the first
    ``team_keys`` tag each resource's bill lines carry, as they stream)."""
    lines = BillRepository(session).iter_spend(account_id, team_keys, region=region)
    return lines if team is None else (x for x in lines if x.team == team)


def spend_table(
    session: Session,
    account_id: str | None = None,
    team_keys: Sequence[str] = (),
    *,
    region: str | None = None,
    team: str | None = None,
    limit: int | None,
) -> tuple[list[SpendLine], list[SpendTotal]]:
    """The first ``limit`` lines of :func:`iter_spend` and every line summed per account, service and team, by the
    database in one statement."""
    return BillRepository(session).spend_table(account_id, team_keys, region=region, team=team, limit=limit)
