"""End to end: scan the demo account and notify, twice over — nothing is sent twice."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import boto3
import pytest

from chipwise.aws import aws_context
from chipwise.pipeline.notify import run_notify
from chipwise.pipeline.scan import run_scan
from chipwise.settings import get_settings
from chipwise.store.session import get_session_factory
from chipwise_devkit.demo.seed import seed_demo_account

NOW = datetime(2026, 11, 20, 6, tzinfo=UTC)


def test_scan_and_notify_twice_sends_nothing_twice(aws: Any, use_db: str, monkeypatch: pytest.MonkeyPatch) -> None:
    # Given the demo account, a verified sender and digest recipients
    seed_demo_account(aws, now=NOW)
    boto3.client("sesv2").create_email_identity(EmailIdentity="chipwise@example.com")
    monkeypatch.setenv("CHIPWISE_EMAIL_RECIPIENTS", "finops@example.com")
    get_settings.cache_clear()
    factory = get_session_factory(use_db)
    sent_per_run = []
    for run in range(2):
        # When the daily scan and the notify run happen (the second time an hour later)
        at = NOW + timedelta(hours=run)
        run_scan(aws_context("us-east-1"), factory, region="us-east-1", now=at)
        report = run_notify(get_settings(), now=at + timedelta(minutes=5))
        sent_per_run.append(len(report.drained.sent))
    # Then the first run sent the digest and the alerts, and the second sent nothing new
    assert sent_per_run[0] > 0
    assert sent_per_run[1] == 0
    subjects = [m["subject"] for m in aws.sent_emails()]
    assert len(subjects) == sent_per_run[0]
    assert len(set(zip(subjects, [str(m["destinations"]) for m in aws.sent_emails()], strict=True))) == len(subjects)


def test_the_first_scan_of_an_account_sends_one_baseline_digest_per_channel(
    aws: Any, use_db: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    from chipwise.notify.email import ses_sender
    from chipwise.notify.slack import SlackWebhookSender
    from chipwise_devkit.fakes.webhook_sink import WebhookSink

    # Given the demo account's first scan, email recipients and a Slack webhook
    seed_demo_account(aws, now=NOW)
    boto3.client("sesv2").create_email_identity(EmailIdentity="chipwise@example.com")
    monkeypatch.setenv("CHIPWISE_EMAIL_RECIPIENTS", "finops@example.com")
    monkeypatch.setenv("CHIPWISE_EMAIL_SENDER", "chipwise@example.com")
    get_settings.cache_clear()
    factory = get_session_factory(use_db)
    document = run_scan(aws_context("us-east-1"), factory, region="us-east-1", now=NOW)
    assert len(document.findings) > 5
    with WebhookSink() as sink:
        senders: dict[str, Any] = {"email": ses_sender(get_settings()), "slack": SlackWebhookSender(sink.url)}
        # When notify runs after it
        report = run_notify(get_settings(), now=NOW + timedelta(minutes=5), senders=senders, session_factory=factory)
        slack = list(sink.received)
    # Then one digest by email, one on Slack, no alert, although many findings are above the alert threshold
    assert sorted((p.kind, p.channel) for p in report.planned) == [("digest", "email"), ("digest", "slack")]
    assert len(aws.sent_emails()) == 1 and len(slack) == 1
    email = next(p for p in report.planned if p.channel == "email")
    assert "This is the baseline" in email.payload["text"] and "baseline; no alerts were sent" in str(slack[0])
    # ...and the Slack digest has a console button on each top finding
    buttons = [b["accessory"] for b in slack[0]["blocks"] if "accessory" in b]
    assert buttons and all(b["url"].startswith("https://") and "console.aws.amazon.com/" in b["url"] for b in buttons)
