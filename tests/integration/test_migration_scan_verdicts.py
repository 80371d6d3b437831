"""Migration 0010: ``scan_verdicts`` backfilled from the stored documents, for the latest finished scan of each
account and region only (SQLite, and PostgreSQL when CHIPWISE_TEST_DATABASE_URL is set)."""

from __future__ import annotations

import json
from datetime import UTC, datetime

from alembic import command
from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext
from sqlalchemy import create_engine, inspect, text

from chipwise.store.session import alembic_config, upgrade
from chipwise.store.tables import all_tables

ACCOUNT = "123456789012"
ENDPOINT = "arn:aws:sagemaker:us-east-1:123456789012:endpoint/ab-test"
INSTANCE = "arn:aws:ec2:us-east-1:123456789012:instance/i-0abc"
NOW = datetime(2026, 11, 20, tzinfo=UTC)


def _document(verdicts: list[tuple[str, str]], teams: dict[str, str]) -> str:
    """A stored document's JSON as a scan wrote it (only the parts the migration reads matter)."""
    return json.dumps(
        {
            "scan_id": "s",
            "resources": [{"id": key, "team": team} for key, team in teams.items()],
            "verdicts": [{"resource_id": key, "verdict": verdict, "reason": "r"} for key, verdict in verdicts],
        }
    )


def _seed(url: str) -> None:
    """Scans as the revision before stored them: two finished scans of us-east-1 (the older one must not be
    backfilled), a failed one after them, a finished one of eu-west-1 without verdicts, a running one."""
    scans = [
        ("old", "us-east-1", "succeeded", 1, _document([(INSTANCE, "efficient")], {})),
        (
            "new",
            "us-east-1",
            "partial",
            2,
            _document([(INSTANCE, "waste"), (f"{ENDPOINT}#variant/canary", "efficient")], {INSTANCE: "nlp"}),
        ),
        ("failed", "us-east-1", "failed", 3, _document([(INSTANCE, "efficient")], {})),
        ("empty", "eu-west-1", "succeeded", 2, _document([], {})),
        ("running", "eu-west-1", "running", 3, None),
    ]
    engine = create_engine(url)
    with engine.begin() as conn:
        conn.execute(
            text("INSERT INTO accounts (account_id, created_at) VALUES (:a, :now)"), {"a": ACCOUNT, "now": NOW}
        )
        for scan_id, region, status, day, document in scans:
            conn.execute(
                text(
                    "INSERT INTO scans (id, account_id, region, status, started_at, window_start, window_end, "
                    "resource_count, api_calls, timings, errors, document) VALUES (:id, :a, :region, :status, :at, "
                    ":start, :end, 0, '{}', '{}', '[]', :document)"
                ),
                {
                    "id": scan_id,
                    "a": ACCOUNT,
                    "region": region,
                    "status": status,
                    "at": NOW.replace(day=day),
                    "start": NOW.date(),
                    "end": NOW.replace(day=20 + day).date(),
                    "document": document,
                },
            )
    engine.dispose()


def test_the_latest_finished_scans_verdicts_are_backfilled_and_the_downgrade_drops_them(empty_url: str) -> None:
    upgrade(empty_url, "0009")
    _seed(empty_url)

    upgrade(empty_url)

    engine = create_engine(empty_url)
    with engine.connect() as conn:
        stored = conn.execute(
            text(
                "SELECT scan_id, position, resource_id, resource_arn, resource_variant, team, verdict "
                "FROM scan_verdicts ORDER BY scan_id, position"
            )
        )
        assert [tuple(row) for row in stored] == [
            ("new", 0, INSTANCE, INSTANCE, "", "nlp", "waste"),
            ("new", 1, f"{ENDPOINT}#variant/canary", ENDPOINT, "canary", None, "efficient"),
        ]
        assert compare_metadata(MigrationContext.configure(conn), all_tables()) == []
    engine.dispose()

    command.downgrade(alembic_config(empty_url), "0009")

    engine = create_engine(empty_url)
    assert "scan_verdicts" not in inspect(engine).get_table_names()
    with engine.connect() as conn:  # the scans and their documents stay
        assert conn.execute(text("SELECT count(*) FROM scans WHERE document IS NOT NULL")).scalar_one() == 4
    engine.dispose()
