"""The notify Lambda on its sample events (events/notify/*.json): schedule, ScanCompleted, a malformed event."""

from __future__ import annotations

import importlib.util
import json
from collections.abc import Callable, Iterator
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from notify_factories import baseline_sent, estate
from sqlalchemy.orm import Session, sessionmaker

from chipwise.aws import aws_context
from chipwise.clock import utcnow
from chipwise.settings import get_settings
from chipwise_devkit.fakes.webhook_sink import WebhookSink

ROOT = Path(__file__).resolve().parents[3]
Handler = Callable[[dict[str, Any], Any], dict[str, Any]]


def _event(name: str) -> dict[str, Any]:
    event: dict[str, Any] = json.loads((ROOT / "events" / "notify" / f"{name}.json").read_text())
    return event


@pytest.fixture(scope="module")
def handler() -> Handler:
    spec = importlib.util.spec_from_file_location("notify_function_app", ROOT / "functions" / "notify" / "app.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    function: Handler = module.handler
    return function


@pytest.fixture
def configured(aws: Any, use_db: str, monkeypatch: pytest.MonkeyPatch) -> Iterator[WebhookSink]:
    """The deployed configuration: a verified sender, recipients, the webhook URL in Secrets Manager."""
    with WebhookSink() as sink:
        ctx = aws_context("us-east-1")
        ctx.client("sesv2").create_email_identity(EmailIdentity="chipwise@example.com")
        ctx.client("secretsmanager").create_secret(Name="chipwise/slack", SecretString=sink.url)
        monkeypatch.setenv("CHIPWISE_EMAIL_SENDER", "chipwise@example.com")
        monkeypatch.setenv("CHIPWISE_EMAIL_RECIPIENTS", "finops@example.com")
        monkeypatch.setenv("CHIPWISE_SLACK_WEBHOOK_SECRET_NAME", "chipwise/slack")
        get_settings.cache_clear()
        yield sink


def test_the_daily_schedule_sends_digests_and_alerts(
    handler: Handler,
    configured: WebhookSink,
    aws: Any,
    session_factory: sessionmaker[Session],
    lambda_context: Any,
) -> None:
    # Given findings in the store
    with session_factory.begin() as session:
        estate(session, now=utcnow())
        baseline_sent(session, utcnow() - timedelta(days=1))  # not the account's first digest
    # When the schedule event arrives, twice (EventBridge delivers at least once)
    first = handler(_event("daily_schedule"), lambda_context)
    second = handler(_event("daily_schedule"), lambda_context)
    # Then the first run sent the digest and alerts by email and Slack, the second nothing
    assert (first["status"], first["trigger"], first["sent"], first["failed"]) == ("ok", "schedule", 7, 0)
    assert (second["sent"], second["enqueued"]) == (0, 0)
    assert len(aws.sent_emails()) == 5
    assert len(configured.received) == 2 and configured.rejected == []


def test_scan_completed_sends_the_alerts_of_that_scan(
    handler: Handler,
    configured: WebhookSink,
    aws: Any,
    session_factory: sessionmaker[Session],
    lambda_context: Any,
) -> None:
    # Given the estate, and a ScanCompleted naming the big new finding
    with session_factory.begin() as session:
        findings = estate(session, now=utcnow())
        baseline_sent(session, utcnow() - timedelta(days=1))  # not the account's first digest
    event = _event("scan_completed")
    event["detail"]["new_finding_ids"] = [findings["big_new"].id]
    # When the event arrives
    result = handler(event, lambda_context)
    # Then the alert went to the recipient, the owner and Slack; no digest
    assert (result["status"], result["trigger"], result["account_id"], result["sent"]) == (
        "ok",
        "scan_completed",
        "123456789012",
        3,
    )
    subjects = {m["subject"] for m in aws.sent_emails()}
    assert subjects == {"Chipwise alert: $2,401 a month on chat-mistral-g5"}
    assert [b["blocks"][0]["text"]["text"] for b in configured.received] == ["Chipwise alert · $2,401 a month"]


def test_a_malformed_event_is_rejected_with_its_reason(
    handler: Handler, configured: WebhookSink, aws: Any, lambda_context: Any
) -> None:
    result = handler(_event("scan_completed_malformed"), lambda_context)
    assert result["status"] == "rejected"
    assert "detail.account_id: missing" in result["reason"]  # where and what, never the values
    assert aws.sent_emails() == [] and configured.received == []


def _outbox_kinds(session_factory: sessionmaker[Session]) -> list[str]:
    from sqlalchemy import select

    from chipwise.store.tables import OutboxMessage

    with session_factory() as session:
        return sorted(session.scalars(select(OutboxMessage.kind)))


def test_a_replayed_first_scan_completed_sends_no_alert(
    handler: Handler,
    configured: WebhookSink,
    aws: Any,
    session_factory: sessionmaker[Session],
    lambda_context: Any,
) -> None:
    # Given an account's first scan (no digest ever) and its ScanCompleted naming every finding as new
    with session_factory.begin() as session:
        findings = estate(session, now=utcnow())
    event = _event("scan_completed")
    event["detail"]["new_finding_ids"] = [f.id for f in findings.values()]
    # When the event arrives, then is replayed twice (EventBridge delivers at least once)
    first = handler(event, lambda_context)
    replays = [handler(event, lambda_context) for _ in range(2)]
    # Then the first run sent the quiet baseline (digests, no alert), and the replays nothing new: 0 alerts
    assert first["replay"] is False and first["sent"] > 0
    assert all(r["replay"] is True and (r["planned"], r["enqueued"], r["sent"]) == (0, 0, 0) for r in replays)
    kinds = _outbox_kinds(session_factory)
    assert "alert" not in kinds and set(kinds) == {"digest"}
    assert all("alert" not in m["subject"].lower() for m in aws.sent_emails())


def test_a_scan_already_notified_sends_nothing_new_when_replayed_later(
    handler: Handler,
    configured: WebhookSink,
    aws: Any,
    session_factory: sessionmaker[Session],
    lambda_context: Any,
) -> None:
    # Given an account past its baseline and a scan whose event named the big finding: alerted once
    with session_factory.begin() as session:
        findings = estate(session, now=utcnow())
        baseline_sent(session, utcnow() - timedelta(days=1))
    event = _event("scan_completed")
    event["detail"]["new_finding_ids"] = [findings["big_new"].id]
    assert handler(event, lambda_context)["sent"] == 3
    # When the same scan's event comes back naming more findings (a replay never adds to a decided scan)
    event["detail"]["new_finding_ids"] = [findings["big_new"].id, findings["small_new"].id]
    replay = handler(event, lambda_context)
    # Then nothing new is planned or sent
    assert replay["replay"] is True and (replay["planned"], replay["sent"]) == (0, 0)
    assert _outbox_kinds(session_factory).count("alert") == 3  # the big finding: recipient, owner, Slack
