"""Who gets what: digests to recipients, owners and Slack, alerts above the threshold, nothing twice."""

from __future__ import annotations

from datetime import timedelta
from decimal import Decimal
from typing import Any

import pytest
from notify_factories import NOW, RecordingSender, add_finding, add_resource, baseline_sent, estate
from sqlalchemy import select
from sqlalchemy.orm import Session, sessionmaker

from chipwise.edges import parse_event
from chipwise.errors import InvalidInput
from chipwise.models.events import NotifyTrigger
from chipwise.notify.outbox import enqueue
from chipwise.notify.runner import dedupe_key, plan_notifications
from chipwise.pipeline.notify import run_notify
from chipwise.settings import Settings
from chipwise.store.tables import OutboxMessage


def _settings(db_url: str, **overrides: Any) -> Settings:
    values: dict[str, Any] = {
        "database_url": db_url,
        "email_recipients": ["finops@example.com"],
        "slack_webhook_secret_name": "chipwise/slack",
        "alert_threshold_usd": Decimal("500"),
    }
    values.update(overrides)
    return Settings(**values)


def _senders() -> dict[str, RecordingSender]:
    return {"email": RecordingSender(), "slack": RecordingSender()}


def _messages(factory: sessionmaker[Session]) -> list[OutboxMessage]:
    with factory() as session:
        return list(session.scalars(select(OutboxMessage).order_by(OutboxMessage.id)))


def test_a_later_run_sends_digests_and_alerts_to_the_right_people(
    db_url: str, session_factory: sessionmaker[Session]
) -> None:
    # Given the estate: a new $2,400 finding owned by support-ai, a new $310 one owned by nlp, older ones
    with session_factory.begin() as session:
        estate(session)
        baseline_sent(session, NOW - timedelta(days=1))  # not the account's first digest
    senders = _senders()
    # When notify runs
    report = run_notify(_settings(db_url), now=NOW, senders=senders, session_factory=session_factory)
    # Then the big new finding is alerted to the recipient, its owner and Slack; the digest goes to the
    # recipient and Slack (whole account) and to each owner (their part)
    sent = {
        (m.kind, m.channel, m.recipient) for m in _messages(session_factory) if m.recipient != "earlier@example.com"
    }
    assert sent == {
        ("alert", "email", "finops@example.com"),
        ("alert", "email", "support-ai@example.com"),
        ("alert", "slack", "slack:chipwise/slack"),
        ("digest", "email", "finops@example.com"),
        ("digest", "slack", "slack:chipwise/slack"),
        ("digest", "email", "support-ai@example.com"),
        ("digest", "email", "nlp@example.com"),
    }
    assert len(report.drained.sent) == 7 and report.enqueued == 7
    assert len(senders["email"].sent) == 5 and len(senders["slack"].sent) == 2
    # ...and the owner's digest holds only their findings
    owner = next(p for p in report.planned if p.kind == "digest" and p.recipient == "nlp@example.com")
    assert "bert-ner-g6" in owner.payload["text"] and "chat-mistral-g5" not in owner.payload["text"]
    assert owner.payload["to"] == ["nlp@example.com"]


def test_running_twice_sends_nothing_twice(db_url: str, session_factory: sessionmaker[Session]) -> None:
    # Given a first run that sent everything
    with session_factory.begin() as session:
        estate(session)
        baseline_sent(session, NOW - timedelta(days=1))  # not the account's first digest
    settings = _settings(db_url)
    first = run_notify(settings, now=NOW, senders=_senders(), session_factory=session_factory)
    # When notify runs again the same day (a retry, a second schedule, the CLI)
    senders = _senders()
    second = run_notify(settings, now=NOW + timedelta(hours=2), senders=senders, session_factory=session_factory)
    # Then nothing is planned or sent again
    assert len(first.drained.sent) == 7
    assert second.planned == [] and second.drained.sent == []
    assert senders["email"].sent == [] and senders["slack"].sent == []


def test_the_next_digest_reports_what_changed_since_the_last(
    db_url: str, session_factory: sessionmaker[Session]
) -> None:
    # Given yesterday's digest, then a new finding and a resolved one
    with session_factory.begin() as session:
        findings = estate(session)
        baseline_sent(session, NOW - timedelta(days=1))  # not the account's first digest
    settings = _settings(db_url, slack_webhook_secret_name=None)
    run_notify(settings, now=NOW, senders={"email": RecordingSender()}, session_factory=session_factory)
    tomorrow = NOW + timedelta(days=1)
    with session_factory.begin() as session:
        add_finding(session, "fresh-one", savings="120", first_seen=NOW + timedelta(hours=6), action="rightsize")
        resolved = session.get(type(findings["old"]), findings["old"].id)
        assert resolved is not None
        resolved.status, resolved.resolved_at = "resolved", NOW + timedelta(hours=8)
    # When tomorrow's digest is made
    report = run_notify(settings, now=tomorrow, senders={"email": RecordingSender()}, session_factory=session_factory)
    # Then it lists only what happened since yesterday's digest
    digest = next(p for p in report.planned if p.recipient == "finops@example.com")
    text = digest.payload["text"]
    assert "1 new ($120/mo), 1 resolved, 0 benchmarked" in text
    assert "+ new: fresh-one" in text and "- resolved: search-idle-inf2" in text
    assert "+ new: chat-mistral-g5" not in text
    assert digest.dedupe_key == dedupe_key("digest", "123456789012", "2026-11-23", "email", "finops@example.com")
    # ...and no alert: $120 is under the threshold
    assert not [p for p in report.planned if p.kind == "alert"]


def test_dry_run_writes_nothing(db_url: str, session_factory: sessionmaker[Session]) -> None:
    # Given the estate and a message already waiting in the outbox
    with session_factory.begin() as session:
        estate(session)
        baseline_sent(session, NOW - timedelta(days=1))  # not the account's first digest
        waiting = enqueue(
            session,
            channel="email",
            kind="plan",
            recipient="founder@example.com",
            dedupe_key="plan:1",
            subject="Your plan",
            payload={"html": "<p>plan</p>", "text": "plan"},
            now=NOW,
        )
        assert waiting is not None
    senders = _senders()
    # When run as a dry run
    report = run_notify(_settings(db_url), now=NOW, dry_run=True, senders=senders, session_factory=session_factory)
    # Then it says what it would send (new and waiting) and sends and stores nothing
    assert len(report.planned) == 7 and report.enqueued == 0
    assert [(m.id, m.subject) for m in report.due] == [(waiting.id, "Your plan")]
    assert [m.status for m in _messages(session_factory) if m.kind != "digest"] == ["pending"]
    assert senders["email"].sent == []


def test_scan_completed_alerts_only_that_account(db_url: str, session_factory: sessionmaker[Session]) -> None:
    # Given the estate and an old $554.80 finding the scan reports as new
    with session_factory.begin() as session:
        findings = estate(session)
        baseline_sent(session, NOW - timedelta(days=1))  # not the account's first digest
        planned = plan_notifications(
            session,
            now=NOW,
            settings=_settings(db_url),
            slack_enabled=False,
            digests=False,
            new_finding_ids=[findings["old"].id],
        )
    # Then the alerts cover the new big finding and the one the scan named, and no digest
    assert {(p.kind, p.recipient) for p in planned} == {
        ("alert", "finops@example.com"),
        ("alert", "support-ai@example.com"),
    }
    assert sorted(p.subject or "" for p in planned if p.recipient == "finops@example.com") == [
        "Chipwise alert: $2,401 a month on chat-mistral-g5",
        "Chipwise alert: $555 a month on search-idle-inf2",
    ]


@pytest.mark.parametrize(
    "event",
    [
        {"source": "aws.s3", "detail-type": "Object Created", "detail": {}},
        {"source": "chipwise", "detail-type": "ScanCompleted", "detail": {"scan_id": "x"}},
        {},
    ],
)
def test_unexpected_events_are_rejected_with_a_reason(event: dict[str, Any]) -> None:
    with pytest.raises(InvalidInput, match=r"^not a ScanCompleted nor a scheduled event: "):
        parse_event(event, NotifyTrigger, "a ScanCompleted nor a scheduled event")


def test_dedupe_keys_fit_the_column() -> None:
    long = dedupe_key("digest", "123456789012", "2026-11-22", "email", "x" * 300 + "@example.com")
    assert len(long) == 256
    assert long != dedupe_key("digest", "123456789012", "2026-11-22", "email", "x" * 301 + "@example.com")


def test_an_owner_tag_outside_the_allowed_domains_gets_no_mail(
    db_url: str, session_factory: sessionmaker[Session]
) -> None:
    # Given the estate plus a new big finding on a resource someone tagged with an outside address
    with session_factory.begin() as session:
        estate(session)
        baseline_sent(session, NOW - timedelta(days=1))  # not the account's first digest
        add_resource(
            session, "tagged-outside", tags={"chipwise:owner": "attacker@evil.example", "chipwise:notify": "yes"}
        )
        add_finding(session, "tagged-outside", savings="5000", first_seen=NOW - timedelta(hours=1))
    # When notify runs (recipients at example.com: the default allow-list is example.com)
    run_notify(_settings(db_url), now=NOW, senders=_senders(), session_factory=session_factory)
    # Then nothing is addressed to the outside owner, and the digest names it as not allowed
    messages = _messages(session_factory)
    assert all("evil.example" not in m.recipient for m in messages)
    assert all("evil.example" not in str(m.payload.get("to")) for m in messages)
    digest = next(m for m in messages if m.kind == "digest" and m.recipient == "finops@example.com")
    assert "Owner not allowed" in digest.payload["text"] and "attacker@evil.example" in digest.payload["text"]
