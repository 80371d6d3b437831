"""Issue 37: the command line at an organisation's scale: a `--help` that loads neither the database library nor
the AWS SDK, every list command filtered by account, team and region and cut to --limit rows (with how many more),
JSON lines, and pages that resume after a cursor."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import get_args

import pytest
from sqlalchemy.orm import Session, sessionmaker

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "notify"))
from notify_factories import estate

from chipwise.catalog.credits import CompanyStage
from chipwise.cli import main, root_command
from chipwise.cli.drafts import STAGES
from chipwise.store.tables import Finding, Resource

HEAVY = ("sqlalchemy", "boto3", "botocore", "pydantic", "chipwise.store", "chipwise.remediate")
LIST_COMMANDS = (("findings",), ("resources",))


def _loaded_after(argv: list[str]) -> list[str]:
    code = (
        "import sys\n"
        "from chipwise.cli import main\n"
        f"code = main({argv!r})\n"
        f"print(sorted(m for m in sys.modules if m.split('.')[0] in {HEAVY!r} or m.startswith({HEAVY!r})))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=120)
    loaded: list[str] = json.loads(done.stdout.strip().splitlines()[-1].replace("'", '"'))
    return loaded


def test_help_imports_neither_the_database_library_nor_the_aws_sdk() -> None:
    loaded = _loaded_after(["--help"])
    assert loaded == [], loaded  # nor pydantic, the store or the remediation code


def test_every_list_command_accepts_account_team_region_and_limit() -> None:
    root = root_command()
    for path in LIST_COMMANDS:
        command = root
        for name in path:
            command = command.commands[name]  # type: ignore[attr-defined]
        options = {o for p in command.params for o in getattr(p, "opts", [])}
        assert {"--account", "--team", "--region", "--limit", "--cursor"} <= options, (path, options)


def test_the_stages_offered_are_the_catalogs() -> None:
    assert get_args(CompanyStage) == STAGES


@pytest.fixture
def stored(use_db: str, session_factory: sessionmaker[Session], monkeypatch: pytest.MonkeyPatch) -> dict[str, Finding]:
    monkeypatch.setenv("CHIPWISE_TEAM_TAG_KEYS", "team")
    with session_factory.begin() as session:
        found = estate(session)
        for resource in session.query(Resource).all():
            resource.tags = {**resource.tags, "team": "nlp" if resource.name == "bert-ner-g6" else "chat"}
    return found


def _lines(capsys: pytest.CaptureFixture[str]) -> list[dict[str, object]]:
    return [json.loads(line) for line in capsys.readouterr().out.splitlines() if line.strip()]


def test_findings_by_team_in_json_lines(stored: dict[str, Finding], capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["findings", "--json"]) == 0
    every = _lines(capsys)
    assert main(["findings", "--json", "--team", "nlp"]) == 0
    nlp = _lines(capsys)
    assert main(["findings", "--json", "--team", "nobody"]) == 0
    assert _lines(capsys) == []
    assert [d["resource_name"] for d in nlp] == ["bert-ner-g6"]
    assert len(every) > len(nlp)


def test_the_table_shows_the_top_rows_and_how_many_more_and_the_cursor_resumes(
    stored: dict[str, Finding], capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COLUMNS", "200")
    assert main(["findings", "--json"]) == 0
    every = [str(d["finding_id"]) for d in _lines(capsys)]
    assert len(every) >= 3
    assert main(["findings", "--limit", "1"]) == 0
    table = capsys.readouterr().out
    assert f"top 1 of {len(every)} open findings" in table
    assert f"and {len(every) - 1:,} more findings" in table
    cursor = table.split("--cursor ")[1].split()[0].rstrip(";")
    assert main(["findings", "--json", "--cursor", cursor]) == 0  # the next pages, in the list's order
    rest = [str(d["finding_id"]) for d in _lines(capsys)]
    assert cursor == every[0] and rest == every[1:]
    assert main(["findings", "--json", "--limit", "2"]) == 0
    assert len(_lines(capsys)) == 2


def test_store_reads_import_no_aws_sdk_and_no_remediation(stored: dict[str, Finding]) -> None:
    for argv in (["findings"], ["resources", "--limit", "1"], ["findings", "realised"]):
        loaded = _loaded_after(argv)
        assert "sqlalchemy" in loaded, argv  # the store was read
        assert not [m for m in loaded if m.split(".")[0] in ("boto3", "botocore")], (argv, loaded)
        assert not [m for m in loaded if m.startswith("chipwise.remediate")], (argv, loaded)


def test_a_cut_list_sums_the_findings_per_team_in_sql(
    stored: dict[str, Finding], capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COLUMNS", "200")
    assert main(["findings", "--json"]) == 0
    every = _lines(capsys)
    chat = [d for d in every if d["resource_name"] != "bert-ner-g6"]
    assert main(["findings", "--limit", "1"]) == 0
    table = capsys.readouterr().out
    line = next(x for x in table.splitlines() if x.startswith("by team"))
    assert f"chat {len(chat):,} · " in line and "nlp 1 · " in line


def test_notify_dry_run_for_one_team(
    stored: dict[str, Finding], monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("CHIPWISE_EMAIL_RECIPIENTS", "finops@example.com")
    assert main(["notify", "--dry-run", "--team", "nlp", "--json"]) == 0
    planned = json.loads(capsys.readouterr().out)["planned"]
    assert [(p["kind"], p["dedupe_key"].split(":")[2]) for p in planned if p["kind"] != "alert"] == [
        ("team_digest", "nlp")
    ]
    # a real run sends every team's digest together: --team only previews, and not with --account
    assert main(["notify", "--team", "nlp"]) != 0
    assert "--dry-run" in capsys.readouterr().err
    assert main(["notify", "--dry-run", "--team", "nlp", "--account", "123456789012"]) != 0
