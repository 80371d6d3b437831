"""`chipwise notify` for real against the emulator: sends, then `status` shows it, and a second run sends nothing."""

from __future__ import annotations

import json
from datetime import timedelta
from typing import Any

import pytest
from notify_factories import baseline_sent, estate
from sqlalchemy.orm import Session, sessionmaker

from chipwise.aws import aws_context
from chipwise.cli import main
from chipwise.clock import utcnow


def test_notify_sends_then_status_and_a_second_run_sends_nothing(
    aws: Any,
    use_db: str,
    session_factory: sessionmaker[Session],
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    # Given findings, a recipient and a verified sender (no Slack configured)
    monkeypatch.setenv("CHIPWISE_EMAIL_RECIPIENTS", "finops@example.com")
    aws_context("us-east-1").client("sesv2").create_email_identity(EmailIdentity="chipwise@example.com")
    with session_factory.begin() as session:
        estate(session, now=utcnow())
        baseline_sent(session, utcnow() - timedelta(days=1))  # not the account's first digest
    # When `chipwise notify --json` runs
    assert main(["notify", "--json"]) == 0
    first = json.loads(capsys.readouterr().out)  # logs go to stderr: stdout is the document only
    # Then the emails went out through SES
    assert (first["sent"], first["failed"]) == (5, 0)
    assert len(aws.sent_emails()) == 5
    # ...`status` counts them as sent
    assert main(["notify", "status", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["counts"] == [
        {"channel": "email", "status": "sent", "messages": 6}
    ]  # and the baseline
    # ...and running again sends nothing
    assert main(["notify"]) == 0
    assert "sent 0, retrying later 0, failed 0" in capsys.readouterr().out
    assert len(aws.sent_emails()) == 5
