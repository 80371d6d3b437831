"""`chipwise bill ingest` and `chipwise bill show` on a local export; a bad export is one line and exit 1."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from chipwise.cli import main
from chipwise_devkit.bill_export import TEST_SP, line_item_type_bill, write_export


def test_ingest_then_show(
    use_db: str, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COLUMNS", "200")  # a piped page, whatever the worker's terminal
    export = write_export(tmp_path, "chipwise-cur", "2026-11", line_item_type_bill())
    assert main(["bill", "ingest", "--uri", str(export), "--period", "2026-11", "--json"]) == 0
    (stored,) = json.loads(capsys.readouterr().out)
    assert (stored["billing_period"], stored["table_name"], stored["line_items"]) == (
        "2026-11",
        "COST_AND_USAGE_REPORT",
        9,
    )
    assert main(["bill", "show", "--json"]) == 0
    shown = json.loads(capsys.readouterr().out)
    assert shown["by_account"] == {"111111111111": "171.591000"}
    assert shown["by_team"] == {"(no team tag)": "164.009000", "ml-platform": "7.582000"}
    (plan,) = [c for c in shown["commitments"] if c["arn"] == TEST_SP]
    assert (plan["end_date"], plan["utilisation"], plan["accelerator_coverage"]) == ("2027-06-30", "0.7525", "0.2857")
    assert plan["hourly_commitment_usd"] == "20.000000"
    assert {u["category"]: u["usd"] for u in shown["unattributed"]} == {
        "commitment_unused": "52.500000",
        "credit": "-50.000000",
        "tax": "12.340000",
    }
    assert main(["bill", "show"]) == 0
    table = capsys.readouterr().out
    assert "2027-06-30" in table and "ml-platform" in table and "$171.59" in table


def test_a_missing_manifest_is_one_line_and_exit_1(
    use_db: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    export = write_export(tmp_path, "chipwise-cur", "2026-11", line_item_type_bill())
    assert main(["bill", "ingest", "--uri", str(export), "--period", "2026-10"]) == 1
    err = capsys.readouterr().err.strip()
    assert "BILLING_PERIOD=2026-10/chipwise-cur-Manifest.json: manifest not found" in err
    assert len(err.splitlines()) <= 2 and "Traceback" not in err
    assert main(["bill", "ingest"]) == 1
    assert "data_export_uri" in capsys.readouterr().err
