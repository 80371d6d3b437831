"""The plan reaches people: the outbox rows the intake queued are sent through SES (the emulator)."""

from __future__ import annotations

import email
from email.message import Message
from typing import Any

from plan_factories import intake

from chipwise.act.notify.email import ses_sender
from chipwise.act.notify.outbox import drain
from chipwise.aws import aws_context
from chipwise.intake.service import submit_intake
from chipwise.settings import get_settings
from chipwise.store.session import get_session_factory


def _parts(raw: str) -> dict[str, str]:
    """The To header and each part of a raw MIME message (attachments by file name)."""
    message: Message = email.message_from_string(raw)
    found: dict[str, str] = {"to": str(message["To"])}
    for part in message.walk():
        filename = part.get_filename()
        payload = part.get_payload(decode=True)
        if isinstance(payload, bytes):
            found[filename or part.get_content_type()] = payload.decode("utf-8")
    return found


def test_the_contact_gets_the_plan_and_the_advisory_team_the_draft(aws: Any, use_db: str) -> None:
    # Given a submitted intake and a verified SES sender
    settings = get_settings()
    aws_context(settings.region).client("sesv2").create_email_identity(EmailIdentity=settings.email_sender)
    plan = submit_intake(intake(), base_url="https://plans.example")
    # When the outbox is drained through SES
    report = drain(get_session_factory(use_db), senders={"email": ses_sender(settings)})
    # Then both emails went out, read back from the emulator
    assert len(report.sent) == 2
    sent = aws.sent_emails()
    assert len(sent) == 2
    by_recipient = {parts["to"]: parts for parts in (_parts(m["raw_data"]) for m in sent)}
    contact, advisory = by_recipient["ada@acme.example"], by_recipient[settings.advisory_email]
    assert f"https://plans.example/plans/{plan.plan_id}" in contact["text/plain"]
    assert "$2,745.82 a month" in contact["text/html"]
    assert '"Origin": "Partner Referral"' in advisory["ace-opportunity-draft.json"]
