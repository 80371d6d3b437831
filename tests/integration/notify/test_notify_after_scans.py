"""End to end: scan the demo account and notify, twice over — nothing is sent twice."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import boto3
import pytest

from chipwise.act.notify.runner import run_notify
from chipwise.aws import aws_context
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
