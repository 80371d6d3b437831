"""One bill per payer account and billing period, whichever export delivers it; other clouds reported apart; a
hostile export rejected in one line with nothing stored (SQLite, and PostgreSQL when configured)."""

from __future__ import annotations

import json
from pathlib import Path

import duckdb
import pytest
from sqlalchemy import select
from sqlalchemy.orm import Session, sessionmaker

from chipwise.cli import main
from chipwise.store.tables import BillPeriodRow, BillResourceCost
from chipwise_devkit.bill_export import Line, line_item_type_bill, write_export


def _spend(capsys: pytest.CaptureFixture[str]) -> dict[str, object]:
    assert main(["bill", "show", "--json"]) == 0
    found: dict[str, object] = json.loads(capsys.readouterr().out)
    return found


def test_the_same_bill_from_another_uri_and_format_replaces_it(
    use_db: str, tmp_path: Path, capsys: pytest.CaptureFixture[str], session_factory: sessionmaker[Session]
) -> None:
    cur = write_export(tmp_path / "a", "chipwise-cur", "2026-11", line_item_type_bill())
    focus = write_export(tmp_path / "b", "chipwise-focus", "2026-11", line_item_type_bill(), table="FOCUS_1_2_AWS")
    csv = write_export(tmp_path / "c", "chipwise-cur-csv", "2026-11", line_item_type_bill(), data_format="csv")
    for export in (cur, cur, focus, csv, focus):
        assert main(["bill", "ingest", "--uri", str(export), "--period", "2026-11", "--json"]) == 0
        capsys.readouterr()
        shown = _spend(capsys)
        assert shown["by_account"] == {"111111111111": "171.591000"}  # never doubled
        (period,) = shown["periods"]  # type: ignore[misc]
        assert (period["export_uri"], period["payer_account_id"]) == (str(export), "111111111111")
    assert period["table"] == "FOCUS_1_2_AWS"
    with session_factory() as session:
        assert session.query(BillPeriodRow).count() == 1
        assert len(list(session.scalars(select(BillResourceCost.id)))) == 4
    assert main(["bill", "show"]) == 0
    assert f"2026-11 (payer 111111111111): FOCUS_1_2_AWS (parquet) from {focus}" in capsys.readouterr().out


def test_other_clouds_are_reported_apart(
    use_db: str, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COLUMNS", "200")
    export = write_export(tmp_path, "chipwise-focus", "2026-11", line_item_type_bill(), table="FOCUS_1_2_AWS")
    data = next((export / "data").rglob("*.parquet"))
    con = duckdb.connect()
    con.execute(
        f"COPY (SELECT * FROM read_parquet('{data}') UNION ALL BY NAME SELECT * REPLACE ('Microsoft' AS ProviderName,"
        f" 'sub' AS SubAccountId) FROM read_parquet('{data}') UNION ALL BY NAME SELECT * REPLACE ('Oracle' AS"
        f" ProviderName) FROM read_parquet('{data}') WHERE ChargeCategory = 'Usage') TO '{data}.x' (FORMAT parquet)"
    )
    con.close()
    Path(f"{data}.x").replace(data)
    assert main(["bill", "ingest", "--uri", str(export), "--period", "2026-11"]) == 0
    assert "16 rows of Microsoft, Oracle: not read" in capsys.readouterr().out
    shown = _spend(capsys)
    assert shown["by_account"] == {"111111111111": "171.591000"}
    assert shown["periods"][0]["not_read"] == {"Microsoft": 10, "Oracle": 6}  # type: ignore[index]
    assert main(["bill", "show"]) == 0
    assert "16 rows of Microsoft, Oracle: not read" in capsys.readouterr().out


def _hostile(root: Path, change: str) -> Path:
    export = write_export(root, "chipwise-cur", "2026-11", line_item_type_bill())
    data = next((export / "data").rglob("*.parquet"))
    con = duckdb.connect()
    con.execute(f"COPY (SELECT * {change} FROM read_parquet('{data}')) TO '{data}.x' (FORMAT parquet)")
    con.close()
    Path(f"{data}.x").replace(data)
    return export


HOSTILE = {
    "cost 1e15": "REPLACE (line_item_unblended_cost * 1e14 AS line_item_unblended_cost)",
    "cost 1e25": "REPLACE (line_item_unblended_cost * 1e24 AS line_item_unblended_cost)",
    "account id of 5,000 characters": "REPLACE (repeat('1', 5000) AS line_item_usage_account_id)",
    "NULL usage date": "REPLACE (CAST(NULL AS TIMESTAMP) AS line_item_usage_start_date)",
    "NULL cost": "REPLACE (CAST(NULL AS DOUBLE) AS line_item_unblended_cost)",
    "a day outside the period": "REPLACE (line_item_usage_start_date + INTERVAL 40 DAY AS line_item_usage_start_date)",
}


@pytest.mark.parametrize("change", list(HOSTILE))
def test_a_hostile_export_is_one_line_and_stores_nothing(
    use_db: str,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    session_factory: sessionmaker[Session],
    change: str,
) -> None:
    export = _hostile(tmp_path, HOSTILE[change])
    assert main(["bill", "ingest", "--uri", str(export), "--period", "2026-11"]) == 1
    err = capsys.readouterr().err.strip()
    assert "Traceback" not in err and len(err.splitlines()) == 1, err
    assert "chipwise-cur-00001.snappy.parquet: row 1, column " in err
    with session_factory() as session:
        assert session.query(BillPeriodRow).count() == 0
        assert session.query(BillResourceCost).count() == 0


def test_sums_beyond_the_stores_precision_are_rejected(
    use_db: str, tmp_path: Path, capsys: pytest.CaptureFixture[str], session_factory: sessionmaker[Session]
) -> None:
    """Each line within ±1e12, their sum for one resource-day not: rejected, not rounded or overflowed."""
    start = line_item_type_bill()[0].start
    lines = [
        Line("111111111111", "Usage", start, "USE1-BoxUsage:inf2.xlarge", "i-0d000000000000001", hours=1,
             unblended_cost=9e11, public_on_demand_cost=1.0)
        for _ in range(3)
    ]  # fmt: skip
    export = write_export(tmp_path, "chipwise-cur", "2026-11", lines)
    assert main(["bill", "ingest", "--uri", str(export), "--period", "2026-11"]) == 1
    err = capsys.readouterr().err.strip()
    assert "beyond what a bill can hold" in err and "Traceback" not in err
    with session_factory() as session:
        assert session.query(BillPeriodRow).count() == 0


def test_the_store_writes_every_field_of_a_resource_day() -> None:
    from dataclasses import fields

    from chipwise.models.bill import ResourceCost
    from chipwise.store.repositories.bill_writer import RESOURCE_FIELDS

    assert tuple(f.name for f in fields(ResourceCost)) == RESOURCE_FIELDS
