"""Email through Amazon SES v2: one multipart MIME message (text + HTML, optional attachments) per outbox row.

Why raw MIME rather than ``Content.Simple``: it carries both parts exactly as rendered, plus attachments (the
ACE draft as JSON), and it is what the recipient's mail client receives, so tests can read back both parts.
"""

from __future__ import annotations

from email.headerregistry import Address
from email.message import EmailMessage
from email.policy import SMTP
from email.utils import formataddr, make_msgid, parseaddr
from typing import TYPE_CHECKING

from botocore.exceptions import BotoCoreError, ClientError

from chipwise.aws import aws_context
from chipwise.notify.outbox import EmailPayload, SendError
from chipwise.settings import Settings
from chipwise.store.repositories.messaging import OutboxRecord

if TYPE_CHECKING:
    from mypy_boto3_sesv2 import SESV2Client

SENDER_NAME = "Chipwise"
# SES v2 errors that the same request can never get past; everything else (throttling, a paused account,
# an unverified sender that someone is about to verify) is retried with backoff.
PERMANENT_ERRORS = frozenset({"BadRequestException", "NotFoundException"})


def build_mime(message: OutboxRecord, sender: str) -> EmailMessage:
    """The MIME message for an email row: multipart/alternative (text, then HTML), attachments after."""
    payload = EmailPayload.model_validate(message.payload)
    mime = EmailMessage(policy=SMTP)
    name, address = parseaddr(sender)
    mime["From"] = formataddr((name or SENDER_NAME, address))
    mime["To"] = ", ".join(payload.to)
    if payload.cc:
        mime["Cc"] = ", ".join(payload.cc)
    if payload.reply_to:
        mime["Reply-To"] = ", ".join(payload.reply_to)
    mime["Subject"] = message.subject or ""
    mime["Message-ID"] = make_msgid(domain=Address(addr_spec=address).domain or None)
    mime["X-Chipwise-Kind"] = message.kind
    mime.set_content(payload.text, subtype="plain", charset="utf-8")
    mime.add_alternative(payload.html, subtype="html", charset="utf-8")
    for attachment in payload.attachments:
        maintype, subtype = attachment.content_type.split("/", 1)
        mime.add_attachment(
            attachment.content.encode("utf-8"), maintype=maintype, subtype=subtype, filename=attachment.filename
        )
    return mime


class SesEmailSender:
    """Sends email rows with SES v2 ``SendEmail`` (``Content.Raw``) from a verified identity."""

    def __init__(self, client: SESV2Client, sender: str) -> None:
        self.client = client
        self.sender = sender

    def send(self, message: OutboxRecord) -> str | None:
        mime = build_mime(message, self.sender)
        payload = EmailPayload.model_validate(message.payload)
        destination: dict[str, list[str]] = {"ToAddresses": list(payload.to)}
        if payload.cc:
            destination["CcAddresses"] = list(payload.cc)
        try:
            response = self.client.send_email(
                FromEmailAddress=self.sender,
                Destination=destination,  # type: ignore[arg-type]
                Content={"Raw": {"Data": mime.as_bytes()}},
                EmailTags=[{"Name": "kind", "Value": message.kind}],
            )
        except ClientError as exc:
            code = exc.response.get("Error", {}).get("Code", "Unknown")
            text = exc.response.get("Error", {}).get("Message", str(exc))
            raise SendError(f"SES {code}: {text}", permanent=code in PERMANENT_ERRORS) from exc
        except BotoCoreError as exc:  # connection errors after botocore's own retries
            raise SendError(f"SES unreachable: {exc}") from exc
        return response.get("MessageId")


def ses_sender(settings: Settings) -> SesEmailSender:
    """The production email sender: SES v2 in the home region, from ``settings.email_sender``."""
    return SesEmailSender(aws_context(settings.region).client("sesv2"), settings.email_sender)
