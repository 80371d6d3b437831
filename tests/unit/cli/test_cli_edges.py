"""The rough edges a stranger hits on the command line (issue 27), each through the ``chipwise`` entry point."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest
from sqlalchemy.orm import Session, sessionmaker

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "notify"))
from notify_factories import ACCOUNT, estate

from chipwise.cli import main
from chipwise.cli.common import err
from chipwise.store.tables import BenchmarkRun, Finding

RUN_ID = "7f3a9c21-0000-4000-8000-000000000001"


@pytest.fixture
def stored(use_db: str, session_factory: sessionmaker[Session]) -> dict[str, Finding]:
    with session_factory.begin() as session:
        return estate(session)


def test_benchmarks_list_shows_the_8_character_ids_the_readme_promises(
    stored: dict[str, Finding], session_factory: sessionmaker[Session], capsys: pytest.CaptureFixture[str]
) -> None:
    with session_factory.begin() as session:
        session.add(
            BenchmarkRun(id=RUN_ID, finding_id=stored["big_new"].id, target_instance_type="inf2.xlarge", job_queue="q")
        )
    assert main(["benchmarks", "list"]) == 0
    out = capsys.readouterr().out
    assert "7f3a9c21" in out and RUN_ID not in out and "7f3a9c21-0000" not in out
    assert main(["benchmarks", "show", "7f3a9c21"]) == 0  # and the short id is enough to open it


def test_an_account_the_store_does_not_hold_is_an_error(
    stored: dict[str, Finding], capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["findings", "--account", "111111111111"]) == 1
    message = capsys.readouterr().err
    assert "no account 111111111111 in the store" in message and ACCOUNT in message
    assert main(["findings", "--account", ACCOUNT]) == 0  # a known account still lists


def test_evaluate_runs_bare_on_every_account_in_the_store(
    stored: dict[str, Finding], capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["findings", "evaluate"]) == 0
    captured = capsys.readouterr()
    assert f"for account {ACCOUNT}" in captured.out and "Missing option" not in captured.err
    assert main(["findings", "evaluate", "--account", "111111111111"]) == 1
    assert "no account 111111111111" in capsys.readouterr().err


def test_evaluate_on_an_empty_store_says_what_to_do(use_db: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["findings", "evaluate"]) == 1
    assert "holds no account yet: run `chipwise scan`" in capsys.readouterr().err


def test_an_empty_store_names_chipwise_scan_even_when_the_demo_store_exists(
    use_db: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "chipwise-demo").mkdir()  # the tests run in tmp_path: what `make demo` leaves
    (tmp_path / "chipwise-demo" / "chipwise-demo.db").write_bytes(b"")
    assert main(["findings"]) == 0
    hint = capsys.readouterr().err
    assert "run `chipwise scan`" in hint and "CHIPWISE_DATABASE_URL=sqlite:///chipwise-demo/chipwise-demo.db" in hint


def test_suppress_until_a_date_answers_the_date_typed(
    stored: dict[str, Finding], capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COLUMNS", "300")
    finding = stored["big_new"]
    assert main(["findings", "suppress", finding.id[:8], "--until", "2026-12-31", "--reason", "migration"]) == 0
    out = capsys.readouterr().out
    assert "through 2026-12-31" in out and "2027-01-01" not in out
    assert "GPU inference portable to Inferentia on chat-mistral-g5" in out  # the rule's title, not its id


def test_plurals_are_words_not_parentheses(stored: dict[str, Finding], capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["findings", "--rule", "inferentia_idle"]) == 0
    out = capsys.readouterr().out
    assert "1 open finding " in out and "(s)" not in out
    assert main(["findings"]) == 0
    assert "3 open findings" in capsys.readouterr().out


def test_the_demo_table_on_stderr_keeps_words_whole_when_piped(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("COLUMNS", raising=False)
    assert not err.is_terminal  # under pytest stderr is captured: what `make demo 2>log` sees
    assert err.width == 200


def test_show_titles_a_finding_with_the_rules_title(
    stored: dict[str, Finding], capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COLUMNS", "220")
    assert main(["findings", "show", stored["old"].id[:8]]) == 0
    first = capsys.readouterr().out.splitlines()[0]
    assert first.startswith("Idle Inferentia endpoint or instance on search-idle-inf2")


def test_catalog_show_refuses_a_region_it_does_not_price(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["catalog", "show", "inf2", "--region", "mars-1"]) == 1
    captured = capsys.readouterr()
    assert "--region 'mars-1' is not a region the catalog prices" in captured.err
    assert "`chipwise catalog regions`" in captured.err and "n/a" not in captured.out
    assert main(["catalog", "regions"]) == 0
    assert "eu-west-1" in capsys.readouterr().out
    assert main(["catalog", "show", "inf2", "--region", "eu-west-1"]) == 0


def test_help_lists_commands_in_order_with_whole_sentences(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--help"]) == 0
    text = capsys.readouterr().out
    commands = text.split("Commands:", 1)[1]
    names = re.findall(r"^  (\S+)", commands, flags=re.MULTILINE)
    assert names == sorted(names) and {"findings", "report", "scan", "catalog"} <= set(names)
    assert "..." not in commands
    assert "Findings: where accelerator money leaks, how much, how sure, and what to do." in " ".join(commands.split())


@pytest.mark.parametrize(
    ("command", "placeholder"),
    [
        (["benchmarks", "submit"], "--finding FINDING"),
        (["findings"], "--account ACCOUNT"),
        (["findings", "show"], "FINDING_ID"),
        (["catalog", "refresh"], "--output OUTPUT"),
        (["notify"], "--account ACCOUNT"),
        (["drafts"], "--company COMPANY"),
    ],
)
def test_help_names_placeholders_not_python_types(
    command: list[str], placeholder: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main([*command, "--help"]) == 0
    text = capsys.readouterr().out
    assert placeholder in text
    assert not re.search(r"<(str|int|path|list\[str\]|float range)>", text), text


def test_the_drafts_folder_with_customer_financials_is_git_ignored() -> None:
    # `chipwise drafts` writes ./chipwise-drafts/<account>/ (spend, savings, company facts): never committed
    gitignore = Path(__file__).resolve().parents[3] / ".gitignore"
    assert "chipwise-drafts/" in gitignore.read_text().splitlines()


def test_hourly_rates_read_as_price_lists_print_them() -> None:
    from decimal import Decimal

    from chipwise.economics import usd_per_hour

    assert usd_per_hour(Decimal("21.957642")) == "$21.9576/h"
    assert usd_per_hour(Decimal("1.006")) == "$1.006/h"
    assert usd_per_hour(Decimal("0.4")) == "$0.40/h"
    assert usd_per_hour(Decimal("1515")) == "$1,515.00/h"


def test_the_plan_shows_no_hourly_rate_with_six_decimals(capsys: pytest.CaptureFixture[str]) -> None:
    intake = Path(__file__).resolve().parents[3] / "devkit" / "chipwise_devkit" / "demo" / "intake.json"
    assert main(["plan", "--input", str(intake), "--format", "md"]) == 0
    plan = capsys.readouterr().out
    assert "2 × p4d.24xlarge at $21.9576/h for 160 h" in plan
    assert not re.search(r"\$\d[\d,]*\.\d{5,}/h", plan)


def test_no_message_hedges_its_plural_with_parentheses() -> None:
    # "1 instance(s)", "2 fix(es)": every count is worded with presentation.plural (or a template's own if)
    root = Path(__file__).resolve().parents[3]
    sources = [
        *(root / "shared" / "chipwise").rglob("*.py"),
        *(root / "devkit" / "chipwise_devkit" / "demo").rglob("*.py"),
        *(root / "templates").rglob("*.j2"),
    ]
    hedged = re.compile(r"[a-z]\((s|es|ies)\)")
    found = [
        f"{p.relative_to(root)}:{n}"
        for p in sources
        for n, line in enumerate(p.read_text().splitlines(), 1)
        if hedged.search(line)
    ]
    assert found == []


def test_plural_words_a_count() -> None:
    from decimal import Decimal

    from chipwise.presentation import plural

    assert [plural(1, "finding"), plural(3, "finding"), plural(2, "fix", "fixes")] == [
        "1 finding",
        "3 findings",
        "2 fixes",
    ]
    assert [plural(Decimal("0.5"), "instance"), plural(Decimal("1.0"), "instance")] == ["0.5 instances", "1 instance"]


def test_the_configuration_page_settings_table_gives_the_mail_defaults() -> None:
    from chipwise.settings import Settings

    readme = (Path(__file__).resolve().parents[3] / "docs" / "configuration.md").read_text(encoding="utf-8")
    rows = {line.split("|")[1].strip(): line for line in readme.splitlines() if line.startswith("| `")}
    defaults = Settings.model_fields
    assert f"`{defaults['email_sender'].default}`" in rows["`email_sender`, `email_recipients`"]
    assert f"`{defaults['advisory_email'].default}`" in rows["`advisory_email`"]
