"""The DuckDB read sums the lines per raw key first (:mod:`chipwise.collect.bill_export.grouped`): amounts as exact
integers of 1e-10 in DOUBLE, a group that cannot be shown exact read again with decimals, checks proven from the
Parquet footers' statistics where they can be: the same bill to the cent as casting every line to a decimal."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import duckdb
import pytest

from chipwise.collect.bill_export import BillError, assembly, duckdb_engine, grouped, read_period
from chipwise_devkit.bill_export import Line, line_item_type_bill, write_export


def _export(root: Path, lines: list[Line] | None = None) -> Path:
    return write_export(root, "chipwise-cur", "2026-11", lines or line_item_type_bill())


def _data(export: Path) -> Path:
    return next((export / "data").rglob("*.parquet"))


def _resources(export: Path) -> list[tuple[Any, ...]]:
    period = read_period(None, str(export), "2026-11")
    return sorted(
        (r.account_id, r.day, r.resource_id, r.pricing, r.effective_cost, r.billed_cost, r.public_on_demand_cost,
         r.public_on_demand_rate, r.usage_hours, r.commitment_arn, tuple(sorted(r.tags.items())))
        for r in period.resources
    )  # fmt: skip


def test_the_grouped_read_equals_a_decimal_cast_of_every_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    export = _export(tmp_path)
    fast = _resources(export)
    monkeypatch.setattr(grouped, "_fast", lambda duck_type: False)  # every amount cast per line, as before
    assert _resources(export) == fast
    assert [(str(r[4]), r[4].as_tuple().exponent) for r in fast] == [(str(r[4]), -10) for r in fast]


def test_sums_a_double_cannot_hold_exactly_are_read_again_with_decimals(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    start = line_item_type_bill()[0].start
    costs = [300_000_000.1, 300_000_000.2, 300_000_000.3]  # three lines of one resource-day: 3 x 3e18 > 2^52
    lines = [
        Line("111111111111", "Usage", start, "USE1-BoxUsage:inf2.xlarge", "i-0d000000000000001", hours=1,
             unblended_cost=cost, public_on_demand_cost=1.0)
        for cost in costs
    ]  # fmt: skip
    export = _export(tmp_path, lines)
    con = duckdb.connect()
    (exact,) = con.execute(
        f"SELECT SUM(CAST(line_item_unblended_cost AS DECIMAL(38,10))) FROM read_parquet('{_data(export)}')"
    ).fetchone() or (None,)
    con.close()
    runs: list[bool] = []
    query = duckdb_engine.fast_query

    def spy(*args: Any) -> str:
        runs.append(bool(args[-1]))
        return query(*args)

    monkeypatch.setattr(duckdb_engine, "fast_query", spy)
    period = read_period(None, str(export), "2026-11")
    assert runs == [False, True]  # the group was flagged, then read with a decimal cast of each line
    (resource,) = period.resources
    assert resource.effective_cost == exact and period.line_items == 3


def test_a_nan_amount_is_rejected_naming_its_row(tmp_path: Path) -> None:
    export = _export(tmp_path)
    data = _data(export)
    con = duckdb.connect()
    con.execute(
        f"COPY (SELECT * EXCLUDE (n) REPLACE (CASE WHEN n = 0 THEN CAST('NaN' AS DOUBLE) ELSE line_item_unblended_cost"
        f" END AS line_item_unblended_cost) FROM (SELECT *, row_number() OVER () - 1 AS n FROM read_parquet('{data}')))"
        f" TO '{data}.tmp' (FORMAT parquet)"
    )
    con.close()
    Path(f"{data}.tmp").replace(data)
    with pytest.raises(BillError, match=r"chipwise-cur-00001.snappy.parquet: row 1, column line_item_unblended_cost"):
        read_period(None, str(export), "2026-11")


def test_the_footer_proves_what_its_statistics_show(tmp_path: Path) -> None:
    export = _export(tmp_path)
    data = _data(export)
    con = duckdb_engine.connect(tmp_path / "scratch")
    described = {str(r[0]): str(r[1]) for r in con.execute(f"DESCRIBE SELECT * FROM read_parquet('{data}')").fetchall()}
    src = duckdb_engine.source_of("COST_AND_USAGE_REPORT", "parquet", described, f"read_parquet('{data}')")
    footer = duckdb_engine._footer(con, [data], src)
    assert {"line_item_unblended_cost", "line_item_usage_amount"} <= footer.proven
    assert "split_line_item_split_cost" in footer.zero and "line_item_unblended_cost" not in footer.zero
    assert footer.constant.get("bill_payer_account_id") == "111111111111"
    assert "line_item_resource_id" not in footer.constant
    con.execute(
        f"COPY (SELECT * REPLACE (line_item_unblended_cost * 1e13 AS line_item_unblended_cost) FROM"
        f" read_parquet('{data}')) TO '{data}.tmp' (FORMAT parquet)"
    )
    Path(f"{data}.tmp").replace(data)
    assert "line_item_unblended_cost" not in duckdb_engine._footer(con, [data], src).proven  # checked per line
    con.close()


def test_a_column_only_compared_with_one_literal_is_keyed_by_that_comparison() -> None:
    used = """CASE WHEN "pricing_term" = 'Spot' OR "line_item_usage_type" LIKE '%SpotUsage%' THEN 'spot' END"""
    assert grouped._tested_literal('"pricing_term"', used) == "Spot"
    assert grouped._tested_literal('"pricing_term"', used + """ "pricing_term" = 'OnDemand'""") is None
    assert grouped._tested_literal('"pricing_term"', used + " COALESCE(\"pricing_term\", '')") is None
    assert grouped._tested_literal('"line_item_usage_type"', used) is None
    assert grouped._tested_literal('"x"', """"x" = 'it''s'""") == "it's"


def test_the_spot_test_as_a_key_reads_the_same_bill_as_the_pricing_term(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    start = line_item_type_bill()[0].start
    spot_by_term = Line("111111111111", "Usage", start, "USE1-BoxUsage:inf2.xlarge", "i-0d000000000000002", hours=1,
                        unblended_cost=0.25, public_on_demand_cost=0.76, pricing_term="Spot")  # fmt: skip
    export = _export(tmp_path, [*line_item_type_bill(), spot_by_term])
    data = _data(export)
    con = duckdb.connect()
    con.execute(  # a NULL pricing term as well as 'OnDemand', 'Reserved' and 'Spot'
        f"COPY (SELECT * REPLACE (CASE WHEN line_item_resource_id = 'i-0d000000000000001' THEN NULL ELSE pricing_term"
        f" END AS pricing_term) FROM read_parquet('{data}')) TO '{data}.tmp' (FORMAT parquet)"
    )
    con.close()
    Path(f"{data}.tmp").replace(data)
    relations: list[str] = []
    relation = grouped.grouped_relation

    def spy(*args: Any, **kwargs: Any) -> Any:
        found = relation(*args, **kwargs)
        relations.append(found.relation)
        return found

    monkeypatch.setattr(duckdb_engine, "grouped_relation", spy)
    keyed = _resources(export)
    assert """"pricing_term" = 'Spot' AS "pricing_term\"""" in relations[-1]
    assert ("111111111111", start.date(), "i-0d000000000000002", "spot") in {r[:4] for r in keyed}
    monkeypatch.setattr(grouped, "_tested_literal", lambda quoted, used: None)  # keyed by the text, as before
    assert _resources(export) == keyed
    assert """"pricing_term" = 'Spot'""" not in relations[-1]


def test_amounts_share_a_decimal_per_text_within_a_bound(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    export = _export(tmp_path)
    shared = _resources(export)
    kept: list[int] = []
    finish = assembly.Assembler.finish

    def spy(self: assembly.Assembler) -> Any:
        kept.append(len(self.numbers))
        return finish(self)

    monkeypatch.setattr(assembly.Assembler, "finish", spy)
    monkeypatch.setattr(assembly, "NUMBERS_KEPT", 2)
    assert _resources(export) == shared  # beyond the bound: each amount parsed on its own, the same figures
    assert kept == [2]
    assert [(str(r[4]), r[4].as_tuple().exponent) for r in shared] == [(str(r[4]), -10) for r in shared]
