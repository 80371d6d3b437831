"""Stage 5: tell people. The digest and alerts go out by email (the emulator's SES) and Slack (a local webhook
stand-in on 127.0.0.1), and the account's credits-application and partner-referral drafts are written."""

from __future__ import annotations

import json
from typing import Any

from sqlalchemy import select

from chipwise.aws import aws_context
from chipwise.drafts import attachments, prepare_account_drafts
from chipwise.notify.email import ses_sender
from chipwise.notify.outbox import drain
from chipwise.notify.slack import SlackWebhookSender, resolve_webhook_url
from chipwise.pipeline.notify import run_notify
from chipwise.presentation import plural
from chipwise.render import money
from chipwise.settings import Settings, get_settings
from chipwise.store.session import get_session_factory
from chipwise.store.tables import OutboxMessage
from chipwise_devkit.demo.runner import DemoContext, Stage
from chipwise_devkit.fakes.webhook_sink import WebhookSink

SENDER = "chipwise@example.com"
RECIPIENT = "finops@example.com"
SECRET_NAME = "chipwise/slack-webhook"


def _settings() -> Settings:
    return get_settings().model_copy(
        update={"email_sender": SENDER, "email_recipients": [RECIPIENT], "slack_webhook_secret_name": SECRET_NAME}
    )


def _prepare_aws(settings: Settings, webhook_url: str) -> None:
    """Verify the SES sender identity and store the webhook URL as a secret, as an operator would."""
    ctx = aws_context(settings.region)
    ctx.client("sesv2").create_email_identity(EmailIdentity=settings.email_sender)
    ctx.client("secretsmanager").create_secret(Name=SECRET_NAME, SecretString=json.dumps({"url": webhook_url}))


def _write_emails(ctx: DemoContext, messages: list[OutboxMessage]) -> None:
    """The emails as files: the configured recipient's full digest as digest.html / digest.txt, the rest
    (owners' digests, alerts, the drafts review) under email/."""
    for m in messages:
        if m.channel != "email":
            continue
        stem = "digest" if m.kind == "digest" and m.recipient == RECIPIENT else f"email/{m.kind}-{m.id:03d}"
        ctx.write(f"{stem}.html", m.payload["html"])
        ctx.write(f"{stem}.txt", m.payload["text"])


def _slack_kind(body: dict[str, Any]) -> str:
    """ "digest" or "alert", from the message's header block."""
    heading = str(body.get("blocks", [{}])[0].get("text", {}).get("text", ""))
    return "digest" if heading.startswith("Chipwise digest") else "alert"


def _run(ctx: DemoContext) -> None:
    settings = _settings()
    factory = get_session_factory(ctx.database_url)
    with WebhookSink() as sink:
        _prepare_aws(settings, sink.url)
        senders: dict[str, Any] = {
            "email": ses_sender(settings),
            "slack": SlackWebhookSender(lambda: resolve_webhook_url(SECRET_NAME, settings)),
        }
        report = run_notify(settings, senders=senders, session_factory=factory)
        with factory.begin() as session:
            drafts = prepare_account_drafts(session, ctx.account_id, settings)
        drain(factory, senders={"email": senders["email"]})  # the drafts review email
        slack_bodies = list(sink.received)
    with factory() as session:
        messages = list(session.scalars(select(OutboxMessage).order_by(OutboxMessage.id)))
    _write_emails(ctx, messages)
    for index, body in enumerate(slack_bodies, start=1):
        ctx.write(f"slack/{index:02d}-{_slack_kind(body)}.json", json.dumps(body, indent=2, ensure_ascii=False) + "\n")
    for item in attachments(drafts.drafts):
        ctx.write(f"drafts/{item['filename']}", item["content"])
    mail = ctx.emulator.sent_emails()
    ctx.results["notify"] = {"report": report.as_dict(), "emails": len(mail), "slack": len(slack_bodies)}
    figures = drafts.drafts.figures
    written = [name for name in ("digest.html", "digest.txt") if (ctx.out_dir / name).exists()]
    written += ["slack/*.json"] if slack_bodies else []
    ctx.summary.append(
        (
            "Notifications",
            f"{plural(len(mail), 'email')} read back from the emulator's SES (the account's first run: the baseline "
            "digest and no alert; then the drafts review), "
            f"{plural(len(slack_bodies), 'Slack message')} to a local webhook, {len(report.drained.failed)} failed; "
            + (f"wrote {', '.join(written)}" if written else "no findings, so no digest"),
        )
    )
    ctx.summary.append(
        (
            "Drafts",
            f"credits application and partner referral for {figures.company}: accelerator and compute spend "
            f"{money(figures.monthly_accelerator_spend_usd)}/mo ({figures.spend_basis}), "
            f"savings {money(figures.monthly_savings_usd, 0)}/mo, "
            f"credit programs: {sum(1 for m in drafts.drafts.programs if m.likelihood == 'likely')} likely, "
            f"{sum(1 for m in drafts.drafts.programs if m.likelihood == 'possible')} possible (company facts "
            "unknown until filled in; drafts/*; nothing submitted)",
        )
    )


STAGE = Stage("Notify: digest and alerts by email and Slack, credit and referral drafts", _run)
