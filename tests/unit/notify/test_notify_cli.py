"""`chipwise notify --dry-run`, `chipwise notify status|retry` and `chipwise drafts ACCOUNT` on a test store."""

from __future__ import annotations

import json
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from notify_factories import RecordingSender, add_costs, baseline_sent, estate
from sqlalchemy import func, select
from sqlalchemy.orm import Session, sessionmaker

from chipwise.cli import main
from chipwise.clock import utcnow
from chipwise.notify.outbox import SendError, drain, enqueue
from chipwise.store.tables import OutboxMessage


def _json(capsys: pytest.CaptureFixture[str]) -> dict[str, Any]:
    document: dict[str, Any] = json.loads(capsys.readouterr().out)
    return document


def test_dry_run_prints_what_would_be_sent_and_writes_nothing(
    use_db: str,
    session_factory: sessionmaker[Session],
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Given findings and a recipient
    monkeypatch.setenv("CHIPWISE_EMAIL_RECIPIENTS", "finops@example.com")
    with session_factory.begin() as session:
        estate(session, now=utcnow())
        baseline_sent(session, utcnow() - timedelta(days=1))  # the account's baseline went out yesterday
    # When `chipwise notify --dry-run --json` runs
    assert main(["notify", "--dry-run", "--json"]) == 0
    document = _json(capsys)
    # Then it lists the digest and alert emails and sends or stores nothing
    planned = {(p["kind"], p["recipient"]) for p in document["planned"]}
    assert ("digest", "finops@example.com") in planned and ("alert", "finops@example.com") in planned
    assert document["dry_run"] is True and document["sent"] == 0
    with session_factory() as session:
        assert session.scalar(select(func.count()).select_from(OutboxMessage)) == 1  # the baseline only
    # ...and the human form says so
    assert main(["notify", "--dry-run"]) == 0
    out = capsys.readouterr().out
    assert "Would send" in out and "dry run: nothing was written or sent" in out


def test_status_shows_failed_messages_and_retry_requeues_them(
    use_db: str, session_factory: sessionmaker[Session], capsys: pytest.CaptureFixture[str]
) -> None:
    # Given one sent and one failed message
    now = utcnow()
    with session_factory.begin() as session:
        for key in ("ok", "bad"):
            enqueue(
                session,
                channel="email",
                kind="digest",
                recipient=f"{key}@example.com",
                dedupe_key=key,
                subject=key,
                payload={"html": "<p>x</p>", "text": "x"},
                now=now - timedelta(minutes=1),
            )
    drain(session_factory, now=now, senders={"email": RecordingSender()}, ids=[1])
    drain(session_factory, now=now, senders={"email": RecordingSender(SendError("SES Nope", permanent=True))})
    # When `chipwise notify status --json` runs
    assert main(["notify", "status", "--json"]) == 0
    document = _json(capsys)
    # Then the counts and the failed message with its last error are shown
    assert document["counts"] == [
        {"channel": "email", "status": "failed", "messages": 1},
        {"channel": "email", "status": "sent", "messages": 1},
    ]
    assert [(m["recipient"], m["last_error"]) for m in document["failed"]] == [("bad@example.com", "SES Nope")]
    assert main(["notify", "status"]) == 0
    assert "SES Nope" in capsys.readouterr().out
    # ...and `retry` gives it a fresh set of attempts
    assert main(["notify", "retry"]) == 0
    assert "1 failed message queued again" in capsys.readouterr().out
    with session_factory() as session:
        assert session.scalars(select(OutboxMessage.status).order_by(OutboxMessage.id)).all() == ["sent", "pending"]


def test_drafts_command_writes_the_files(
    use_db: str,
    session_factory: sessionmaker[Session],
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
) -> None:
    # Given an account with costs and findings
    with session_factory.begin() as session:
        estate(session)
        add_costs(session, "ml.g5.2xlarge", "300.00", days=14, last_day=utcnow().date())
    # When `chipwise drafts` runs
    out_dir = tmp_path / "drafts"
    assert main(["drafts", "123456789012", "--output", str(out_dir), "--funded", "--org-id", "ORG-1"]) == 0
    printed = capsys.readouterr().out
    # Then the files are there with the account's figures, and the review is queued
    assert sorted(p.name for p in out_dir.iterdir()) == [
        "ace-create-opportunity.json",
        "credits-application.json",
        "credits-application.md",
        "partner-referral-email.txt",
    ]
    assert "$9,125 a month" in (out_dir / "credits-application.md").read_text()
    ace = json.loads((out_dir / "ace-create-opportunity.json").read_text())
    assert ace["Customer"]["Account"]["AwsAccountId"] == "123456789012"
    assert "queued for review to advisory@example.com" in printed and "Nothing was submitted" in printed
    # ...and the JSON form lists the stored drafts; unchanged drafts are not queued again
    assert main(["drafts", "123456789012", "--output", str(out_dir), "--funded", "--org-id", "ORG-1", "--json"]) == 0
    document = _json(capsys)
    assert [d["document"]["kind"] for d in document["drafts"]] == ["credits_application", "partner_referral"]
    assert document["review_queued"] is False


def test_drafts_refuses_bad_input_in_one_line(use_db: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["drafts", "12345"]) == 1
    assert "not a 12-digit AWS account id" in capsys.readouterr().err
    assert main(["drafts", "123456789012", "--stage", "unicorn"]) == 1
    assert "unknown stage 'unicorn'" in capsys.readouterr().err
    assert main(["drafts", "123456789012"]) == 1
    assert "scan it first" in capsys.readouterr().err
