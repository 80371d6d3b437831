"""All tables, by name. Each module maps its own tables (and imports the modules of the tables its foreign keys
name); this package imports a module only when one of its tables is first asked for, so a function maps the tables
its code names and no others (``from chipwise.store.tables import Scan`` maps ``scans`` and ``accounts``).
:func:`all_tables` maps every one: Alembic and the schema comparisons read the complete ``Base.metadata``.

The table modules leave out ``from __future__ import annotations``: their ``Mapped[...]`` annotations are objects
SQLAlchemy reads as they are, not strings it parses and evaluates again (an eighth less work to map a table)."""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

from chipwise.store.base import Base

if TYPE_CHECKING:
    from sqlalchemy import MetaData

    from chipwise.store.tables.benchmarks import BenchmarkRun
    from chipwise.store.tables.bill import BillPeriodRow, BillResourceCost, BillServiceCost
    from chipwise.store.tables.bill_commitments import BillCommitment, BillUnattributed
    from chipwise.store.tables.bill_totals import BillResourceTotal
    from chipwise.store.tables.findings import Finding, Recommendation
    from chipwise.store.tables.intake import IntakeLimit, IntakeSubmission, Plan
    from chipwise.store.tables.inventory import Account, Resource
    from chipwise.store.tables.messaging import Draft, NotifiedScan, OutboxMessage
    from chipwise.store.tables.neuron import NeuronRollup
    from chipwise.store.tables.realised import RealisedSaving
    from chipwise.store.tables.remediations import Remediation, RemediationInFlight
    from chipwise.store.tables.scan_verdicts import ScanVerdict
    from chipwise.store.tables.scans import Scan
    from chipwise.store.tables.usage import CostRecord, MetricCoverage, MetricRollup, MetricSeries

# Each table's module (under chipwise.store.tables).
_MODULE_OF = {
    "Account": "inventory",
    "BenchmarkRun": "benchmarks",
    "BillCommitment": "bill_commitments",
    "BillPeriodRow": "bill",
    "BillResourceCost": "bill",
    "BillResourceTotal": "bill_totals",
    "BillServiceCost": "bill",
    "BillUnattributed": "bill_commitments",
    "CostRecord": "usage",
    "Draft": "messaging",
    "Finding": "findings",
    "IntakeLimit": "intake",
    "IntakeSubmission": "intake",
    "MetricCoverage": "usage",
    "MetricRollup": "usage",
    "MetricSeries": "usage",
    "NeuronRollup": "neuron",
    "NotifiedScan": "messaging",
    "OutboxMessage": "messaging",
    "Plan": "intake",
    "RealisedSaving": "realised",
    "Recommendation": "findings",
    "Remediation": "remediations",
    "RemediationInFlight": "remediations",
    "Resource": "inventory",
    "Scan": "scans",
    "ScanVerdict": "scan_verdicts",
}

__all__ = [
    "Account",
    "BenchmarkRun",
    "BillCommitment",
    "BillPeriodRow",
    "BillResourceCost",
    "BillResourceTotal",
    "BillServiceCost",
    "BillUnattributed",
    "CostRecord",
    "Draft",
    "Finding",
    "IntakeLimit",
    "IntakeSubmission",
    "MetricCoverage",
    "MetricRollup",
    "MetricSeries",
    "NeuronRollup",
    "NotifiedScan",
    "OutboxMessage",
    "Plan",
    "RealisedSaving",
    "Recommendation",
    "Remediation",
    "RemediationInFlight",
    "Resource",
    "Scan",
    "ScanVerdict",
    "all_tables",
]


def __getattr__(name: str) -> type:
    """A table asked for by name: its module is imported (and its tables mapped) then."""
    module = _MODULE_OF.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    table: type = getattr(importlib.import_module(f"{__name__}.{module}"), name)
    globals()[name] = table
    return table


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))


def all_tables() -> MetaData:
    """``Base.metadata`` with every table mapped."""
    for name in _MODULE_OF:
        __getattr__(name)
    return Base.metadata
