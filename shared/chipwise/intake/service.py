"""Submitting an intake: plan it, store it, queue the emails, keep the partner-referral draft.

All in one transaction: the submission, the plan (its id is the unguessable key of its page), the draft row
and the two outbox messages exist together or not at all. Sending happens later, from the outbox, so a mail
outage never loses a plan, and nothing is sent twice (the dedupe keys carry the plan id).
"""

from __future__ import annotations

import json
import secrets
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime, timedelta

from sqlalchemy import func, select
from sqlalchemy.exc import OperationalError, ProgrammingError
from sqlalchemy.orm import Session

from chipwise.act.notify.outbox import enqueue
from chipwise.errors import NotFound, StoreUnavailable
from chipwise.intake import views
from chipwise.observability import logger
from chipwise.plan.document import PlanDocument
from chipwise.plan.intake import IntakeRequest
from chipwise.plan.planner import build_plan
from chipwise.render import money
from chipwise.settings import get_settings
from chipwise.store import session_scope
from chipwise.store.base import utcnow
from chipwise.store.tables import Draft, IntakeSubmission, Plan

PLAN_ID_BYTES = 32  # 256 random bits: 43 URL-safe characters, never guessed or enumerated
DRAFT_KIND = "partner_referral"
# A public form can be pointed at anyone's address: after this many plans a day, one address gets no more mail
# (the plan is still made, shown and kept; the advisory copy still goes out).
MAX_PLAN_EMAILS_PER_ADDRESS_PER_DAY = 5


def new_plan_id() -> str:
    return secrets.token_urlsafe(PLAN_ID_BYTES)


def plan_link(base_url: str | None, plan_id: str) -> str | None:
    return f"{base_url.rstrip('/')}/plans/{plan_id}" if base_url else None


@contextmanager
def _store() -> Iterator[Session]:
    """A transaction on the configured store; a database that cannot be reached is StoreUnavailable."""
    try:
        with session_scope(get_settings().database_url) as session:
            yield session
    except (OperationalError, ProgrammingError) as exc:
        raise StoreUnavailable(f"the plan store cannot be used: {type(exc.orig).__name__}") from exc


def recent_submissions(session: Session, email: str, now: datetime) -> int:
    """Submissions for this contact address in the last day."""
    return (
        session.scalar(
            select(func.count())
            .select_from(IntakeSubmission)
            .where(IntakeSubmission.contact_email == email, IntakeSubmission.received_at >= now - timedelta(days=1))
        )
        or 0
    )


def _queue_emails(session: Session, plan: PlanDocument, intake: IntakeRequest, link: str | None, now: datetime) -> None:
    savings = money(plan.totals.monthly_savings_usd)
    contact = str(intake.contact.email)
    if recent_submissions(session, contact, now) <= MAX_PLAN_EMAILS_PER_ADDRESS_PER_DAY:
        html, text = views.contact_email(plan, intake, link)
        enqueue(
            session,
            channel="email",
            kind="plan",
            recipient=contact,
            dedupe_key=f"plan:{plan.plan_id}:contact",
            subject=f"Your AI accelerator plan for {plan.company}: {savings} a month to save",
            payload={"html": html, "text": text},
        )
    else:
        logger().warning("plan email to the contact withheld: too many plans for one address today")
    html, text = views.internal_email(plan, intake, link)
    enqueue(
        session,
        channel="email",
        kind="plan",
        recipient=get_settings().advisory_email,
        dedupe_key=f"plan:{plan.plan_id}:advisory",
        subject=f"[Chipwise] New intake: {plan.company} ({savings} a month)",
        payload={
            "html": html,
            "text": text,
            "reply_to": [str(intake.contact.email)],
            "attachments": [
                {
                    "filename": "ace-opportunity-draft.json",
                    "content_type": "application/json",
                    "content": views.referral_json(plan),
                }
            ],
        },
    )


def _draft(plan: PlanDocument, intake: IntakeRequest, now: datetime) -> Draft:
    return Draft(
        id=str(uuid.uuid4()),
        kind=DRAFT_KIND,
        subject_key=f"plan:{plan.plan_id}",
        account_id=intake.aws.account_ids[0] if intake.aws.account_ids else None,
        plan_id=plan.plan_id,
        title=f"Partner referral: {plan.company}"[:512],
        body=views.referral_body(plan, intake),
        document=plan.referral_draft,
        created_at=now,
        updated_at=now,
    )


def record_intake(
    session: Session, intake: IntakeRequest, *, base_url: str | None, now: datetime | None = None
) -> PlanDocument:
    """Plan one intake and store everything that goes with it in ``session`` (the caller commits)."""
    when = now or utcnow()
    plan = build_plan(intake, plan_id=new_plan_id(), created_at=when)
    submission = IntakeSubmission(
        id=str(uuid.uuid4()),
        received_at=when,
        company_name=intake.company.name,
        contact_email=str(intake.contact.email),
        payload=intake.model_dump(mode="json"),
    )
    session.add(submission)
    session.flush()  # the plan row refers to the submission
    session.add(
        Plan(
            id=plan.plan_id,
            submission_id=submission.id,
            company=plan.company,
            created_at=when,
            total_monthly_savings_usd=plan.total_monthly_savings_usd,
            document=json.loads(plan.model_dump_json()),
        )
    )
    session.add(_draft(plan, intake, when))
    _queue_emails(session, plan, intake, plan_link(base_url, plan.plan_id), when)
    return plan


def submit_intake(intake: IntakeRequest, *, base_url: str | None, now: datetime | None = None) -> PlanDocument:
    """Plan, store and queue an intake on the configured store, in one transaction."""
    with _store() as session:
        return record_intake(session, intake, base_url=base_url, now=now)


def find_plan(session: Session, plan_id: str) -> PlanDocument:
    row = session.get(Plan, plan_id)
    if row is None:
        raise NotFound("No plan has this address.")
    return PlanDocument.model_validate(row.document)


def load_plan(plan_id: str) -> PlanDocument:
    """The stored plan with this id (NotFound otherwise: ids are looked up, never guessed or listed)."""
    with _store() as session:
        return find_plan(session, plan_id)
