"""The bill read with DuckDB: hand-computed effective costs per line item type, on CUR 2.0 and on FOCUS 1.2 exports
of the same bill (the same per-resource figures), and bad exports named by file and column."""

from __future__ import annotations

import json
from datetime import date
from decimal import Decimal
from pathlib import Path

import pytest

from chipwise.clock import billing_periods
from chipwise.collect.bill_export import (
    AthenaTable,
    BillError,
    athena_statement,
    columns_read,
    period_of_manifest_key,
    read_period,
)
from chipwise.models.bill import BillPeriod
from chipwise_devkit.bill_export import TEST_ACCOUNT as ACCOUNT
from chipwise_devkit.bill_export import TEST_RI as RI
from chipwise_devkit.bill_export import TEST_SP as SP
from chipwise_devkit.bill_export import TEST_START as START
from chipwise_devkit.bill_export import Line, line_item_type_bill, write_export


def read(tmp_path: Path, table: str) -> BillPeriod:
    write_export(tmp_path, "chipwise-cur", "2026-11", line_item_type_bill(), table=table)  # type: ignore[arg-type]
    return read_period(None, str(tmp_path / "chipwise-cur"), "2026-11")


def per_resource(period: BillPeriod) -> dict[str, tuple[str, Decimal, Decimal, Decimal, Decimal | None]]:
    return {
        r.resource_id: (
            r.pricing,
            r.effective_cost.quantize(Decimal("0.000001")),
            r.public_on_demand_cost.quantize(Decimal("0.000001")),
            r.usage_hours.quantize(Decimal("0.01")),
            None if r.public_on_demand_rate is None else r.public_on_demand_rate.normalize(),
        )
        for r in period.resources
    }


EXPECTED = {
    "i-0d000000000000001": ("on_demand", Decimal("7.582"), Decimal("7.582"), Decimal("10"), Decimal("0.7582")),
    "i-0e000000000000002": ("savings_plan", Decimal("150.5"), Decimal("215"), Decimal("10"), Decimal("21.5")),
    "i-0f000000000000003": ("reservation", Decimal("12"), Decimal("19.6786"), Decimal("10"), Decimal("1.96786")),
    "i-0a000000000000004": ("spot", Decimal("1.509"), Decimal("5.03"), Decimal("5"), Decimal("1.006")),
}


@pytest.mark.parametrize("table", ["COST_AND_USAGE_REPORT", "FOCUS_1_2_AWS"])
def test_effective_cost_per_line_item_type(tmp_path: Path, table: str) -> None:
    period = read(tmp_path, table)
    assert period.table == table
    found = per_resource(period)
    assert {k: (v[0], v[1], v[2], v[3], v[4]) for k, v in found.items()} == {
        k: (p, e.quantize(Decimal("0.000001")), o.quantize(Decimal("0.000001")), h.quantize(Decimal("0.01")), r)
        for k, (p, e, o, h, r) in EXPECTED.items()
    }
    # 7.582 + 150.50 + 12.00 + 1.509: the SP negation and the fees add nothing to any resource
    assert sum(r.effective_cost for r in period.resources) == Decimal("171.591")
    apart = {u.category: u.amount for u in period.unattributed}
    assert apart == {"commitment_unused": Decimal("52.5"), "credit": Decimal("-50"), "tax": Decimal("12.34")}
    tags = {r.resource_id: r.tags for r in period.resources}
    assert tags["i-0d000000000000001"] == {"user:team": "ml-platform", "user:owner": "ana"}
    assert {r.resource_id: r.instance_type for r in period.resources}["i-0e000000000000002"] == "trn1.32xlarge"


@pytest.mark.parametrize("table", ["COST_AND_USAGE_REPORT", "FOCUS_1_2_AWS"])
def test_commitments_used_unused_and_coverage(tmp_path: Path, table: str) -> None:
    commitments = {c.arn: c for c in read(tmp_path, table).commitments}
    sp, ri = commitments[SP], commitments[RI]
    assert (sp.kind, sp.used_cost, sp.unused_cost) == ("savings_plan", Decimal("150.5"), Decimal("49.5"))
    assert sp.utilisation == Decimal("0.7525")  # 150.50 / 200
    # accelerator hours of the account: 10 inf2 + 10 trn1 + 10 inf2.8xl + 5 g5 = 35; 10 covered by the plan
    assert (sp.covered_accelerator_hours, sp.accelerator_hours, sp.coverage) == (10, 35, Decimal("0.2857"))
    assert (ri.kind, ri.used_cost, ri.unused_cost) == ("reservation", Decimal("12"), Decimal("3"))
    if table == "COST_AND_USAGE_REPORT":  # what only CUR carries: the plan's terms
        assert sp.hourly_commitment == Decimal("20.0000")  # 200 committed over 10 h
        assert (sp.offering_type, sp.family, sp.end_date) == ("EC2InstanceSavingsPlans", "trn1", date(2027, 6, 30))
        assert ri.end_date == date(2027, 1, 31)
        # issue 38: the plan's start and Region as CUR 2.0 states them (savings_plan_start_time, savings_plan_region)
        assert (sp.start_date, sp.region) == (date(2026, 7, 1), "us-east-1")
    else:  # FOCUS names the type only (CommitmentDiscountType), not the plan's kind
        assert sp.offering_type == "Savings Plan"
    # its own rate: 150.50 effective over 10 covered hours; off on demand: 1 - 150.50 / 215 = 0.30
    assert (sp.effective_rate, sp.discount, sp.covered_on_demand_cost) == (Decimal("15.05"), Decimal("0.3"), 215)


def test_the_same_bill_gives_the_same_figures_in_both_tables(tmp_path: Path) -> None:
    cur = read(tmp_path / "cur", "COST_AND_USAGE_REPORT")
    focus = read(tmp_path / "focus", "FOCUS_1_2_AWS")
    assert per_resource(cur) == per_resource(focus)
    assert {(u.category, u.amount) for u in cur.unattributed} == {(u.category, u.amount) for u in focus.unattributed}


def test_eks_split_cost_is_a_pod_share_never_added_to_the_node(tmp_path: Path) -> None:
    pod = f"arn:aws:eks:us-east-1:{ACCOUNT}:pod/trainers/default/bert-0/6b1f"
    lines = [
        Line(ACCOUNT, "Usage", START, "USE1-BoxUsage:trn1.32xlarge", "i-0b000000000000005", hours=2,
             unblended_cost=43.0, public_on_demand_rate=21.5, public_on_demand_cost=43.0),
        Line(ACCOUNT, "Usage", START, "USE1-BoxUsage:trn1.32xlarge", pod, hours=2, unblended_cost=43.0,
             public_on_demand_rate=21.5, public_on_demand_cost=43.0, split_parent="i-0b000000000000005",
             split_cost=32.25, split_usage=1.5, split_public_cost=32.25, tags={"user:team": "nlp"}),
    ]  # fmt: skip
    write_export(tmp_path, "chipwise-cur", "2026-11", lines)
    period = read_period(None, str(tmp_path / "chipwise-cur"), "2026-11")
    found = {r.resource_id: r for r in period.resources}
    assert found[pod].parent_resource_id == "i-0b000000000000005"
    assert (found[pod].effective_cost, found[pod].usage_hours) == (Decimal("32.25"), Decimal("1.5"))
    assert found["i-0b000000000000005"].effective_cost == Decimal("43")
    assert sum(r.effective_cost for r in period.resources if r.parent_resource_id is None) == Decimal("43")


def test_missing_manifest_names_it(tmp_path: Path) -> None:
    write_export(tmp_path, "chipwise-cur", "2026-11", line_item_type_bill())
    with pytest.raises(BillError, match=r"BILLING_PERIOD=2026-10/chipwise-cur-Manifest.json: manifest not found"):
        read_period(None, str(tmp_path / "chipwise-cur"), "2026-10")


def test_a_column_of_the_wrong_type_names_file_and_column(tmp_path: Path) -> None:
    import duckdb

    export = write_export(tmp_path, "chipwise-cur", "2026-11", line_item_type_bill())
    data = next((export / "data").rglob("*.parquet"))
    con = duckdb.connect()
    con.execute(
        f"COPY (SELECT * REPLACE (CAST(line_item_unblended_cost AS VARCHAR) AS line_item_unblended_cost) "
        f"FROM read_parquet('{data}')) TO '{data}.tmp' (FORMAT parquet)"
    )
    con.close()
    Path(f"{data}.tmp").replace(data)
    with pytest.raises(
        BillError, match=r"chipwise-cur-00001.snappy.parquet: column line_item_unblended_cost is VARCHAR"
    ):
        read_period(None, str(export), "2026-11")


def test_unreadable_parquet_and_unknown_table(tmp_path: Path) -> None:
    export = write_export(tmp_path, "chipwise-cur", "2026-11", line_item_type_bill())
    data = next((export / "data").rglob("*.parquet"))
    data.write_bytes(b"not parquet")
    with pytest.raises(BillError, match=r"chipwise-cur-00001.snappy.parquet: unreadable Parquet"):
        read_period(None, str(export), "2026-11")
    manifest = next((export / "metadata").rglob("*-Manifest.json"))
    body = json.loads(manifest.read_text())
    manifest.write_text(json.dumps({**body, "queryStatement": "SELECT * FROM COST_OPTIMIZATION_RECOMMENDATIONS"}))
    with pytest.raises(BillError, match=r"Manifest.json: unknown table COST_OPTIMIZATION_RECOMMENDATIONS"):
        read_period(None, str(export), "2026-11")


def test_athena_statement_filters_the_partition_and_projects_only_the_needed_columns() -> None:
    sql = athena_statement("COST_AND_USAGE_REPORT", AthenaTable("cur", "chipwise_cur", "primary"), "2026-11")
    assert 'FROM "cur"."chipwise_cur" WHERE billing_period = \'2026-11\'' in sql
    assert "SELECT *" not in sql
    for column in columns_read("COST_AND_USAGE_REPORT", split=False):
        assert f'"{column}"' in sql
    assert "bill_invoice_id" not in sql and "line_item_operation" not in sql  # only the columns read


def test_billing_periods_of_a_window() -> None:
    assert billing_periods(date(2026, 10, 20), date(2026, 11, 3)) == ["2026-10", "2026-11"]
    assert billing_periods(date(2026, 11, 1), date(2026, 12, 1)) == ["2026-11"]
    assert billing_periods(date(2026, 12, 20), date(2027, 1, 2)) == ["2026-12", "2027-01"]
    assert period_of_manifest_key("exports/cur/metadata/BILLING_PERIOD=2026-11/cur-Manifest.json") == "2026-11"
    assert period_of_manifest_key("exports/cur/data/BILLING_PERIOD=2026-11/cur-00001.snappy.parquet") is None


def test_athena_reads_a_focus_table_whose_glue_columns_are_lower_case() -> None:
    from chipwise.collect.bill_export.formats import export_format

    glue = [name.lower() for name in export_format("FOCUS_1_2_AWS").columns]
    sql = athena_statement("FOCUS_1_2_AWS", AthenaTable("cur", "focus", "primary"), "2026-11", glue)
    assert '"SkuMeter"' in sql and '"EffectiveCost"' in sql and "\"ProviderName\" = 'AWS'" in sql
