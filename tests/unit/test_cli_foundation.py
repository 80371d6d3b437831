"""The command line's foundation: one clear line and a non-zero exit for every kind of bad start."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from alembic.script import ScriptDirectory

from chipwise.cli import main
from chipwise.store.session import alembic_config


def test_help_lists_the_commands(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--help"]) == 0
    out = capsys.readouterr().out
    for command in ("demo", "db"):
        assert command in out


def test_an_unknown_command_exits_2(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["no-such-command"]) == 2
    assert "No such command" in capsys.readouterr().err


def test_demo_without_the_development_kit_is_one_line() -> None:
    # Given an interpreter where no installed package adds `chipwise.cli` commands (no development kit)
    code = (
        "import sys; import chipwise.cli as cli; cli.plugin_entries = lambda group=cli.PLUGIN_GROUP: {}; "
        "from chipwise.cli import main; code = main(['demo']); "
        "print(sorted({n.split('.')[0] for n in sys.modules} & {'chipwise_devkit', 'moto'})); sys.exit(code)"
    )
    # When `chipwise demo` runs
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False, timeout=120)
    # Then it fails with one line that says how to get the demo, and nothing of the kit was imported
    assert done.returncode == 1
    assert done.stderr.count("\n") == 1 and "Traceback" not in done.stderr
    assert "make demo" in done.stderr and "pip install -e devkit" in done.stderr
    assert done.stdout.strip() == "[]"


def test_a_bad_setting_is_one_line(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("CHIPWISE_LOOKBACK_DAYS", "-1")
    assert main(["db", "status"]) == 1
    err = capsys.readouterr().err
    assert "CHIPWISE_LOOKBACK_DAYS" in err
    assert "Traceback" not in err
    assert len(err.strip().splitlines()) <= 2


def test_an_unreachable_database_is_one_line(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("CHIPWISE_DATABASE_URL", "postgresql+psycopg://nobody@127.0.0.1:9/none")
    assert main(["db", "upgrade"]) == 1
    err = capsys.readouterr().err
    assert "cannot reach the database" in err and "CHIPWISE_DATABASE_URL" in err
    assert "Traceback" not in err


def test_db_upgrade_builds_the_schema_on_an_empty_sqlite_file(tmp_path: Path) -> None:
    # Given an empty SQLite file and the installed console script
    env = {**os.environ, "CHIPWISE_DATABASE_URL": f"sqlite:///{tmp_path / 'empty.db'}"}
    chipwise = Path(sys.executable).with_name("chipwise")
    # When `chipwise db upgrade` runs twice
    for _ in range(2):
        done = subprocess.run([chipwise, "db", "upgrade"], env=env, capture_output=True, text=True, check=False)
        assert done.returncode == 0, done.stderr
    # Then the schema is there, at the newest migration
    head = ScriptDirectory.from_config(alembic_config("sqlite://")).get_current_head()
    status = subprocess.run(
        [chipwise, "db", "status"], env={**env, "COLUMNS": "200"}, capture_output=True, text=True, check=True
    )
    assert head and "findings" in status.stdout and f"revision: {head}" in status.stdout


def test_db_upgrade_builds_the_schema_on_an_empty_database(
    db_url: str, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """On SQLite always, and on an empty PostgreSQL database when CHIPWISE_TEST_DATABASE_URL is set."""
    from sqlalchemy import create_engine, text
    from sqlalchemy.engine import make_url

    from chipwise.store.session import get_engine, table_names

    if db_url.startswith("sqlite"):
        empty = f"sqlite:///{tmp_path / 'fresh.db'}"
        drop = None
    else:  # a brand-new database next to the test database
        admin = create_engine(make_url(db_url).set(database="postgres"), isolation_level="AUTOCOMMIT")
        name = f"chipwise_empty_{os.getpid()}"
        with admin.connect() as conn:
            conn.execute(text(f'DROP DATABASE IF EXISTS "{name}"'))
            conn.execute(text(f'CREATE DATABASE "{name}"'))
        empty = make_url(db_url).set(database=name).render_as_string(hide_password=False)
        drop = (admin, name)
    try:
        # Given an empty database, When `chipwise db upgrade` runs
        monkeypatch.setenv("CHIPWISE_DATABASE_URL", empty)
        assert main(["db", "upgrade"]) == 0
        # Then every table is there
        assert {"accounts", "resources", "findings", "notification_outbox", "plans"} <= set(table_names(empty))
    finally:
        get_engine(empty).dispose()
        if drop is not None:
            admin, name = drop
            with admin.connect() as conn:
                conn.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
            admin.dispose()
