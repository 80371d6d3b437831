"""Stage 6: a startup's intake becomes a credits-and-migration plan: stored, the founder's address confirmed
through the signed link of the one confirmation email, the plan emailed (the emulator's SES), and written as
plan/plan.json, plan/plan.md and plan/plan.html."""

from __future__ import annotations

import re
from importlib import resources

from sqlalchemy import select

from chipwise.aws import aws_context
from chipwise.intake import views
from chipwise.intake.service import confirm_in, record_intake
from chipwise.notify.email import ses_sender
from chipwise.notify.outbox import drain
from chipwise.plan.document import PlanDocument
from chipwise.plan.intake import IntakeRequest
from chipwise.render import money
from chipwise.settings import Settings, get_settings
from chipwise.store.session import get_session_factory
from chipwise.store.tables import OutboxMessage
from chipwise_devkit.demo.runner import DemoContext, Stage

LOCAL_URL = "http://127.0.0.1:8000"  # where `chipwise serve` would show the plan


def sample_intake_text() -> str:
    """The demo's intake (a seed-stage startup with four workloads)."""
    return resources.files("chipwise_devkit.demo").joinpath("intake.json").read_text(encoding="utf-8")


def _summary(plan: PlanDocument, emailed: int) -> str:
    moves = ", ".join(f"{w.name} → {w.recommended_platform}" for w in plan.workloads if w.action == "move")
    likely = sum(1 for c in plan.credits if c.likelihood == "likely")
    possible = sum(1 for c in plan.credits if c.likelihood == "possible")
    return (
        f"{plan.company}: {money(plan.total_monthly_savings_usd)} a month to save ({moves}), porting "
        f"{money(plan.totals.porting_cost_usd)}, credit programs: {likely} likely, {possible} possible; "
        f"{emailed} emails sent (the confirmation, then the plan); "
        "plan/plan.json, plan/plan.md, plan/plan.html"
    )


def _verified_sender(settings: Settings) -> None:
    """The SES identity plan emails come from (the notify stage makes it; this stage also runs alone)."""
    client = aws_context(settings.region).client("sesv2")
    try:
        client.get_email_identity(EmailIdentity=settings.email_sender)
    except client.exceptions.NotFoundException:
        client.create_email_identity(EmailIdentity=settings.email_sender)


def _run(ctx: DemoContext) -> None:
    settings = get_settings()
    _verified_sender(settings)
    text = sample_intake_text()
    intake = IntakeRequest.model_validate_json(text)
    factory = get_session_factory(ctx.database_url)
    with factory.begin() as session:
        plan = record_intake(session, intake, client="127.0.0.1", base_url=LOCAL_URL).plan
    with factory.begin() as session:  # the founder opens the confirmation email and presses the button
        confirmation = session.scalars(
            select(OutboxMessage).where(
                OutboxMessage.kind == "intake_confirm", OutboxMessage.payload["text"].as_string().contains(plan.plan_id)
            )
        ).one()
        link = re.search(r"/confirm\?expires=(\d+)&signature=([\w-]+)", confirmation.payload["text"])
        assert link is not None
        confirm_in(session, plan.plan_id, link.group(1), link.group(2), base_url=LOCAL_URL)
        ids = [
            confirmation.id,
            *session.scalars(
                select(OutboxMessage.id).where(
                    OutboxMessage.kind == "plan", OutboxMessage.recipient == confirmation.recipient
                )
            ),
        ]
    report = drain(factory, senders={"email": ses_sender(settings)}, ids=ids)
    ctx.write("plan/intake.json", text)
    ctx.write("plan/plan.json", views.plan_json(plan))
    ctx.write("plan/plan.md", views.plan_markdown(plan))
    ctx.write(
        "plan/plan.html",
        views.plan_page(plan, permalink=f"{LOCAL_URL}/plans/{plan.plan_id}", home=f"{LOCAL_URL}/intake"),
    )
    ctx.results["plan"] = plan
    ctx.summary.append(("Plan", _summary(plan, len(report.sent))))


STAGE = Stage("Plan: a startup's intake becomes a credits-and-migration plan", _run)
