"""Slack through a local webhook on 127.0.0.1: payload shape and limits, HTTP 429 Retry-After, the secret URL."""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import timedelta
from typing import Any

import pytest
from notify_factories import HOSTILE, NOW, add_finding, add_resource, baseline_sent, estate
from sqlalchemy.orm import Session, sessionmaker

from chipwise.aws import aws_context
from chipwise.errors import ConfigError
from chipwise.notify.outbox import SLACK_MAX_BLOCKS, SLACK_MAX_SECTION_TEXT, drain, enqueue
from chipwise.notify.slack import SlackWebhookSender, resolve_webhook_url, slack_sender
from chipwise.pipeline.notify import run_notify
from chipwise.settings import Settings
from chipwise.store.tables import OutboxMessage
from chipwise_devkit.fakes.webhook_sink import Reply, WebhookSink


@pytest.fixture
def sink() -> Iterator[WebhookSink]:
    with WebhookSink() as server:
        yield server


class Sleeps:
    """Records the waits the sender asks for instead of sleeping (keeps the test fast)."""

    def __init__(self) -> None:
        self.waits: list[float] = []

    def __call__(self, seconds: float) -> None:
        self.waits.append(seconds)


def _enqueue_slack(factory: sessionmaker[Session], key: str = "s1") -> int:
    with factory.begin() as session:
        row = enqueue(
            session,
            channel="slack",
            kind="alert",
            recipient="slack:test",
            dedupe_key=key,
            subject=None,
            payload={"text": "fallback", "blocks": [{"type": "section", "text": {"type": "mrkdwn", "text": "hi"}}]},
            now=NOW,
        )
        assert row is not None
        return row.id


def test_digest_and_alert_reach_the_webhook_within_limits(
    sink: WebhookSink, db_url: str, session_factory: sessionmaker[Session]
) -> None:
    # Given an account with 120 findings, some on resources named with Slack markup
    with session_factory.begin() as session:
        estate(session)
        baseline_sent(session, NOW - timedelta(days=1))  # not the account's first digest
        for i in range(120):
            name = f"{HOSTILE}-{i:03d}" if i % 3 == 0 else f"endpoint-{i:03d}"
            add_resource(session, name)
            add_finding(session, name, savings=str(50 + i), summary=HOSTILE * 20, first_seen=NOW - timedelta(hours=1))
    settings = Settings(database_url=db_url, email_recipients=[], slack_webhook_secret_name="chipwise/slack")
    sender = SlackWebhookSender(sink.url)
    # When notify runs with Slack only
    report = run_notify(settings, now=NOW, senders={"slack": sender}, session_factory=session_factory)
    # Then the webhook got the digest and the one alert, each a valid Block Kit message
    assert sink.rejected == []
    assert len(sink.received) == len(report.drained.sent) == 2
    kinds = sorted(body["blocks"][0]["text"]["text"].split(" ·")[0] for body in sink.received)
    assert kinds == ["Chipwise alert", "Chipwise digest"]
    for body in sink.received:
        assert set(body) == {"text", "blocks"} and body["text"]
        assert len(body["blocks"]) <= SLACK_MAX_BLOCKS
        for block in body["blocks"]:
            if block["type"] == "section":
                assert len(block["text"]["text"]) <= SLACK_MAX_SECTION_TEXT
        raw = json.dumps(body, ensure_ascii=False)
        assert "<!channel>" not in raw and "<script>" not in raw and "*bold*" not in raw
    digest = next(b for b in sink.received if b["blocks"][0]["text"]["text"].startswith("Chipwise digest"))
    assert "…and 113 more open findings" in json.dumps(digest, ensure_ascii=False)


def test_http_429_is_retried_after_retry_after(sink: WebhookSink, session_factory: sessionmaker[Session]) -> None:
    # Given a webhook that is rate limited once for 2 seconds
    message_id = _enqueue_slack(session_factory)
    sink.script(Reply(429, "rate_limited", {"Retry-After": "2"}))
    sleeps = Sleeps()
    # When the message is sent
    report = drain(session_factory, now=NOW, senders={"slack": SlackWebhookSender(sink.url, sleep=sleeps)})
    # Then the sender waited as told and the second post went through
    assert sleeps.waits == [2.0]
    assert sink.requests == 2 and len(sink.received) == 1
    assert report.sent == [message_id]


def test_a_long_retry_after_reschedules_the_message(sink: WebhookSink, session_factory: sessionmaker[Session]) -> None:
    # Given a webhook that asks to come back in ten minutes
    message_id = _enqueue_slack(session_factory)
    sink.script(Reply(429, "rate_limited", {"Retry-After": "600"}))
    sleeps = Sleeps()
    sender = SlackWebhookSender(sink.url, sleep=sleeps)
    # When drained
    report = drain(session_factory, now=NOW, senders={"slack": sender}, retry_seconds=60)
    # Then it did not block the drain: the row waits for the Retry-After, then goes out
    assert sleeps.waits == [] and report.retrying == [message_id]
    with session_factory() as session:
        row = session.get(OutboxMessage, message_id)
        assert row is not None
        assert row.next_attempt_at == NOW + timedelta(seconds=600)
        assert row.last_error == "Slack rate limit (HTTP 429, Retry-After 600s)"
    assert drain(session_factory, now=NOW + timedelta(minutes=5), senders={"slack": sender}).sent == []
    assert drain(session_factory, now=NOW + timedelta(minutes=10), senders={"slack": sender}).sent == [message_id]


def test_slack_refusals_fail_at_once_and_outages_are_retried(
    sink: WebhookSink, session_factory: sessionmaker[Session]
) -> None:
    # Given one message Slack refuses and one that meets an outage
    refused = _enqueue_slack(session_factory, "s1")
    outage = _enqueue_slack(session_factory, "s2")
    sink.script(Reply(404, "no_service"), Reply(503, "unavailable"))
    # When drained
    report = drain(session_factory, now=NOW, senders={"slack": SlackWebhookSender(sink.url)})
    # Then the refusal is failed with Slack's reason and the outage will be retried
    assert report.failed == [refused] and report.retrying == [outage]
    assert report.errors[refused] == "Slack HTTP 404: no_service"


def test_the_webhook_url_comes_from_secrets_manager_or_ssm(aws: Any, sink: WebhookSink) -> None:
    # Given the URL stored as a secret (JSON) and as an SSM SecureString
    ctx = aws_context("us-east-1")
    ctx.client("secretsmanager").create_secret(Name="chipwise/slack", SecretString=json.dumps({"url": sink.url}))
    ctx.client("ssm").put_parameter(Name="/chipwise/slack", Value=sink.url, Type="SecureString")
    settings = Settings(slack_webhook_secret_name="chipwise/slack")
    # When resolved / Then both give the URL
    assert resolve_webhook_url("chipwise/slack", settings) == sink.url
    assert resolve_webhook_url("/chipwise/slack", settings) == sink.url
    assert resolve_webhook_url("ssm:/chipwise/slack", settings) == sink.url
    # ...and a missing secret is a configuration error that does not leak anything
    with pytest.raises(ConfigError, match="cannot read the Slack webhook from 'missing'"):
        resolve_webhook_url("missing", settings)
    # ...and the production sender resolves it lazily and posts there
    sender = slack_sender(settings)
    assert sender is not None and slack_sender(Settings()) is None
    message = OutboxMessage(id=1, channel="slack", kind="alert", payload={"text": "hello", "blocks": []})
    sender.send(message)
    assert sink.received == [{"text": "hello", "blocks": []}]
