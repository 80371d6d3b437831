"""No secret in the logs at any level: a scan of a member account and a notify run, logged at DEBUG (every
library's logger too), never print the Slack webhook URL, the ExternalId or the recipients' addresses."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import boto3
import pytest
from notify_factories import baseline_sent

from chipwise.models.scan import ScanRequest
from chipwise.pipeline.notify import run_notify
from chipwise.pipeline.scan import scan_account_request
from chipwise.settings import get_settings
from chipwise.store.session import get_session_factory
from chipwise_devkit.demo.seed import seed_demo_account
from chipwise_devkit.fakes.webhook_sink import WebhookSink

NOW = datetime(2026, 11, 20, 6, tzinfo=UTC)
EXTERNAL_ID = "SENTINEL-EXTERNAL-ID-7f3a"
RECIPIENT = "sentinel-finops@example.com"


@pytest.fixture
def sink() -> Iterator[WebhookSink]:
    with WebhookSink() as server:
        yield server


def test_a_scan_and_notify_at_debug_log_no_secret(
    aws: Any,
    use_db: str,
    sink: WebhookSink,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
    capsys: pytest.CaptureFixture[str],
) -> None:
    # Given the demo account scanned through a member role with an ExternalId, Slack and email configured
    seed_demo_account(aws, now=NOW)
    boto3.client("sesv2").create_email_identity(EmailIdentity="chipwise@example.com")
    boto3.client("secretsmanager").create_secret(Name="chipwise/slack", SecretString=sink.url)
    for key, value in {
        "CHIPWISE_EXTERNAL_ID": EXTERNAL_ID,
        "CHIPWISE_EMAIL_SENDER": "chipwise@example.com",
        "CHIPWISE_EMAIL_RECIPIENTS": RECIPIENT,
        "CHIPWISE_SLACK_WEBHOOK_SECRET_NAME": "chipwise/slack",
        "POWERTOOLS_LOG_LEVEL": "DEBUG",
    }.items():
        monkeypatch.setenv(key, value)
    get_settings.cache_clear()
    caplog.set_level(logging.DEBUG)  # the root at DEBUG: every logger without its own level logs everything
    caplog.set_level(logging.DEBUG, logger="chipwise")
    # When the member account is scanned and the notify run sends
    account = "123456789012"
    request = ScanRequest(
        account_id=account, region="us-east-1", role_arn=f"arn:aws:iam::{account}:role/ChipwiseReadOnly"
    )
    scan_account_request(request)
    with get_session_factory(use_db).begin() as session:  # not the account's first digest: alerts go out too
        baseline_sent(session, datetime.now(UTC) - timedelta(days=1), account_id=account)
    report = run_notify(get_settings(), now=datetime.now(UTC) + timedelta(minutes=5))
    assert report.drained.sent and sink.received  # something really went out by email and Slack
    # Then no log record at any level, nor anything printed, carries a secret
    printed = capsys.readouterr()
    text = "\n".join(r.getMessage() + " " + str(r.__dict__) for r in caplog.records) + printed.out + printed.err
    assert len(caplog.records) > 10 and logging.getLogger("chipwise").getEffectiveLevel() == logging.DEBUG
    for secret in (sink.url, sink.url.split("//", 1)[1], EXTERNAL_ID, RECIPIENT):
        assert secret not in text, secret


def test_owner_tags_route_mail_only_to_allowed_domains() -> None:
    # Given recipients at example.com: an owner there is allowed, an owner elsewhere is not
    from chipwise.notify.runner import owner_allowed
    from chipwise.settings import Settings

    settings = Settings(email_recipients=["finops@example.com"], advisory_email="advisory@example.com")
    assert owner_allowed("ml-team@example.com", settings)
    assert not owner_allowed("attacker@evil.example", settings)
    # and an explicit allow-list replaces the default
    listed = Settings(email_recipients=["finops@example.com"], owner_email_domains=["corp.example"])
    assert owner_allowed("a@corp.example", listed) and not owner_allowed("b@example.com", listed)
