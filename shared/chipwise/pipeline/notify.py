"""Notifications: plan what is due (digests, alerts), enqueue it in the outbox and send from it.

The ``notify`` Lambda (its daily schedule, or a ``ScanCompleted`` event for that account's alerts) and
``chipwise notify`` both call :func:`send_notifications`; :func:`run_notify` holds the transaction (plan and
enqueue together, then drain), :mod:`chipwise.notify.runner` what is planned (one digest per account), or
:mod:`chipwise.notify.teams` for an organisation (one digest per team, ``digest_scope``). ``chipwise notify status`` and
``retry`` read and requeue the outbox through :func:`outbox_view` and :func:`retry_failed`.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from datetime import datetime, timedelta
from typing import TYPE_CHECKING

from chipwise.clock import utcnow
from chipwise.models.results import NotifyOutcome
from chipwise.notify.outbox import OutboxStatus, Sender, drain, due_ids, outbox_status, requeue_failed, undelivered
from chipwise.notify.runner import UNDELIVERED_AFTER, NotifyReport, enqueue_planned, plan_notifications
from chipwise.notify.teams import plan_team_notifications, team_scope
from chipwise.observability import logger
from chipwise.pipeline._gc import fewer_collections
from chipwise.pipeline._store import store_scope
from chipwise.settings import Settings, get_settings
from chipwise.store import SessionFactory, discard, get_session_factory, transaction
from chipwise.store.repositories.messaging import OutboxRepository
from chipwise.store.repositories.notified import NotifiedScanRepository

if TYPE_CHECKING:
    from chipwise.models.events import NotifyTrigger


def send_notifications(
    settings: Settings,
    *,
    accounts: Iterable[str] | None = None,
    digests: bool = True,
    new_finding_ids: Iterable[str] = (),
    dry_run: bool = False,
    now: datetime | None = None,
    scan: tuple[str, str] | None = None,
    team: str | None = None,
) -> NotifyReport:
    """Plan, enqueue (in one transaction) and drain; ``dry_run`` plans and lists what is due, writing nothing.
    ``scan``: the (scan id, account id) of the ``ScanCompleted`` that started the run: a replay of it sends nothing.
    ``team``: that team's digest and alerts (the organisation's team scope, whatever ``digest_scope`` says)."""
    with fewer_collections():  # as a store_scope's use case (the objects the imports made are not walked)
        return run_notify(
            settings,
            team=team,
            accounts=accounts,
            digests=digests,
            new_finding_ids=new_finding_ids,
            dry_run=dry_run,
            now=now,
            scan=scan,
        )


def notify_on(trigger: NotifyTrigger, settings: Settings | None = None) -> NotifyOutcome:
    """The ``notify`` Lambda: a schedule sends digests and alerts for every account, a ``ScanCompleted`` event
    that account's alerts. (The event models are imported here: the command line's ``notify`` never parses one.)"""
    from chipwise.models.events import ScanCompletedEvent

    settings = settings or get_settings()
    event = trigger.root
    if isinstance(event, ScanCompletedEvent):
        scan = event.detail
        report = send_notifications(
            settings,
            accounts=[scan.account_id],
            digests=False,
            new_finding_ids=scan.new_finding_ids,
            scan=(scan.scan_id, scan.account_id),
        )
        return NotifyOutcome(trigger="scan_completed", account_id=scan.account_id, **report.summary())
    return NotifyOutcome(trigger="schedule", **send_notifications(settings).summary())


def default_senders(settings: Settings) -> dict[str, Sender]:
    """SES email always; Slack when a webhook secret is configured."""
    from chipwise.notify.email import ses_sender
    from chipwise.notify.slack import slack_sender

    senders: dict[str, Sender] = {"email": ses_sender(settings)}
    slack = slack_sender(settings)
    if slack is not None:
        senders["slack"] = slack
    return senders


def run_notify(
    settings: Settings,
    *,
    now: datetime | None = None,
    dry_run: bool = False,
    senders: Mapping[str, Sender] | None = None,
    session_factory: SessionFactory | None = None,
    accounts: Iterable[str] | None = None,
    digests: bool = True,
    alerts: bool = True,
    new_finding_ids: Iterable[str] = (),
    scan: tuple[str, str] | None = None,
    team: str | None = None,
) -> NotifyReport:
    """Plan, enqueue (in one transaction) and drain. ``dry_run`` plans and lists what is due, writing nothing.

    ``scan``: the (scan id, account id) of the ``ScanCompleted`` that started the run. The decision is recorded
    with the scan id in the transaction that enqueues its messages, so a replay of that event (EventBridge delivers
    at least once: a replayed first scan would otherwise turn the quiet baseline into alerts) plans nothing new."""
    when = now or utcnow()
    factory = session_factory or get_session_factory(settings.database_url)
    slack_enabled = bool(settings.slack_webhook_secret_name) if senders is None else "slack" in senders
    report = NotifyReport(dry_run=dry_run)
    with transaction(factory) as session:
        notified = NotifiedScanRepository(session)
        if scan is not None and (notified.notified(scan[0]) if dry_run else not notified.claim(scan[0], scan[1], when)):
            report.replay = True
            logger().info("scan already notified: a replayed ScanCompleted plans nothing", extra={"scan_id": scan[0]})
            accounts, digests, alerts = [], False, False
        if team is not None or team_scope(session, settings, accounts):  # an organisation: a digest per team
            report.planned = plan_team_notifications(
                session,
                now=when,
                settings=settings,
                slack_enabled=slack_enabled,
                digests=digests,
                alerts=alerts,
                team=team,
            )
        else:
            report.planned = plan_notifications(
                session,
                now=when,
                settings=settings,
                slack_enabled=slack_enabled,
                accounts=accounts,
                digests=digests,
                alerts=alerts,
                new_finding_ids=new_finding_ids,
            )
        if dry_run:  # also list what is already waiting in the outbox, then write nothing
            channels = ["email", "slack"] if slack_enabled else ["email"]
            due = due_ids(session, now=when, channels=channels, limit=500)
            report.due = [m for m in (OutboxRepository(session).get(i) for i in due) if m is not None]
            discard(session)
            return report
        report.enqueued = enqueue_planned(session, report.planned, now=when)
    report.drained = drain(
        factory,
        now=when,
        senders=senders if senders is not None else default_senders(settings),
        max_attempts=settings.notify_max_attempts,
        retry_seconds=settings.notify_retry_seconds,
        give_up_after=timedelta(hours=settings.notify_give_up_hours),
    )
    with factory() as session:
        report.undelivered = undelivered(session, now=when, older_than=UNDELIVERED_AFTER)
    logger().info("notify finished", extra=report.summary())
    return report


def outbox_view() -> OutboxStatus:
    """``chipwise notify status``: counts by channel and status, the failed messages and what is waiting."""
    with store_scope() as session:
        return outbox_status(session)


def retry_failed(ids: list[int] | None) -> int:
    """``chipwise notify retry``: give failed messages (these ids, or all) a fresh set of attempts."""
    with store_scope() as session:
        return requeue_failed(session, ids)
