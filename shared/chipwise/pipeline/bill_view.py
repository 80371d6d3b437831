"""``chipwise bill show``: what the stored bill says, read through the bill's repository in one read transaction
(:func:`reading`); resources stream from the store (``iter_spend``), never held all at once."""

from __future__ import annotations

from chipwise.pipeline._store import store_scope as reading
from chipwise.store.repositories.bill import (
    SpendLine,
    StoredServiceCost,
    commitments,
    iter_spend,
    service_costs,
    stored_periods,
    unattributed,
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
