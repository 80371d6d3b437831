"""Email through the emulator's SES v2: read the sent mail back; nothing twice; a failed send is sent next run."""

from __future__ import annotations

from datetime import timedelta
from email import message_from_string, policy
from email.message import EmailMessage
from typing import Any

from notify_factories import NOW, baseline_sent, estate
from sqlalchemy.orm import Session, sessionmaker

from chipwise.aws import aws_context
from chipwise.notify.email import SesEmailSender, ses_sender
from chipwise.notify.outbox import drain, enqueue
from chipwise.pipeline.notify import run_notify
from chipwise.settings import Settings
from chipwise.store.tables import OutboxMessage

SENDER = "chipwise@example.com"


def _settings(db_url: str) -> Settings:
    return Settings(database_url=db_url, email_sender=SENDER, email_recipients=["finops@example.com"])


def _verify_sender(region: str = "us-east-1") -> None:
    aws_context(region).client("sesv2").create_email_identity(EmailIdentity=SENDER)


def _parts(raw: str) -> tuple[EmailMessage, dict[str, str], list[str]]:
    """The parsed message, its text bodies by content type, and its attachment names."""
    message = message_from_string(raw, policy=policy.default)
    assert isinstance(message, EmailMessage)
    bodies: dict[str, str] = {}
    names: list[str] = []
    for part in message.walk():
        if part.get_filename():
            names.append(part.get_filename())
        elif part.get_content_type() in ("text/plain", "text/html"):
            bodies[part.get_content_type()] = part.get_content()
    return message, bodies, names


def _mail(aws: Any) -> list[dict[str, Any]]:
    return [m for m in aws.sent_emails() if m["kind"] == "raw"]


def test_digest_and_alert_read_back_from_ses(aws: Any, db_url: str, session_factory: sessionmaker[Session]) -> None:
    # Given a verified sender and an account with a new $2,400 finding owned by support-ai
    _verify_sender()
    with session_factory.begin() as session:
        estate(session)
        baseline_sent(session, NOW - timedelta(days=1))  # not the account's first digest
    settings = _settings(db_url)
    # When notify runs with the production email sender
    report = run_notify(settings, now=NOW, senders={"email": ses_sender(settings)}, session_factory=session_factory)
    # Then every message reached SES, and the digest to finops reads back whole
    mail = _mail(aws)
    assert len(mail) == len(report.drained.sent) == 5
    subjects = sorted(m["subject"] for m in mail)
    assert subjects.count("Chipwise alert: $2,401 a month on chat-mistral-g5") == 2
    digest = next(
        m for m in mail if m["subject"].startswith("Chipwise: $3,265") and "finops@example.com" in m["raw_data"]
    )
    assert digest["source"] == SENDER
    assert "finops@example.com" in digest["destinations"]
    message, bodies, _ = _parts(digest["raw_data"])
    assert message["Subject"] == "Chipwise: $3,265 a month to save in Acme AI (123456789012), 2 new"
    assert message["To"] == "finops@example.com" and "Chipwise" in message["From"]
    assert set(bodies) == {"text/plain", "text/html"}  # both parts, as rendered
    assert "Could be saved: $3,265.30 a month from 3 counted findings (3 open, 0 not counted)" in bodies["text/plain"]
    assert 'data-chart="waste-by-rule"' in bodies["text/html"] and "$2,401/mo" in bodies["text/html"]
    # ...and the owners got theirs
    owners = {d for m in mail for d in m["destinations"] if "finops" not in d}
    assert owners == {"support-ai@example.com", "nlp@example.com"}


def test_running_twice_sends_nothing_twice(aws: Any, db_url: str, session_factory: sessionmaker[Session]) -> None:
    # Given a first run that sent everything
    _verify_sender()
    with session_factory.begin() as session:
        estate(session)
        baseline_sent(session, NOW - timedelta(days=1))  # not the account's first digest
    settings = _settings(db_url)
    run_notify(settings, now=NOW, senders={"email": ses_sender(settings)}, session_factory=session_factory)
    sent_first = len(_mail(aws))
    # When notify runs again later that day
    again = run_notify(
        settings, now=NOW + timedelta(hours=3), senders={"email": ses_sender(settings)}, session_factory=session_factory
    )
    # Then SES received nothing more
    assert sent_first == 5
    assert again.enqueued == 0 and again.drained.sent == []
    assert len(_mail(aws)) == sent_first


def test_an_ses_failure_leaves_the_message_pending_and_the_next_run_sends_it(
    aws: Any, db_url: str, session_factory: sessionmaker[Session]
) -> None:
    # Given one queued email and SES refusing the next send
    _verify_sender()
    with session_factory.begin() as session:
        message = enqueue(
            session,
            channel="email",
            kind="alert",
            recipient="finops@example.com",
            dedupe_key="alert:x",
            subject="Alert",
            payload={"html": "<p>$2,401</p>", "text": "$2,401"},
            now=NOW,
        )
        assert message is not None
    aws.inject_fault("sesv2", "SendEmail", "MessageRejected", "Email address is not verified.", times=1)
    sender = ses_sender(_settings(db_url))
    # When drained
    first = drain(session_factory, now=NOW, senders={"email": sender}, retry_seconds=60)
    # Then nothing was sent and the row waits with the reason
    assert first.retrying == [message.id] and _mail(aws) == []
    with session_factory() as session:
        row = session.get(OutboxMessage, message.id)
        assert row is not None
        assert (row.status, row.attempts) == ("pending", 1)
        assert row.last_error == "SES MessageRejected: Email address is not verified."
    # ...and the next run, once due, sends it exactly once
    second = drain(session_factory, now=NOW + timedelta(minutes=2), senders={"email": sender})
    assert second.sent == [message.id]
    assert [m["subject"] for m in _mail(aws)] == ["Alert"]
    assert aws.fault_hits() == {"sesv2.SendEmail": 1}


def test_an_unverified_sender_is_an_error_on_the_row_not_a_crash(
    aws: Any, db_url: str, session_factory: sessionmaker[Session]
) -> None:
    # Given no verified identity
    with session_factory.begin() as session:
        enqueue(
            session,
            channel="email",
            kind="digest",
            recipient="finops@example.com",
            dedupe_key="d1",
            subject="Digest",
            payload={"html": "<p>x</p>", "text": "x"},
            now=NOW,
        )
    # When drained / Then the row keeps SES's reason and stays pending for a retry
    report = drain(session_factory, now=NOW, senders={"email": ses_sender(_settings(db_url))})
    assert report.sent == [] and "MessageRejected" in next(iter(report.errors.values()))


def test_attachments_and_cc_travel_in_the_mime_message(aws: Any, session_factory: sessionmaker[Session]) -> None:
    # Given an email with a cc and a JSON attachment
    _verify_sender()
    with session_factory.begin() as session:
        enqueue(
            session,
            channel="email",
            kind="draft",
            recipient="advisory@example.com",
            dedupe_key="draft:1",
            subject="Drafts for review: Ünïcode Co",
            payload={
                "html": "<p>Drafts</p>",
                "text": "Drafts",
                "cc": ["lead@example.com"],
                "attachments": [{"filename": "ace.json", "content_type": "application/json", "content": '{"a": 1}'}],
            },
            now=NOW,
        )
    client = aws_context("us-east-1").client("sesv2")
    # When sent
    drain(session_factory, now=NOW, senders={"email": SesEmailSender(client, SENDER)})
    # Then the message carries the cc, the attachment and the encoded subject
    (mail,) = _mail(aws)
    message, bodies, names = _parts(mail["raw_data"])
    assert message["Cc"] == "lead@example.com" and "lead@example.com" in mail["destinations"]
    assert str(message["Subject"]) == "Drafts for review: Ünïcode Co"
    assert names == ["ace.json"] and bodies["text/plain"].strip() == "Drafts"
