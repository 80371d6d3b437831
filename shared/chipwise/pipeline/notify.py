"""Notifications: plan what is due (digests, alerts), enqueue it in the outbox and send from it.

The ``notify`` Lambda (its daily schedule, or a ``ScanCompleted`` event for that account's alerts) and
``chipwise notify`` both call :func:`send_notifications`.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime

from chipwise.models.events import NotifyTrigger, ScanCompletedEvent
from chipwise.models.results import NotifyOutcome
from chipwise.notify.runner import NotifyReport, run_notify
from chipwise.settings import Settings, get_settings


def send_notifications(
    settings: Settings,
    *,
    accounts: Iterable[str] | None = None,
    digests: bool = True,
    new_finding_ids: Iterable[str] = (),
    dry_run: bool = False,
    now: datetime | None = None,
    scan: tuple[str, str] | None = None,
) -> NotifyReport:
    """Plan, enqueue (in one transaction) and drain; ``dry_run`` plans and lists what is due, writing nothing.
    ``scan``: the (scan id, account id) of the ``ScanCompleted`` that started the run: a replay of it sends nothing."""
    return run_notify(
        settings,
        accounts=accounts,
        digests=digests,
        new_finding_ids=new_finding_ids,
        dry_run=dry_run,
        now=now,
        scan=scan,
    )


def notify_on(trigger: NotifyTrigger, settings: Settings | None = None) -> NotifyOutcome:
    """The ``notify`` Lambda: a schedule sends digests and alerts for every account, a ``ScanCompleted`` event
    that account's alerts."""
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
