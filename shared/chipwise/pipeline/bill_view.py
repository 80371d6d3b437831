"""``chipwise bill show``: what the stored bill says, read in one transaction."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from chipwise.pipeline._store import store_scope
from chipwise.settings import get_settings
from chipwise.store.repositories import bill as bill_store


@dataclass(frozen=True)
class StoredBill:
    lines: list[Any]  # spend per resource, largest first
    commitments: list[Any]  # (commitment, billing period)
    unattributed: list[Any]
    periods: list[str]


def stored_bill(account: str | None) -> StoredBill:
    """Spend by resource (with its team), commitments, what could not be attributed, and the periods stored."""
    with store_scope() as session:
        return StoredBill(
            lines=list(bill_store.spend(session, account, get_settings().team_tag_keys)),
            commitments=list(bill_store.commitments(session, account)),
            unattributed=list(bill_store.unattributed(session, account)),
            periods=[p.billing_period for p in bill_store.stored_periods(session)],
        )
