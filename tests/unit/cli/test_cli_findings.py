"""`chipwise findings` for a person acting on them: a table with the ARN and console link, CSV, strict filters,
short ids, and an empty store that says how to fill it."""

from __future__ import annotations

import csv
import io
import sys
from datetime import UTC, date, datetime
from decimal import Decimal
from pathlib import Path

import pytest
from sqlalchemy.orm import Session, sessionmaker

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "notify"))
from notify_factories import estate

from chipwise.cli import main
from chipwise.cli._findings_view import flatten_evidence
from chipwise.cli.findings import demo_findings_command, empty_store_hint
from chipwise.store.repositories.realised import RealisedSavingRepository
from chipwise.store.tables import Finding


@pytest.fixture
def stored(use_db: str, session_factory: sessionmaker[Session]) -> dict[str, Finding]:
    with session_factory.begin() as session:
        found = estate(session)
        found["big_new"].evidence = {"p95_util_pct": 12.5, "window": {"days": 14}, "signals": ["cpu", "gpu"]}
    return found


def test_show_prints_where_the_resource_is_and_how_to_act(
    stored: dict[str, Finding], capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COLUMNS", "220")
    finding = stored["big_new"]
    assert main(["findings", "show", finding.id[:8]]) == 0
    out = capsys.readouterr().out
    for expected in (
        finding.resource_arn,
        "123456789012",
        "us-east-1",
        "open",
        "https://us-east-1.console.aws.amazon.com/sagemaker/home?region=us-east-1#/endpoints/chat-mistral-g5",
        f"chipwise findings suppress {finding.id[:8]} --until YYYY-MM-DD",
        "$4,406.28",  # the monthly cost with $ and separators
        "window.days",  # nested evidence as dotted keys, not a Python dict
        "cpu, gpu",
    ):
        assert expected in out, expected
    assert "{'days'" not in out


def test_csv_has_one_row_per_finding(stored: dict[str, Finding], capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["findings", "--format", "csv"]) == 0
    rows = list(csv.DictReader(io.StringIO(capsys.readouterr().out)))
    assert len(rows) == 3  # the open ones
    big = next(r for r in rows if r["resource_name"] == "chat-mistral-g5")
    assert big["estimated_monthly_savings_usd"] == "2400.50" and big["monthly_cost_usd"] == "4406.28"
    assert big["console_url"].startswith("https://us-east-1.console.aws.amazon.com/sagemaker/")


def test_the_table_shows_dollars_and_keeps_words_whole_when_piped(
    stored: dict[str, Finding], capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("COLUMNS", raising=False)  # piped, nothing said about the width
    assert main(["findings"]) == 0
    out = capsys.readouterr().out
    assert "$2,400.50" in out and "chat-mistral-g5" in out and "GPU inference portable" in out


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (["--rule", "nonexistent"], "unknown rule 'nonexistent'"),
        (["--region", "mars-north-1"], "not an AWS region"),
        (["--account", "12345"], "not a 12-digit AWS account id"),
        (["--format", "xml"], "--format must be one of table, json, csv"),
        (["--status", "gone"], "--status must be one of"),
    ],
)
def test_unknown_filter_values_are_errors(
    use_db: str, capsys: pytest.CaptureFixture[str], args: list[str], needle: str
) -> None:
    assert main(["findings", *args]) == 1
    assert needle in capsys.readouterr().err


def test_known_filters_still_filter(stored: dict[str, Finding], capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["findings", "--rule", "inferentia_idle", "--region", "us-east-1", "--format", "csv"]) == 0
    rows = list(csv.DictReader(io.StringIO(capsys.readouterr().out)))
    assert [r["resource_name"] for r in rows] == ["search-idle-inf2"]


def test_an_empty_store_says_how_to_fill_it(use_db: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["findings"]) == 0
    assert "chipwise scan" in capsys.readouterr().err


def test_an_empty_store_points_at_the_demo_store_when_there_is_one(tmp_path: Path) -> None:
    # (the tests run in tmp_path: a demo folder there is what `make demo` leaves)
    assert "make demo" in empty_store_hint("sqlite:///chipwise.db")
    (tmp_path / "chipwise-demo").mkdir()
    (tmp_path / "chipwise-demo" / "chipwise-demo.db").write_bytes(b"")
    hint = empty_store_hint("sqlite:///chipwise.db")
    assert hint.endswith("CHIPWISE_DATABASE_URL=sqlite:///chipwise-demo/chipwise-demo.db chipwise findings")
    assert demo_findings_command() == "CHIPWISE_DATABASE_URL=sqlite:///chipwise-demo/chipwise-demo.db chipwise findings"


def test_help_keeps_bracketed_words_and_shows_no_bool_metavar(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["findings", "evaluate", "--help"]) == 0
    text = capsys.readouterr().out
    assert "[rules.<rule_id>]" in text and "<bool>" not in text


def test_flatten_evidence() -> None:
    assert flatten_evidence({"a": {"b": 1, "c": None}, "d": [{"e": 2}], "f": []}) == [
        ("a.b", "1"),
        ("a.c", "-"),
        ("d[0].e", "2"),
        ("f", "-"),
    ]


def test_benchmarks_take_the_short_ids_the_lists_show(
    stored: dict[str, Finding], session_factory: sessionmaker[Session], capsys: pytest.CaptureFixture[str]
) -> None:
    from chipwise.store.tables import BenchmarkRun

    finding = stored["big_new"]
    with session_factory.begin() as session:
        session.add(
            BenchmarkRun(
                id="7f3a9c21-0000-4000-8000-000000000001",
                finding_id=finding.id,
                target_instance_type="inf2.xlarge",
                job_queue="chipwise-bench-inf2",
            )
        )
    assert main(["benchmarks", "show", "7f3a9c", "--json"]) == 0
    assert '"run_id": "7f3a9c21-0000-4000-8000-000000000001"' in capsys.readouterr().out
    assert main(["benchmarks", "list", "--finding", finding.id[:8], "--json"]) == 0
    assert "7f3a9c21" in capsys.readouterr().out
    assert main(["benchmarks", "show", "000000"]) == 1
    assert "no benchmark run '000000'" in capsys.readouterr().err


def test_realised_lists_each_measured_fix_and_each_rules_accuracy(
    stored: dict[str, Finding],
    session_factory: sessionmaker[Session],
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Given the resolved $700 idle finding measured at $630 a month realised (3 days before, 4 after the change)
    resolved = stored["resolved"]
    with session_factory.begin() as session:
        RealisedSavingRepository(session).save(
            [
                {
                    "finding_id": resolved.id,
                    "account_id": resolved.account_id,
                    "region": resolved.region,
                    "rule_id": resolved.rule_id,
                    "resource_name": resolved.resource_name,
                    "instance_type": "ml.inf2.xlarge",
                    "cause": "gone",
                    "status": "measured",
                    "estimated_monthly_savings_usd": Decimal("700"),
                    "realised_monthly_savings_usd": Decimal("630"),
                    "accuracy": Decimal("0.9"),
                    "before_daily_usd": Decimal("21"),
                    "after_daily_usd": Decimal("0.29"),
                    "before_days": 3,
                    "after_days": 4,
                    "changed_after": date(2026, 11, 20),
                    "resolved_at": datetime(2026, 11, 21, tzinfo=UTC),
                }
            ]
        )
    monkeypatch.setenv("COLUMNS", "200")
    # When `chipwise findings realised` runs
    assert main(["findings", "realised"]) == 0
    out = capsys.readouterr().out
    # Then the fix is listed next to its estimate, and the rule's accuracy is 630 / 700 = 90 %
    assert "old-endpoint" in out and "$700.00" in out and "$630.00" in out and "3 · 4" in out
    assert "realised to date: $630.00 a month" in out
    assert "Idle Inferentia endpoint or instance: 1 measured, 0 pending, 90% of the estimate" in out


def test_realised_on_a_store_without_measurements_says_when_they_come(
    stored: dict[str, Finding], capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["findings", "realised"]) == 0
    assert "no resolved finding has been measured yet" in capsys.readouterr().out
