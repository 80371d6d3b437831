"""Deciding who is told what, enqueueing it, and draining the outbox: what the Lambda, CLI and demo call.

* Immediate alerts: an open finding whose monthly saving is above ``alert_threshold_usd`` and that is new
  (first seen after the last digest, or named by the ``ScanCompleted`` event) goes to the digest recipients,
  the resource's owners (``chipwise:owner`` / ``owner`` tags) and Slack, once per finding.
* The daily digest, once per account and day: the whole account to the configured recipients and Slack, and
  to each owner the part of it on resources they own.

Everything is rendered when it is enqueued, so the outbox row is exactly what is sent, and the dedupe keys
(one per message, recipient and channel) make a second run on the same day send nothing.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass, field, fields, replace
from datetime import datetime, timedelta
from typing import Any

from chipwise.catalog import get_public_mail_domains
from chipwise.notify import slack as slack_blocks
from chipwise.notify.digest import (
    AccountSnapshot,
    ActionLine,
    Alert,
    Digest,
    FindingLine,
    PrecisionLine,
    account_ids_with_findings,
    alert_candidates,
    build_alert,
    build_digest,
    load_snapshot,
)
from chipwise.notify.outbox import (
    MAX_DEDUPE_KEY,
    Channel,
    DrainReport,
    enqueue,
    existing_keys,
)
from chipwise.presentation import rule_label
from chipwise.render import money, render
from chipwise.report.naming import report_link
from chipwise.settings import Settings
from chipwise.store import Session
from chipwise.store.repositories.digests import DigestRepository
from chipwise.store.repositories.findings import FindingRepository
from chipwise.store.repositories.messaging import OutboxRecord
from chipwise.store.repositories.remediations import RemediationRepository

FIRST_DIGEST_LOOKBACK = timedelta(days=1)  # "since the last digest" when there has never been one


@dataclass(frozen=True)
class PlannedMessage:
    """A message decided and rendered, not yet in the outbox (the arguments of ``outbox.enqueue``)."""

    channel: Channel
    kind: str
    recipient: str
    dedupe_key: str
    subject: str | None
    payload: dict[str, Any]
    account_id: str | None


UNDELIVERED_AFTER = timedelta(hours=2)  # a message not sent two hours after it was queued is worth an alarm


@dataclass
class NotifyReport:
    """What a notify run decided (``planned``: new messages only) and what the drain did."""

    dry_run: bool
    planned: list[PlannedMessage] = field(default_factory=list)
    enqueued: int = 0
    due: list[OutboxRecord] = field(default_factory=list)
    drained: DrainReport = field(default_factory=DrainReport)
    undelivered: int = 0  # messages queued over UNDELIVERED_AFTER ago and still not sent (the alarm's figure)
    replay: bool = False  # the ScanCompleted that started the run was notified before: nothing new planned

    def summary(self) -> dict[str, Any]:
        """Counts only (for log lines and the Lambda's result)."""
        return {
            "dry_run": self.dry_run,
            "planned": len(self.planned),
            "enqueued": self.enqueued,
            "already_due": len(self.due),  # dry runs only
            "undelivered": self.undelivered,
            "replay": self.replay,
            **self.drained.as_dict(),
        }

    def as_dict(self) -> dict[str, Any]:
        """The summary plus each planned message without its body (``chipwise notify --json``)."""
        planned = [{k: v for k, v in asdict(p).items() if k != "payload"} for p in self.planned]
        return {**self.summary(), "planned": planned}


def dedupe_key(*parts: str) -> str:
    """``parts`` joined with ":"; hashed at the end when an address would make it longer than the column."""
    key = ":".join(parts)
    if len(key) <= MAX_DEDUPE_KEY:
        return key
    return key[: MAX_DEDUPE_KEY - 65] + ":" + hashlib.sha256(key.encode()).hexdigest()


def slack_recipient(settings: Settings) -> str:
    return f"slack:{settings.slack_webhook_secret_name}"


# --- what the last digest was ------------------------------------------------------------------------------


def last_digest_at(session: Session, account_id: str) -> datetime | None:
    return DigestRepository(session).last_queued_at("digest", account_id)


def digest_sent_on(session: Session, account_id: str, day: str) -> bool:
    prefix = f"digest:{account_id}:{day}:"
    return DigestRepository(session).outbox_key_with_prefix(prefix)


# --- rendering ---------------------------------------------------------------------------------------------


def _digest_subject(digest: Digest) -> str:
    subject = f"Chipwise: {money(digest.total_monthly_waste_usd, 0)} a month to save in {digest.account_display}"
    return subject + (f", {len(digest.new)} new" if digest.new else "")  # ASCII: folds cleanly


def _alert_subject(alert: Alert) -> str:
    f = alert.finding
    return f"Chipwise alert: {money(f.monthly_savings_usd, 0)} a month on {f.resource_name}"


def digest_email(digest: Digest) -> tuple[str, dict[str, Any]]:
    """Subject and payload (both parts) of a digest email."""
    html = render("email/digest.html.j2", digest=digest)
    text = render("email/digest.txt.j2", digest=digest)
    return _digest_subject(digest), {"html": html, "text": text}


def alert_email(alert: Alert, owner: str | None = None) -> tuple[str, dict[str, Any]]:
    """Subject and payload of an alert; an owner's copy carries the opt-out line."""
    html = render("email/alert.html.j2", alert=alert, owner=owner)
    text = render("email/alert.txt.j2", alert=alert, owner=owner)
    return _alert_subject(alert), {"html": html, "text": text}


# --- planning ----------------------------------------------------------------------------------------------


def owner_allowed(address: str, settings: Settings) -> bool:
    """Whether an owner tag may route mail to ``address``: its domain is on the allow-list. The allow-list is the
    ``owner_email_domains`` setting, or by default the domains of the configured recipients less the public mailbox
    providers (``catalog/data/public_mail_domains.json``): with a gmail.com recipient, any gmail.com owner tag would
    otherwise receive costs and resource names. Tags are set by anyone who can tag a resource in a member account;
    without this, a tag could send account ids and costs anywhere."""
    domain = address.rsplit("@", 1)[-1].lower().rstrip(".")
    if settings.owner_email_domains:
        return domain in {d.lower().lstrip("@").rstrip(".") for d in settings.owner_email_domains}
    if domain in get_public_mail_domains():
        return False
    recipients = [*settings.email_recipients, settings.advisory_email or ""]
    return domain in {a.rsplit("@", 1)[-1].lower().rstrip(".") for a in recipients if "@" in a}


def routed_owners(owners: Sequence[str], settings: Settings) -> tuple[str, ...]:
    """The owners of one resource that mail may go to: allowed (:func:`owner_allowed`), at most
    ``max_owners_per_resource`` of them (the first named). The same cap for alerts and owner digests."""
    return tuple(o for o in owners if owner_allowed(o, settings))[: settings.max_owners_per_resource]


def _routed(snapshot: AccountSnapshot, settings: Settings) -> AccountSnapshot:
    """``snapshot`` with each finding's owners cut to :func:`routed_owners` (who owner digests go to)."""

    def line(finding: FindingLine) -> FindingLine:
        return replace(finding, owners=routed_owners(finding.owners, settings))

    return replace(
        snapshot,
        open=[line(f) for f in snapshot.open],
        resolved=[line(f) for f in snapshot.resolved],
        benchmarked=[replace(b, finding=line(b.finding)) for b in snapshot.benchmarked],
    )


def _email(kind: str, recipient: str, key: str, subject: str, body: dict[str, Any], account: str) -> PlannedMessage:
    payload = {**body, "to": [recipient]}
    return PlannedMessage("email", kind, recipient, key, subject, payload, account)


WEEKDAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")


def digest_due(now: datetime, settings: Settings, *, baseline: bool) -> bool:
    """A digest goes out every day, or on ``digest_weekday`` when weekly; an account's first (baseline) digest
    goes out whatever the day."""
    if baseline or settings.digest_schedule == "daily":
        return True
    return WEEKDAYS[now.weekday()] == settings.digest_weekday


def digest_messages(
    snapshot: AccountSnapshot,
    *,
    now: datetime,
    settings: Settings,
    slack_enabled: bool,
    baseline: bool = False,
    report_link: str | None = None,
    alerts_held: int = 0,
    precision: tuple[PrecisionLine, ...] = (),
    actions: tuple[ActionLine, ...] = (),
) -> list[PlannedMessage]:
    """Today's digest for the configured recipients and Slack, and each opted-in owner's share of it."""
    day = f"{now:%Y-%m-%d}"
    account = snapshot.account_id
    planned: list[PlannedMessage] = []

    def framed(digest: Digest) -> Digest:
        return replace(
            digest,
            baseline=baseline,
            report_link=report_link,
            alerts_held=alerts_held,
            precision=precision,
            actions=actions,
        )

    digest = framed(build_digest(snapshot, now=now))
    digest = replace(digest, owners_not_allowed=tuple(o for o in snapshot.owners() if not owner_allowed(o, settings)))
    if digest.has_news:
        subject, body = digest_email(digest)
        for recipient in settings.email_recipients:
            key = dedupe_key("digest", account, day, "email", recipient.lower())
            planned.append(_email("digest", recipient, key, subject, body, account))
        if slack_enabled:
            target = slack_recipient(settings)
            key = dedupe_key("digest", account, day, "slack", target)
            payload = slack_blocks.digest_message(digest)
            planned.append(PlannedMessage("slack", "digest", target, key, None, payload, account))
    configured = {r.lower() for r in settings.email_recipients}
    routed = _routed(snapshot, settings)  # allowed owners only, at most max_owners_per_resource per resource
    for owner in routed.owners():
        if owner in configured:
            continue  # they already get the whole account
        mine = framed(build_digest(routed.for_owner(owner), now=now, owner=owner))
        if mine.total_monthly_waste_usd > 0 or mine.resolved or mine.benchmarked:  # never "$0 to save"
            subject, body = digest_email(mine)
            key = dedupe_key("digest", account, day, "email", owner)
            planned.append(_email("digest", owner, key, subject, body, account))
    return planned


def alert_messages(
    snapshot: AccountSnapshot,
    lines: Sequence[FindingLine],
    *,
    now: datetime,
    settings: Settings,
    slack_enabled: bool,
) -> list[PlannedMessage]:
    """One alert per finding to the recipients, its (opted-in) owners and Slack."""
    planned: list[PlannedMessage] = []
    for line in lines:
        alert = build_alert(snapshot, line, now=now, threshold_usd=settings.alert_threshold_usd)
        base = ("alert", line.finding_id, f"{line.first_seen:%Y%m%dT%H%M%SZ}")
        subject, body = alert_email(alert)
        owners = list(routed_owners(line.owners, settings))
        recipients = dict.fromkeys([*(r.lower() for r in settings.email_recipients), *owners])
        for recipient in recipients:
            key = dedupe_key(*base, "email", recipient)
            payload_to = [recipient]
            message = _email("alert", recipient, key, subject, body, snapshot.account_id)
            if recipient in owners and recipient not in configured_recipients(settings):
                owner_body = alert_email(alert, owner=recipient)[1]
                message = replace(message, payload={**owner_body, "to": payload_to})
            planned.append(message)
        if slack_enabled:
            target = slack_recipient(settings)
            payload = slack_blocks.alert_message(alert, approvals=bool(settings.slack_signing_secret_name))
            key = dedupe_key(*base, "slack", target)
            planned.append(PlannedMessage("slack", "alert", target, key, None, payload, snapshot.account_id))
    return planned


def configured_recipients(settings: Settings) -> set[str]:
    return {r.lower() for r in settings.email_recipients}


def plan_notifications(
    session: Session,
    *,
    now: datetime,
    settings: Settings,
    slack_enabled: bool,
    accounts: Iterable[str] | None = None,
    digests: bool = True,
    alerts: bool = True,
    new_finding_ids: Iterable[str] = (),
) -> list[PlannedMessage]:
    """Every message that should exist now and is not in the outbox yet (nothing is written).

    An account's first notify run (no digest ever) sends one baseline digest and no alerts: everything found so
    far is news to nobody in particular. After that, new findings above the threshold are alerted, at most
    ``alert_max_per_run`` per run (largest saving first); the rest are counted in the digest, which lists them.
    """
    named = list(new_finding_ids)
    planned: list[PlannedMessage] = []
    alerted = 0
    precision = precision_lines(session, now=now, settings=settings)
    digest_only = {p.rule_id for p in precision if p.digest_only}
    for account in accounts if accounts is not None else account_ids_with_findings(session):
        last = last_digest_at(session, account)
        baseline = last is None
        since = last or now - FIRST_DIGEST_LOOKBACK
        snapshot = load_snapshot(
            session, account, since=since, owner_opt_in=settings.owner_opt_in, team_tag_keys=settings.team_tag_keys
        )
        held = 0
        if alerts and not baseline:
            lines = alert_candidates(snapshot, threshold_usd=settings.alert_threshold_usd, finding_ids=named)
            for line in lines:
                if line.rule_id in digest_only:
                    continue  # under the precision floor: the digest lists it
                messages = alert_messages(snapshot, [line], now=now, settings=settings, slack_enabled=slack_enabled)
                existing = existing_keys(session, [m.dedupe_key for m in messages])
                fresh = [m for m in messages if m.dedupe_key not in existing]
                if not fresh:
                    continue  # alerted by an earlier run
                if alerted >= settings.alert_max_per_run:
                    held += 1
                    continue
                alerted += 1
                planned += fresh
        due = (digests or baseline) and digest_due(now, settings, baseline=baseline)
        if due and not digest_sent_on(session, account, f"{now:%Y-%m-%d}"):
            link = report_link(session, account, settings.report_base_url)
            planned += digest_messages(
                snapshot,
                now=now,
                settings=settings,
                slack_enabled=slack_enabled,
                baseline=baseline,
                report_link=link,
                alerts_held=held,
                precision=precision,
                actions=action_lines(session, account, since),
            )
    existing = existing_keys(session, [p.dedupe_key for p in planned])
    return [p for p in planned if p.dedupe_key not in existing]


PRECISION_WINDOW = timedelta(days=30)
STATUSES = ("open", "suppressed", "resolved", "withdrawn")


def precision_lines(session: Session, *, now: datetime, settings: Settings) -> tuple[PrecisionLine, ...]:
    """Each alerted rule's precision over 30 days; a rule with enough decisions under ``alert_precision_floor``
    is digest-only until it recovers."""
    lines = []
    for p in RemediationRepository(session).alert_precision(now - PRECISION_WINDOW):
        held = (
            settings.alert_precision_floor > 0
            and p.precision is not None
            and p.decided >= settings.alert_precision_min_decisions
            and p.precision < settings.alert_precision_floor
        )
        lines.append(
            PrecisionLine(p.rule_id, rule_label(p.rule_id), p.alerted, p.acted, p.dismissed, p.precision, held)
        )
    return tuple(lines)


def action_lines(session: Session, account_id: str, since: datetime) -> tuple[ActionLine, ...]:
    """The account's applies, refusals, rollbacks and dismissals since ``since``."""
    names = {f.id: f.resource_name for f in FindingRepository(session).find(account_id=account_id, statuses=STATUSES)}
    return tuple(
        ActionLine(
            at=r.created_at,
            resource_name=names.get(r.finding_id, r.resource_arn),
            rule_label=rule_label(r.rule_id),
            event=f"{r.event} ({r.action})",
            status=r.status,
            who=r.actor,
        )
        for r in RemediationRepository(session).since(since, account_id)
    )


def enqueue_planned(session: Session, planned: Iterable[PlannedMessage], *, now: datetime) -> int:
    """Write planned messages to the outbox; returns how many were new."""
    count = 0
    for p in planned:  # a planned message's fields are enqueue's arguments, name for name
        row = enqueue(session, **{f.name: getattr(p, f.name) for f in fields(p)}, now=now)
        count += row is not None
    return count
