"""Submitting an intake and everything that follows: the plan, the limits, the confirmation, deletion, retention.

The public form must never be a mail relay, so:

* the plan is shown on the page at once; nothing is emailed to the submitter unless they confirm the address
  through a signed, expiring link sent to it, and that confirmation request goes out at most once per
  normalised address per UTC day (50 submissions naming one address: one email). The plan email follows only
  the owner's own click, once per plan;
* no email subject carries anything the submitter typed, and every typed value in an email body is made inert
  (never a link); links in emails are built from the configured public base URL only;
* the advisory team gets one digest a day, not one email per submission;
* submissions are limited per client (source IP) an hour and per normalised address a day, by counters in the
  database taken inside the submission's transaction (see :mod:`chipwise.intake.limits`).

Everything a submission writes (the submission, the plan, the referral draft when asked for, the confirmation
email) is one transaction. Sending happens later, from the outbox (the notify function), so the intake function
needs no mail rights. After ``intake_retention_days`` the retention job deletes the submission, its plan, its
draft and its outbox rows; its links (signed with the submission's own key) stop working with it.
"""

from __future__ import annotations

import hashlib
import json
import secrets
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime, timedelta
from decimal import InvalidOperation
from typing import Literal

from pydantic import ValidationError

from chipwise.clock import utcnow
from chipwise.errors import ChipwiseError, InvalidInput, NotFound
from chipwise.intake import limits, links, views
from chipwise.notify.outbox import enqueue
from chipwise.observability import logger
from chipwise.plan.document import PlanDocument
from chipwise.plan.intake import IntakeRequest
from chipwise.plan.planner import build_plan
from chipwise.presentation import plural
from chipwise.settings import Settings, get_settings
from chipwise.store import Session, guarded_scope
from chipwise.store.repositories.intake import IntakeRepository, PlanRecord, SubmissionRecord
from chipwise.store.repositories.messaging import DraftRecord, OutboxRepository

PLAN_ID_BYTES = 32  # 256 random bits: 43 URL-safe characters, never guessed or enumerated
DRAFT_KIND = "partner_referral"
CONFIRM_KIND = "intake_confirm"
PLAN_EMAIL_KIND = "plan"
DIGEST_KIND = "intake_digest"
# Fixed subjects: nothing a stranger typed ever reaches a subject line.
CONFIRM_SUBJECT = "Confirm your email address to receive your Chipwise plan"
PLAN_SUBJECT = "Your Chipwise AI accelerator plan"
CONFIRMATION_EMAILS_PER_ADDRESS_PER_DAY = 1
LIMIT_KEEP = timedelta(days=2)  # counters are dropped this long after their window starts

EmailState = Literal["confirm_sent", "confirmed", "withheld_today", "withheld_volume", "no_email"]


class RateLimited(ChipwiseError):
    """Too many submissions from one client or for one address: a 429 with this message."""

    def __init__(self, message: str, retry_after: timedelta) -> None:
        super().__init__(message)
        self.retry_after_seconds = max(1, int(retry_after.total_seconds()))


_LIMIT_MESSAGES = {
    "client": "Too many plans have been requested from your network in the last hour. Please try again later.",
    "address": "Too many plans have been requested for this email address today. Please try again tomorrow.",
}


@dataclass(frozen=True)
class Submitted:
    plan: PlanDocument
    created: bool  # False: the same answers within the window, answered with the plan already made


@dataclass(frozen=True)
class PlanView:
    """A stored plan as its page shows it: the public plan, the email state and a signed delete token."""

    plan: PlanDocument
    email: EmailState
    delete_token: links.LinkToken | None
    expires_at: datetime


def new_plan_id() -> str:
    return secrets.token_urlsafe(PLAN_ID_BYTES)


@contextmanager
def _store() -> Iterator[Session]:
    """A transaction on the configured store; a database error is StoreUnavailable (its type only: the
    statement's parameters, which can hold contact data, are never put into the message or the log)."""
    with guarded_scope(get_settings().database_url, "the plan store") as session:
        yield session


def answers_key(intake: IntakeRequest, client: str | None) -> str:
    """The same answers from the same client: one key (a resubmission within the window returns its plan)."""
    canonical = json.dumps(intake.model_dump(mode="json"), sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(f"{client or ''}\n{canonical}".encode()).hexdigest()


def _expiry(row: SubmissionRecord, settings: Settings) -> datetime:
    return row.expires_at or row.received_at + timedelta(days=settings.intake_retention_days)


def _recent_same_answers(session: Session, key: str, now: datetime, settings: Settings) -> PlanRecord | None:
    window = timedelta(minutes=settings.intake_resubmit_window_minutes)
    if not window:
        return None
    return IntakeRepository(session).recent_plan_for_answers(key, now - window)


def _check_limits(session: Session, email_key: str, client: str | None, now: datetime, settings: Settings) -> None:
    checks: list[tuple[limits.Scope, str, int, timedelta]] = [
        ("address", email_key, settings.intake_submissions_per_address_per_day, limits.DAY)
    ]
    if client:
        checks.insert(
            0, ("client", limits.client_key(client), settings.intake_submissions_per_client_per_hour, limits.HOUR)
        )
    for scope, key, limit, length in checks:
        refused = limits.take(session, scope, key, limit=limit, length=length, now=now)
        if refused is not None:
            logger().warning("intake rate limit reached", scope=scope)
            raise RateLimited(_LIMIT_MESSAGES[scope], refused.retry_after)


def _plan(intake: IntakeRequest, now: datetime) -> PlanDocument:
    try:
        return build_plan(intake, plan_id=new_plan_id(), created_at=now)
    except (ArithmeticError, InvalidOperation) as exc:
        logger().warning("intake numbers out of the planner's range", error=type(exc).__name__)
        raise InvalidInput(
            "These numbers are outside what the planner can work with; check the sizes and volumes you entered."
        ) from None


def _queue_confirmation(
    session: Session, row: SubmissionRecord, plan_id: str, email_key: str, now: datetime, base_url: str | None
) -> bool:
    """The one email a stranger's submission can cause: a request to confirm the address (once a day)."""
    settings = get_settings()
    if not base_url or row.link_key is None:
        return False
    refused = limits.take(
        session, "email", email_key, limit=CONFIRMATION_EMAILS_PER_ADDRESS_PER_DAY, length=limits.DAY, now=now
    )
    if refused is not None:
        logger().info("confirmation email withheld: one already sent to this address today")
        return False
    cap = settings.intake_confirmation_emails_per_day
    if limits.take(session, "mail", limits.GLOBAL, limit=cap, length=limits.DAY, now=now) is not None:
        # Past the day's global cap: the plan is shown, not mailed; the advisory digest reports how many.
        IntakeRepository(session).withhold_mail(row.id)
        logger().warning("confirmation email withheld: the daily cap on confirmation emails is reached", cap=cap)
        return False
    expires = min(now + timedelta(hours=settings.intake_confirm_link_hours), _expiry(row, settings))
    confirm = links.url(base_url, f"/plans/{plan_id}/confirm", links.sign(row.link_key, "confirm", plan_id, expires))
    delete = links.url(base_url, f"/plans/{plan_id}/delete", links.sign(row.link_key, "delete", plan_id, expires))
    mail = views.confirm_email(confirm_link=confirm, delete_link=delete, expires_at=expires)
    _email(session, CONFIRM_KIND, row.contact_email, f"intake:{row.id}:confirm", CONFIRM_SUBJECT, mail, now)
    return True


def record_intake(
    session: Session,
    intake: IntakeRequest,
    *,
    client: str | None = None,
    now: datetime | None = None,
    base_url: str | None = None,
) -> Submitted:
    """Plan one intake and store what goes with it in ``session`` (the caller commits).

    Links in the confirmation email start with the ``public_base_url`` setting (``base_url`` stands in for it
    only in the local demo; the HTTP API never passes one). Raises RateLimited (nothing is stored) when the
    client or the address has used its submissions.
    """
    settings = get_settings()
    when = now or utcnow()
    key = answers_key(intake, client)
    existing = _recent_same_answers(session, key, when, settings)
    if existing is not None:
        return Submitted(_document(existing), created=False)
    email_key = limits.address_key(str(intake.contact.email))
    _check_limits(session, email_key, client, when, settings)
    plan = _plan(intake, when)
    submission = SubmissionRecord(
        id=str(uuid.uuid4()),
        received_at=when,
        company_name=intake.company.name,
        contact_email=str(intake.contact.email),
        payload=intake.model_dump(mode="json"),
        email_key=email_key,
        answers_key=key,
        link_key=secrets.token_hex(32),
        partner_referral=intake.partner_referral,
        confirmed_at=None,
        expires_at=when + timedelta(days=settings.intake_retention_days),
        mail_withheld=False,
    )
    public = plan.public()
    plan_row = PlanRecord(
        id=plan.plan_id,
        submission_id=submission.id,
        company=plan.company,
        created_at=when,
        total_monthly_savings_usd=plan.total_monthly_savings_usd,
        document=json.loads(public.model_dump_json()),
    )
    IntakeRepository(session).add_submission(
        submission, plan_row, _draft(plan, intake, when) if intake.partner_referral else None
    )
    _queue_confirmation(session, submission, plan.plan_id, email_key, when, base_url or settings.public_base_url)
    return Submitted(public, created=True)


def _draft(plan: PlanDocument, intake: IntakeRequest, now: datetime) -> DraftRecord:
    return DraftRecord(
        id=str(uuid.uuid4()),
        kind=DRAFT_KIND,
        subject_key=f"plan:{plan.plan_id}",
        account_id=intake.aws.account_ids[0] if intake.aws.account_ids else None,
        plan_id=plan.plan_id,
        title="Partner referral from the intake (the founder asked for it)",
        body=views.referral_body(plan, intake),
        document=plan.referral_draft,
        created_at=now,
        updated_at=now,
    )


def submit_intake(intake: IntakeRequest, *, client: str | None = None, now: datetime | None = None) -> Submitted:
    """PlanRecord, store and queue an intake on the configured store, in one transaction."""
    with _store() as session:
        return record_intake(session, intake, client=client, now=now)


# --- reading, confirming, deleting --------------------------------------------------------------------------


_EARLIER_VERSION = (
    "This plan was made by an earlier version of Chipwise and can no longer be shown; please make a new one."
)


def _document(row: PlanRecord) -> PlanDocument:
    """The stored plan; a document an earlier version stored in another shape is NotFound, never a 500."""
    try:
        return PlanDocument.model_validate(row.document).public()
    except ValidationError:
        logger().warning("stored plan in an earlier shape", plan_created=row.created_at.isoformat())
        raise NotFound(_EARLIER_VERSION) from None


def _live(session: Session, plan_id: str, now: datetime) -> tuple[PlanRecord, SubmissionRecord | None]:
    """The plan with this id, unless it does not exist or has expired (then NotFound, the same answer)."""
    intake = IntakeRepository(session)
    row = intake.get_plan(plan_id)
    if row is None:
        raise NotFound("No plan has this address. Plans are deleted after a while, or when their owner asks.")
    submission = intake.get_submission(row.submission_id) if row.submission_id else None
    settings = get_settings()
    expires = (
        _expiry(submission, settings) if submission else row.created_at + timedelta(days=settings.intake_retention_days)
    )
    if expires <= now:
        raise NotFound("No plan has this address. Plans are deleted after a while, or when their owner asks.")
    return row, submission


def _email_state(session: Session, submission: SubmissionRecord | None) -> EmailState:
    if submission is None or not get_settings().public_base_url:
        return "no_email"
    if submission.confirmed_at is not None:
        return "confirmed"
    if submission.mail_withheld:
        return "withheld_volume"
    queued = OutboxRepository(session).has_key(f"intake:{submission.id}:confirm")
    return "confirm_sent" if queued else "withheld_today"


def find_plan(session: Session, plan_id: str, now: datetime | None = None) -> PlanView:
    when = now or utcnow()
    row, submission = _live(session, plan_id, when)
    token = None
    expires = row.created_at + timedelta(days=get_settings().intake_retention_days)
    if submission is not None and submission.link_key:
        expires = _expiry(submission, get_settings())
        token = links.sign(submission.link_key, "delete", plan_id, expires)
    plan = _document(row)
    return PlanView(plan=plan, email=_email_state(session, submission), delete_token=token, expires_at=expires)


def load_plan(plan_id: str, now: datetime | None = None) -> PlanView:
    """The stored plan with this id (NotFound otherwise: ids are looked up, never guessed or listed)."""
    with _store() as session:
        return find_plan(session, plan_id, now)


_BAD_LINK = "This link has expired or is not valid. The plan's own page has a fresh one."


def _verified(
    session: Session, plan_id: str, purpose: links.Purpose, expires: str, signature: str, now: datetime
) -> tuple[PlanRecord, SubmissionRecord]:
    row, submission = _live(session, plan_id, now)
    if submission is None or not links.verify(submission.link_key, purpose, plan_id, expires, signature, now):
        raise NotFound(_BAD_LINK)
    return row, submission


def check_link(plan_id: str, purpose: links.Purpose, expires: str, signature: str, now: datetime | None = None) -> None:
    """NotFound unless the link is good (the page asking "are you sure?" checks before it is shown)."""
    with _store() as session:
        _verified(session, plan_id, purpose, expires, signature, now or utcnow())


def confirm_in(
    session: Session,
    plan_id: str,
    expires: str,
    signature: str,
    *,
    now: datetime | None = None,
    base_url: str | None = None,
) -> bool:
    """:func:`confirm_address` in ``session`` (``base_url`` stands in for the setting in the local demo only)."""
    when = now or utcnow()
    settings = get_settings()
    base = base_url or settings.public_base_url
    row, submission = _verified(session, plan_id, "confirm", expires, signature, when)
    if submission.confirmed_at is not None or not base or submission.link_key is None:
        return False
    plan = _document(row)
    IntakeRepository(session).confirm(submission.id, when)
    expiry = _expiry(submission, settings)
    link = links.url(base, f"/plans/{plan_id}")
    delete = links.url(base, f"/plans/{plan_id}/delete", links.sign(submission.link_key, "delete", plan_id, expiry))
    mail = views.contact_email(plan, link=link, delete_link=delete, expires_at=expiry)
    _email(session, PLAN_EMAIL_KIND, submission.contact_email, f"intake:{submission.id}:plan", PLAN_SUBJECT, mail, when)
    logger().info("intake address confirmed; plan email queued")
    return True


def confirm_address(plan_id: str, expires: str, signature: str, now: datetime | None = None) -> bool:
    """The owner clicked the confirmation: queue the plan email (once per plan). True when newly queued."""
    with _store() as session:
        return confirm_in(session, plan_id, expires, signature, now=now)


def delete_plan(plan_id: str, expires: str, signature: str, now: datetime | None = None) -> None:
    """The owner asked: the plan, the answers, the contact data and any unsent email about them, gone."""
    with _store() as session:
        _row, submission = _verified(session, plan_id, "delete", expires, signature, now or utcnow())
        intake = IntakeRepository(session)
        intake.delete_submission(submission.id, intake.plan_ids_of(submission.id))
    logger().info("intake submission deleted at its owner's request")


# --- retention and the advisory digest ----------------------------------------------------------------------


@dataclass(frozen=True)
class RetentionReport:
    submissions_deleted: int
    outbox_deleted: int
    limits_deleted: int
    digest_queued: bool


def purge_expired(session: Session, now: datetime) -> tuple[int, int, int]:
    """Delete what has outlived ``intake_retention_days``: submissions (with plans, drafts, outbox rows),
    intake emails and digests older than that, and rate-limit counters older than two days."""
    settings = get_settings()
    cutoff = now - timedelta(days=settings.intake_retention_days)
    intake = IntakeRepository(session)
    expired = intake.expired_submission_ids(now, cutoff)
    for submission_id in expired:
        intake.delete_submission(submission_id, intake.plan_ids_of(submission_id))
    intake.delete_plans(intake.orphan_plan_ids(cutoff))
    outbox = intake.delete_outbox_before((CONFIRM_KIND, PLAN_EMAIL_KIND, DIGEST_KIND), cutoff)
    counters = intake.delete_limits_before(now - LIMIT_KEEP)
    return len(expired), outbox, counters


def queue_advisory_digest(session: Session, now: datetime) -> bool:
    """One email to the advisory team about the previous UTC day's submissions (none when there were none)."""
    settings = get_settings()
    day_end = limits.window_start(now, limits.DAY)
    day_start = day_end - limits.DAY
    rows = IntakeRepository(session).submissions_with_plans(day_start, day_end)
    if not rows:
        return False
    entries = [
        views.DigestEntry(
            received_at=submission.received_at,
            company=submission.company_name,
            contact_email=submission.contact_email,
            monthly_savings_usd=plan.total_monthly_savings_usd,
            partner_referral=bool(submission.partner_referral),
            link=links.url(settings.public_base_url, f"/plans/{plan.id}") if settings.public_base_url else None,
        )
        for submission, plan in rows
    ]
    withheld = sum(1 for submission, _ in rows if submission.mail_withheld)
    html, text = views.advisory_digest(
        entries, day=day_start.date(), mail_withheld=withheld, mail_cap=settings.intake_confirmation_emails_per_day
    )
    day = day_start.date().isoformat()
    subject = f"[Chipwise] Intake digest for {day}: {plural(len(entries), 'new plan')}"
    return _email(session, DIGEST_KIND, settings.advisory_email, f"intake-digest:{day}", subject, (html, text), now)


def _email(
    session: Session, kind: str, recipient: str, dedupe_key: str, subject: str, mail: tuple[str, str], now: datetime
) -> bool:
    """One email (its HTML and text) in the outbox, once per ``dedupe_key``: False when it was already there."""
    html, text = mail
    queued = enqueue(
        session,
        channel="email",
        kind=kind,
        recipient=recipient,
        dedupe_key=dedupe_key,
        subject=subject,
        payload={"html": html, "text": text},
        now=now,
    )
    return queued is not None


def run_retention(now: datetime | None = None) -> RetentionReport:
    """The daily intake job: yesterday's digest for the advisory team, then retention."""
    when = now or utcnow()
    with _store() as session:
        digest = queue_advisory_digest(session, when)
        submissions, outbox, counters = purge_expired(session, when)
    report = RetentionReport(submissions, outbox, counters, digest)
    logger().info(
        "intake retention done",
        submissions_deleted=submissions,
        outbox_deleted=outbox,
        limits_deleted=counters,
        digest_queued=digest,
    )
    return report
