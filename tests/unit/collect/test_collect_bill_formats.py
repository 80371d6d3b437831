"""Every export format AWS writes, exactly as its table dictionary lists it: the same bill read from CUR 2.0, FOCUS
1.0 and FOCUS 1.2 with AWS columns, legacy CUR, Parquet and gzip CSV gives the same per-resource effective costs;
other clouds' rows are counted apart; hostile values reject the export naming file, row and column; the manifest's
files are read once each and only under the export's own prefix; days are UTC whatever the machine's zone; a legacy
Cost and Usage Report is read in its own delivery layout, as AWS's CUR user guide describes it (the period's
manifest ``<report>/yyyymmdd-yyyymmdd/<report>-Manifest.json`` listing ``reportKeys`` under
``yyyymmdd-yyyymmdd/<assemblyId>/`` for gzip CSV or ``<report>/year=YYYY/month=M/`` for the Athena integration's
Parquet)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from datetime import datetime
from decimal import Decimal
from pathlib import Path
from typing import Any

import duckdb
import pytest

from chipwise.collect.bill_export import (
    BillError,
    columns_read,
    export_of_manifest_key,
    period_of_manifest_key,
    read_period,
)
from chipwise.collect.bill_export.athena_engine import AthenaTable, athena_statement
from chipwise.collect.bill_export.formats import export_format, legacy_parquet_name
from chipwise.collect.bill_export.query import USAGE_TYPE_COLUMN, documented, required_columns
from chipwise.models.bill import BillPeriod
from chipwise_devkit.bill_export import Line, line_item_type_bill, write_export, write_legacy_report

# Hand-computed effective cost of each resource of line_item_type_bill (tests/unit/collect/test_collect_bill.py)
EFFECTIVE = {
    "i-0d000000000000001": Decimal("7.58"),
    "i-0e000000000000002": Decimal("150.50"),
    "i-0f000000000000003": Decimal("12.00"),
    "i-0a000000000000004": Decimal("1.51"),
}
FORMATS = [
    ("COST_AND_USAGE_REPORT", "parquet"),
    ("COST_AND_USAGE_REPORT", "csv"),
    ("FOCUS_1_0_AWS", "parquet"),
    ("FOCUS_1_2_AWS", "parquet"),
    ("FOCUS_1_2_AWS", "csv"),
    ("LEGACY_CUR", "parquet"),
    ("LEGACY_CUR", "csv"),
]


def _export(root: Path, table: str = "COST_AND_USAGE_REPORT", data_format: str = "parquet", **kw: object) -> Path:
    lines = kw.pop("lines", None) or line_item_type_bill()
    return write_export(root, "chipwise-cur", "2026-11", lines, table=table, data_format=data_format, **kw)  # type: ignore[arg-type]


def _cents(period: BillPeriod) -> dict[str, Decimal]:
    found: dict[str, Decimal] = {}
    for r in period.resources:
        found[r.resource_id] = found.get(r.resource_id, Decimal(0)) + r.effective_cost
    return {k: v.quantize(Decimal("0.01")) for k, v in found.items()}


@pytest.mark.parametrize(("table", "data_format"), FORMATS)
def test_the_same_bill_in_every_format_gives_the_same_costs_to_the_cent(
    tmp_path: Path, table: str, data_format: str
) -> None:
    export = _export(tmp_path, table, data_format)
    period = read_period(None, str(export), "2026-11")
    assert (period.table, period.data_format, period.payer_account_id) == (table, data_format, "111111111111")
    assert _cents(period) == EFFECTIVE
    assert {r.resource_id: r.tags for r in period.resources}["i-0d000000000000001"] == {
        "user:team": "ml-platform",
        "user:owner": "ana",
    }
    apart = {u.category: u.amount for u in period.unattributed}
    assert apart == {"commitment_unused": Decimal("52.5"), "credit": Decimal("-50"), "tax": Decimal("12.34")}


def test_focus_1_2_is_read_with_exactly_awss_columns(tmp_path: Path) -> None:
    fmt = export_format("FOCUS_1_2_AWS")
    assert len(fmt.columns) == 60  # 57 FOCUS columns + x_Discounts, x_Operation, x_ServiceCode
    assert {c for c in fmt.columns if c.startswith("x_")} == {"x_Discounts", "x_Operation", "x_ServiceCode"}
    export = _export(tmp_path, "FOCUS_1_2_AWS")
    manifest = json.loads(next((export / "metadata").rglob("*-Manifest.json")).read_text())
    assert [c["name"] for c in manifest["columns"]] == list(fmt.columns)
    written = duckdb.connect().execute(
        f"DESCRIBE SELECT * FROM read_parquet('{next((export / 'data').rglob('*.parquet'))}')"
    )
    names = {str(row[0]) for row in written.fetchall()}
    assert "x_UsageType" not in names and "x_CostCategories" not in names
    assert USAGE_TYPE_COLUMN["FOCUS_1_2_AWS"] == "SkuMeter"


@pytest.mark.parametrize("table", ["COST_AND_USAGE_REPORT", "FOCUS_1_0_AWS", "FOCUS_1_2_AWS", "LEGACY_CUR"])
def test_every_column_read_is_in_awss_table_dictionary(table: str) -> None:
    for column in [*columns_read(table, split=True), *required_columns(table)]:  # type: ignore[arg-type]
        assert documented(table, column), f"{table} has no column {column} in its table dictionary"  # type: ignore[arg-type]
    assert export_format(table).source.startswith("https://docs.aws.amazon.com/cur/latest/userguide/")  # type: ignore[arg-type]


def test_legacy_names() -> None:
    assert legacy_parquet_name("lineItem/UsageType") == "line_item_usage_type"
    assert legacy_parquet_name("savingsPlan/SavingsPlanARN") == "savings_plan_savings_plan_a_r_n"
    assert legacy_parquet_name("resourceTags/user:team") == "resource_tags_user_team"


def test_a_missing_column_is_named_per_format(tmp_path: Path) -> None:
    export = _export(tmp_path, "FOCUS_1_2_AWS")
    manifest = next((export / "metadata").rglob("*-Manifest.json"))
    body = json.loads(manifest.read_text())
    body["columns"] = [c for c in body["columns"] if c["name"] != "SkuMeter"]
    manifest.write_text(json.dumps(body))
    with pytest.raises(BillError, match=r"a FOCUS_1_2_AWS export without the columns Chipwise reads: SkuMeter"):
        read_period(None, str(export), "2026-11")


def _rewrite(export: Path, select: str) -> Path:
    """The export's one data file rewritten by a DuckDB SELECT over it (``src``)."""
    data = next((export / "data").rglob("*.parquet"))
    con = duckdb.connect()
    con.execute("LOAD icu")
    con.execute("SET TimeZone = 'UTC'")
    query = select.format(src=f"read_parquet('{data}')")
    con.execute(f"COPY ({query}) TO '{data}.tmp' (FORMAT parquet)")
    con.close()
    Path(f"{data}.tmp").replace(data)
    return data


def test_rows_of_other_providers_are_counted_apart_never_priced(tmp_path: Path) -> None:
    export = _export(tmp_path, "FOCUS_1_2_AWS")
    _rewrite(
        export,
        "SELECT * FROM {src} UNION ALL BY NAME SELECT * REPLACE ('Microsoft' AS ProviderName, '9' AS BillingAccountId,"
        " 'sub-1' AS SubAccountId) FROM {src} UNION ALL BY NAME SELECT * REPLACE ('Oracle' AS ProviderName,"
        " 'ocid1' AS BillingAccountId) FROM {src} WHERE ChargeCategory = 'Usage'",
    )
    period = read_period(None, str(export), "2026-11")
    assert _cents(period) == EFFECTIVE  # the AWS rows only
    assert period.other_providers == {"Microsoft": 10, "Oracle": 6}  # the bill's 10 FOCUS rows, 6 of them Usage
    assert sum(r.effective_cost for r in period.resources) == Decimal("171.591")


HOSTILE = [
    ("line_item_unblended_cost", "1e15", r"row 1, column line_item_unblended_cost: beyond ±1e12"),
    ("line_item_unblended_cost", "-1e25", r"row 1, column line_item_unblended_cost: beyond ±1e12"),
    ("line_item_usage_account_id", "repeat('1', 5000)", r"row 1, column line_item_usage_account_id: longer than 12"),
    ("line_item_usage_start_date", "CAST(NULL AS TIMESTAMP)", r"row 1, column line_item_usage_start_date: NULL"),
    ("line_item_unblended_cost", "CAST(NULL AS DOUBLE)", r"row 1, column line_item_unblended_cost: NULL cost"),
    (
        "line_item_usage_start_date",
        "TIMESTAMP '2026-12-01 00:00:00'",
        r"row 1, column line_item_usage_start_date: a day outside the billing period 2026-11",
    ),
]


@pytest.mark.parametrize(("column", "value", "message"), HOSTILE)
def test_a_hostile_value_rejects_the_export_naming_file_row_and_column(
    tmp_path: Path, column: str, value: str, message: str
) -> None:
    export = _export(tmp_path)
    _rewrite(
        export,
        f"SELECT * EXCLUDE (n) REPLACE (CASE WHEN n = 0 THEN CAST({value} AS "
        f"{'VARCHAR' if 'account' in column else 'TIMESTAMP' if 'date' in column else 'DOUBLE'}) "
        f"ELSE {column} END AS {column}) FROM (SELECT *, row_number() OVER () - 1 AS n FROM {{src}})",
    )
    with pytest.raises(BillError, match=rf"chipwise-cur-00001.snappy.parquet: {message}") as caught:
        read_period(None, str(export), "2026-11")
    assert "\n" not in str(caught.value) and "(export rejected, nothing stored)" in str(caught.value)


def test_a_commitments_over_long_family_rejects_the_export(tmp_path: Path) -> None:
    """A commitment's terms are read once per commitment, apart from the rows: their lengths are checked there."""
    export = _export(tmp_path)
    assert any(c.family for c in read_period(None, str(export), "2026-11").commitments)
    _rewrite(
        export,
        "SELECT * REPLACE (CASE WHEN savings_plan_instance_type_family <> '' THEN repeat('x', 65)"
        " ELSE savings_plan_instance_type_family END AS savings_plan_instance_type_family) FROM {src}",
    )
    message = r"column savings_plan_instance_type_family: longer than 64 characters \(export rejected, nothing stored\)"
    with pytest.raises(BillError, match=rf"chipwise-cur-00001.snappy.parquet: {message}"):
        read_period(None, str(export), "2026-11")


def test_a_hostile_value_in_a_gzip_csv_names_its_row(tmp_path: Path) -> None:
    lines = line_item_type_bill()
    bad = Line(lines[0].account_id, "Usage", lines[0].start.replace(month=10), "USE1-BoxUsage:inf2.xlarge", "i-1")
    export = _export(tmp_path, data_format="csv", lines=[*lines, bad])
    with pytest.raises(BillError, match=r"chipwise-cur-00001.csv.gz: row 10, column line_item_usage_start_date"):
        read_period(None, str(export), "2026-11")


def test_manifest_files_are_read_once_and_only_under_the_exports_own_prefix(tmp_path: Path) -> None:
    export = _export(tmp_path)
    manifest = next((export / "metadata").rglob("*-Manifest.json"))
    body = json.loads(manifest.read_text())
    (listed,) = body["dataFiles"]
    manifest.write_text(json.dumps({**body, "dataFiles": [listed, listed]}))
    assert read_period(None, str(export), "2026-11").line_items == 9  # not 18
    for outside in (
        listed.replace("/data/BILLING_PERIOD=2026-11/", "/data/BILLING_PERIOD=2026-10/"),
        listed.replace("exports/chipwise-cur/", "elsewhere/"),
        str(next((export / "data").rglob("*.parquet"))),  # an absolute local path
    ):
        manifest.write_text(json.dumps({**body, "dataFiles": [outside]}))
        with pytest.raises(BillError, match=r"is not under the export's data/BILLING_PERIOD=2026-11/ prefix"):
            read_period(None, str(export), "2026-11")


def test_days_are_utc_whatever_the_machines_time_zone(tmp_path: Path) -> None:
    """A usage hour at 23:30 UTC on the period's last day, stored as a UTC-adjusted timestamp, read on a machine
    14 hours ahead of UTC: still that day (not the next month's first, which would reject the export)."""
    late = [
        Line("111111111111", "Usage", datetime(2026, 11, 30, 23, 30), "USE1-BoxUsage:inf2.xlarge",
             "i-0d000000000000001", hours=0.5, unblended_cost=0.3791, public_on_demand_cost=0.3791)
    ]  # fmt: skip
    export = _export(tmp_path, lines=late)
    _rewrite(
        export,
        "SELECT * REPLACE (CAST(line_item_usage_start_date AS TIMESTAMPTZ) AS line_item_usage_start_date) FROM {src}",
    )
    script = (
        "from chipwise.collect.bill_export import read_period\n"
        f"p = read_period(None, {str(export)!r}, '2026-11')\n"
        "print(p.resources[0].day.isoformat())\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script],
        env={**os.environ, "TZ": "Pacific/Kiritimati"},
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-500:]
    assert done.stdout.strip() == "2026-11-30"


def test_duckdb_is_bounded_by_the_functions_memory_and_reads_in_utc(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    from chipwise.collect.bill_export.duckdb_engine import DEFAULT_MEMORY_MB, connect, memory_limit_mb

    monkeypatch.delenv("AWS_LAMBDA_FUNCTION_MEMORY_SIZE", raising=False)
    assert memory_limit_mb() == DEFAULT_MEMORY_MB
    monkeypatch.setenv("AWS_LAMBDA_FUNCTION_MEMORY_SIZE", "1024")
    assert memory_limit_mb() == 409  # 40 % of the function's 1,024 MB
    con = connect(tmp_path)
    limit, zone, ordered = con.execute(
        "SELECT current_setting('memory_limit'), current_setting('TimeZone'),"
        " current_setting('preserve_insertion_order')"
    ).fetchone() or ("", "", True)
    con.close()
    assert (limit, zone, ordered) == ("390.0 MiB", "UTC", False)  # 409 MB as DuckDB prints it


def test_a_query_out_of_memory_runs_again_on_one_thread(tmp_path: Path) -> None:
    """DuckDB's aggregates spill; what cannot (each thread's scan buffers) grows with the threads: the query that
    hits the limit before any row has left runs once more on one thread, and the bill is read whole."""
    from chipwise.collect.bill_export import duckdb_engine

    export = _export(tmp_path)
    con = duckdb_engine.connect(tmp_path / "scratch")
    statements: list[str] = []

    class Failing:
        """The connection, whose first bill query fails as DuckDB does when its memory limit is hit."""

        def execute(self, sql: str) -> duckdb.DuckDBPyConnection:
            statements.append(sql)
            if sql.startswith("WITH lines AS") and len(statements) == 1:
                raise duckdb.OutOfMemoryException("Out of Memory Error: could not allocate block of size 30.5 MiB")
            return con.execute(sql)

    data = next((export / "data").rglob("*.parquet"))
    src = duckdb_engine.source_of("COST_AND_USAGE_REPORT", "parquet", _described(con, data), f"read_parquet('{data}')")
    rows: list[object] = []
    duckdb_engine._stream(Failing(), [(data, "f")], src, "2026-11", rows.append)  # type: ignore[arg-type]
    assert [s.split()[0] for s in statements] == ["WITH", "SET", "WITH"]
    assert statements[1] == "SET threads = 1"
    counted = duckdb_engine.ROW_COLUMNS.index("line_items")
    assert sum(int(r[counted]) for r in rows) == 9  # every line item read once  # type: ignore[index]
    con.close()


def _described(con: duckdb.DuckDBPyConnection, data: Path) -> dict[str, str]:
    return {str(r[0]): str(r[1]) for r in con.execute(f"DESCRIBE SELECT * FROM read_parquet('{data}')").fetchall()}


def _manifest(report: Path) -> Path:
    (found,) = report.glob("2026*-2026*/chipwise-legacy-Manifest.json")
    return found


@pytest.mark.parametrize("data_format", ["csv", "parquet"])
def test_a_legacy_report_in_its_own_layout_gives_the_same_costs(tmp_path: Path, data_format: str) -> None:
    report = write_legacy_report(tmp_path, "chipwise-legacy", "2026-11", line_item_type_bill(),
                                 data_format=data_format, files=2)  # type: ignore[arg-type]  # fmt: skip
    manifest = json.loads(_manifest(report).read_text())
    assert _manifest(report).parent.name == "20261101-20261201"
    if data_format == "csv":
        assert manifest["reportKeys"][0] == (
            "cur/chipwise-legacy/20261101-20261201/8e1f4f5a-0c2b-4d7e-9a51-2f6b3c0d9e11/chipwise-legacy-1.csv.gz"
        )
    else:
        assert manifest["reportKeys"][0] == (
            "cur/chipwise-legacy/chipwise-legacy/year=2026/month=11/chipwise-legacy-00001.snappy.parquet"
        )
        assert (report / "cost_and_usage_data_status/cost_and_usage_data_status.parquet").is_file()  # not a bill
    period = read_period(None, str(report), "2026-11")
    assert (period.table, period.data_format, period.payer_account_id) == ("LEGACY_CUR", data_format, "111111111111")
    assert period.execution_id == manifest["assemblyId"]
    assert period.manifest_uri.endswith("/chipwise-legacy/20261101-20261201/chipwise-legacy-Manifest.json")
    assert period.line_items == 9
    assert _cents(period) == EFFECTIVE
    assert {r.resource_id: r.tags for r in period.resources}["i-0d000000000000001"] == {
        "user:team": "ml-platform",
        "user:owner": "ana",
    }
    apart = {u.category: u.amount for u in period.unattributed}
    assert apart == {"commitment_unused": Decimal("52.5"), "credit": Decimal("-50"), "tax": Decimal("12.34")}
    with pytest.raises(BillError, match=r"manifest not found \(nor a legacy report's .*/20261001-20261101/"):
        read_period(None, str(report), "2026-10")


def _legacy(tmp_path: Path, data_format: str) -> tuple[Path, Path, dict[str, Any]]:
    """A legacy report written in its own layout: its directory, its period manifest's path and contents."""
    report = write_legacy_report(tmp_path, "chipwise-legacy", "2026-11", line_item_type_bill(), data_format)  # type: ignore[arg-type]
    path = _manifest(report)
    return report, path, json.loads(path.read_text())


def test_a_legacy_manifest_naming_files_outside_the_reports_own_prefix_is_refused(tmp_path: Path) -> None:
    report, path, body = _legacy(tmp_path, "parquet")
    (key,) = body["reportKeys"]
    path.write_text(json.dumps({**body, "reportKeys": [key, key]}))
    assert read_period(None, str(report), "2026-11").line_items == 9  # listed twice, read once
    for outside in (
        key.replace("month=11", "month=10"),  # another period's partition
        key.replace("cur/chipwise-legacy/", "elsewhere/"),  # another prefix of the bucket
        key.replace("year=2026/month=11/", "year=2026/month=11/x/y/"),  # deeper than AWS writes
        "cur/chipwise-legacy/20261001-20261101/chipwise-legacy-1.csv.gz",  # the previous period's folder
    ):
        path.write_text(json.dumps({**body, "reportKeys": [outside]}))
        with pytest.raises(BillError, match=r"is not under the export's 20261101-20261201/ or .* prefix \(refused\)"):
            read_period(None, str(report), "2026-11")


def test_a_zip_compressed_legacy_report_is_refused_with_its_reason(tmp_path: Path) -> None:
    report, path, body = _legacy(tmp_path, "csv")
    path.write_text(json.dumps({**body, "reportKeys": [k.replace(".csv.gz", ".csv.zip") for k in body["reportKeys"]]}))
    with pytest.raises(BillError, match=r"a ZIP-compressed report is not read"):
        read_period(None, str(report), "2026-11")


def test_the_manifest_key_tells_the_export_and_its_period() -> None:
    assert export_of_manifest_key("cur/chipwise-legacy/20261101-20261201/chipwise-legacy-Manifest.json") == (
        "cur/chipwise-legacy",
        "2026-11",
    )
    assert export_of_manifest_key("chipwise-legacy/20261201-20270101/chipwise-legacy-Manifest.json") == (
        "chipwise-legacy",
        "2026-12",
    )
    assert export_of_manifest_key("exports/focus/metadata/BILLING_PERIOD=2026-11/focus-Manifest.json") == (
        "exports/focus",
        "2026-11",
    )
    # a version's own copy, another report's manifest, a range that is no billing period: not a period's manifest
    assert export_of_manifest_key("cur/r/20261101-20261201/8e1f4f5a/r-Manifest.json") is None
    assert export_of_manifest_key("cur/r/20261101-20261201/other-Manifest.json") is None
    assert export_of_manifest_key("cur/r/20261101-20261215/r-Manifest.json") is None
    assert period_of_manifest_key("/cur/r/20261101-20261201/r-Manifest.json") == "2026-11"


def test_athena_reads_a_legacy_reports_year_and_month_partitions() -> None:
    athena = AthenaTable("cur_db", "chipwise_legacy", "primary")
    statement = athena_statement("LEGACY_CUR", athena, "2026-03", ["line_item_unblended_cost"])
    assert "year = '2026' AND month = '3'" in statement
    assert "billing_period" not in statement
