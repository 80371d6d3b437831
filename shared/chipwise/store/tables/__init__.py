"""All tables, imported in one place so Base.metadata is complete (Alembic and create_all read it)."""

from chipwise.store.tables.bill import BillCommitment, BillPeriodRow, BillResourceCost, BillUnattributed
from chipwise.store.tables.findings import BenchmarkRun, Finding, Recommendation
from chipwise.store.tables.intake import IntakeLimit, IntakeSubmission, Plan
from chipwise.store.tables.inventory import Account, Resource
from chipwise.store.tables.messaging import Draft, NotifiedScan, OutboxMessage
from chipwise.store.tables.realised import RealisedSaving
from chipwise.store.tables.remediations import Remediation
from chipwise.store.tables.scans import Scan
from chipwise.store.tables.usage import CostRecord, MetricCoverage, MetricRollup, MetricSeries, NeuronRollup

__all__ = [
    "Account",
    "BenchmarkRun",
    "BillCommitment",
    "BillPeriodRow",
    "BillResourceCost",
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
    "Resource",
    "Scan",
]
