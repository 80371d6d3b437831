"""The plan reaches people: the outbox rows the intake queued are sent through SES (the emulator)."""

from __future__ import annotations

import email
import re
from email.message import Message
from typing import Any

from plan_factories import intake

from chipwise.aws import aws_context
from chipwise.intake.service import confirm_address, submit_intake
from chipwise.notify.email import ses_sender
from chipwise.notify.outbox import drain
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


def test_the_founder_gets_a_confirmation_then_the_plan_through_ses(aws: Any, use_db: str) -> None:
    # Given a submitted intake and a verified SES sender
    settings = get_settings()
    aws_context(settings.region).client("sesv2").create_email_identity(EmailIdentity=settings.email_sender)
    plan = submit_intake(intake(), client="192.0.2.1").plan
    sender = {"email": ses_sender(settings)}
    # When the outbox is drained: the confirmation request goes out, with nothing typed in it
    assert len(drain(get_session_factory(use_db), senders=sender).sent) == 1
    confirmation = _parts(aws.sent_emails()[0]["raw_data"])
    assert confirmation["to"] == "ada@acme.example" and "Acme" not in confirmation["text/plain"]
    link = re.search(r"/confirm\?expires=(\d+)&signature=([\w-]+)", confirmation["text/plain"])
    assert link
    # and the founder confirms, and the outbox is drained again
    assert confirm_address(plan.plan_id, link.group(1), link.group(2))
    assert len(drain(get_session_factory(use_db), senders=sender).sent) == 1
    # Then the plan arrives, read back from the emulator, with the link on the configured address
    sent = aws.sent_emails()
    assert len(sent) == 2
    contact = _parts(sent[1]["raw_data"])
    assert f"https://plans.example/plans/{plan.plan_id}" in contact["text/plain"]
    assert "$2,745.82" in contact["text/html"]
