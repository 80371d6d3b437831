"""The export formats Chipwise reads, each described once in a data file (``formats/*.json``: AWS's column names
and types, with the table dictionary it comes from and the date it was checked), and how an export's format is
told: the manifest's query statement (``FROM <table>``), else its columns.

- CUR 2.0 (``COST_AND_USAGE_REPORT``): fixed snake_case schema, tags in the ``resource_tags`` map.
- FOCUS 1.0 with AWS columns (``FOCUS_1_0_AWS``): the usage type is ``x_UsageType``.
- FOCUS 1.2 with AWS columns (``FOCUS_1_2_AWS``): the usage type is ``SkuMeter``; only ``x_Discounts``,
  ``x_Operation`` and ``x_ServiceCode`` remain of the ``x_`` columns.
- Legacy CUR (``LEGACY_CUR``): CSV headers ``lineItem/UsageType``, Parquet ``line_item_usage_type``; one column per
  cost allocation tag (``resourceTags/user:team``, ``resource_tags_user_team``); the column set varies.

The devkit writes its exports from the same files, so a drift between what we write and what AWS documents shows
in the tests."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import Any

from chipwise.collect.bill_export.errors import BillError
from chipwise.models.bill import BILL_TABLES, BillTable, ExportManifest

NUMERIC, TEXT, TIME, MAP = "numeric", "text", "timestamp", "map"
FILES: dict[BillTable, str] = {
    "COST_AND_USAGE_REPORT": "cur_2_0.json",
    "FOCUS_1_0_AWS": "focus_1_0_aws.json",
    "FOCUS_1_2_AWS": "focus_1_2_aws.json",
    "LEGACY_CUR": "legacy_cur.json",
}
FOCUS_TABLES: frozenset[str] = frozenset({"FOCUS_1_0_AWS", "FOCUS_1_2_AWS"})


@dataclass(frozen=True)
class ExportFormat:
    """One format's documented columns (name → AWS's type: ``string``, ``double``, ``timestamp``, ``map<...>``)
    and where that list comes from."""

    table: BillTable
    title: str
    source: str
    checked: str
    columns: dict[str, str]
    document: dict[str, Any]

    def family(self, column: str) -> str:
        """The type family a column of this format has (what a data file's column is checked against)."""
        return family_of_aws_type(self.columns[column])


def family_of_aws_type(kind: str) -> str:
    kind = kind.lower()
    if kind.startswith("map"):
        return MAP
    if kind in ("double", "decimal", "bigint", "int", "float"):
        return NUMERIC
    if kind.startswith("timestamp") or kind == "date":
        return TIME
    return TEXT


@cache
def export_format(table: BillTable) -> ExportFormat:
    text = resources.files("chipwise.collect.bill_export").joinpath("formats", FILES[table]).read_text("utf-8")
    doc = json.loads(text)
    return ExportFormat(table, doc["title"], doc["source"], doc["checked"], dict(doc["columns"]), doc)


def legacy_parquet_name(csv_header: str) -> str:
    """A legacy CUR CSV header as the Parquet (Athena integration) names it: ``lineItem/UsageType`` →
    ``line_item_usage_type``, ``savingsPlan/SavingsPlanARN`` → ``savings_plan_savings_plan_a_r_n``,
    ``resourceTags/user:team`` → ``resource_tags_user_team``."""
    category, _, name = csv_header.partition("/")
    if category == "resourceTags":
        return "resource_tags_" + re.sub(r"[^0-9A-Za-z]", "_", name).lower()

    def snake(text: str) -> str:
        return re.sub(r"([A-Z])", r"_\1", text).lower().lstrip("_")

    return f"{snake(category)}_{snake(name)}"


def table_of(manifest: ExportManifest, manifest_uri: str) -> BillTable:
    """The export's table as the manifest says: the table its query statement reads when it carries one (legacy
    CUR has none), else its columns."""
    if manifest.query_statement:
        found = re.search(r"\bFROM\s+\"?([A-Za-z0-9_]+)\"?", manifest.query_statement, re.IGNORECASE)
        name = found.group(1).upper() if found else ""
        for table in BILL_TABLES:
            if name == table:
                return table
        raise BillError(
            f"{manifest_uri}: unknown table {name or '?'} (Chipwise reads {', '.join(sorted(BILL_TABLES))})"
        )
    return table_of_columns(manifest.column_names, manifest_uri)


def table_of_columns(names: set[str], where: str) -> BillTable:
    """The table a set of column names is (a manifest's or a data file's)."""
    if "line_item_line_item_type" in names and "resource_tags" in names:
        return "COST_AND_USAGE_REPORT"
    if "line_item_line_item_type" in names or "lineItem/LineItemType" in names:
        return "LEGACY_CUR"
    if "EffectiveCost" in names and "ChargeCategory" in names:
        return "FOCUS_1_0_AWS" if "x_UsageType" in names or "x_CostCategories" in names else "FOCUS_1_2_AWS"
    raise BillError(f"{where}: unknown table (neither CUR 2.0, FOCUS 1.0 or 1.2 with AWS columns, nor legacy CUR)")
