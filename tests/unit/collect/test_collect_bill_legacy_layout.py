"""A legacy Cost and Usage Report read in its own delivery layout, as AWS's CUR user guide describes it: the period's
manifest ``<report>/yyyymmdd-yyyymmdd/<report>-Manifest.json`` lists ``reportKeys`` (keys in its ``bucket``) under
``yyyymmdd-yyyymmdd/<assemblyId>/`` (gzip CSV) or, for the Parquet of the Athena integration, under
``<report>/year=YYYY/month=M/``; the same per-resource effective costs as every other format; files outside the
report's own prefix for the period are refused; the manifest's object key tells the export and the period."""

from __future__ import annotations

import json
from decimal import Decimal
from pathlib import Path

import pytest

from chipwise.collect.bill_export import BillError, export_of_manifest_key, period_of_manifest_key, read_period
from chipwise.collect.bill_export.athena_engine import AthenaTable, athena_statement
from chipwise.models.bill import BillPeriod
from chipwise_devkit.bill_export import line_item_type_bill, write_legacy_report

# Hand-computed effective cost of each resource of line_item_type_bill (tests/unit/collect/test_collect_bill.py)
EFFECTIVE = {
    "i-0d000000000000001": Decimal("7.58"),
    "i-0e000000000000002": Decimal("150.50"),
    "i-0f000000000000003": Decimal("12.00"),
    "i-0a000000000000004": Decimal("1.51"),
}


def _cents(period: BillPeriod) -> dict[str, Decimal]:
    found: dict[str, Decimal] = {}
    for r in period.resources:
        found[r.resource_id] = found.get(r.resource_id, Decimal(0)) + r.effective_cost
    return {k: v.quantize(Decimal("0.01")) for k, v in found.items()}


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


def test_a_legacy_manifest_naming_files_outside_the_reports_own_prefix_is_refused(tmp_path: Path) -> None:
    report = write_legacy_report(tmp_path, "chipwise-legacy", "2026-11", line_item_type_bill(), data_format="parquet")
    path = _manifest(report)
    body = json.loads(path.read_text())
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
    report = write_legacy_report(tmp_path, "chipwise-legacy", "2026-11", line_item_type_bill(), data_format="csv")
    path = _manifest(report)
    body = json.loads(path.read_text())
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
