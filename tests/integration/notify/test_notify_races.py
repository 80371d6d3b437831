"""Two notify runs at once (issue 26 item 7): the same schedule twice, or the same ScanCompleted twice, in
parallel: every message is enqueued once and sent once. SQLite always, PostgreSQL too."""

from __future__ import annotations

import threading
from collections import Counter
from collections.abc import Callable
from datetime import timedelta
from decimal import Decimal
from typing import Any

from notify_factories import NOW, RecordingSender, baseline_sent, estate
from sqlalchemy import select
from sqlalchemy.orm import Session, sessionmaker

from chipwise.notify.runner import NotifyReport
from chipwise.pipeline.notify import run_notify
from chipwise.settings import Settings
from chipwise.store.tables import NotifiedScan, OutboxMessage


def _settings(db_url: str) -> Settings:
    return Settings(
        database_url=db_url,
        email_recipients=["finops@example.com"],
        slack_webhook_secret_name="chipwise/slack",
        alert_threshold_usd=Decimal("500"),
    )


def _twice(run: Callable[[dict[str, RecordingSender]], NotifyReport]) -> list[tuple[NotifyReport, RecordingSender]]:
    start = threading.Barrier(2)
    results: list[tuple[NotifyReport, RecordingSender]] = []
    errors: list[BaseException] = []

    def one() -> None:
        sender = RecordingSender()
        start.wait()
        try:
            results.append((run({"email": sender, "slack": sender}), sender))
        except BaseException as exc:  # a crash is what the test reports
            errors.append(exc)

    threads = [threading.Thread(target=one) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(120)
    assert errors == []
    return results


def _outbox(factory: sessionmaker[Session]) -> list[OutboxMessage]:
    with factory() as session:
        return list(session.scalars(select(OutboxMessage).where(OutboxMessage.recipient != "earlier@example.com")))


def test_two_schedule_runs_at_once_enqueue_and_send_each_message_once(
    db_url: str, session_factory: sessionmaker[Session]
) -> None:
    # Given the estate past its baseline: a digest and alerts are due
    with session_factory.begin() as session:
        estate(session)
        baseline_sent(session, NOW - timedelta(days=1))
    # When two notify runs start at the same moment
    results = _twice(
        lambda senders: run_notify(_settings(db_url), now=NOW, senders=senders, session_factory=session_factory)
    )
    # Then each message is in the outbox once and was sent once, by one of the runs
    rows = _outbox(session_factory)
    assert len(rows) == 7 and len({r.dedupe_key for r in rows}) == 7
    sent = Counter(message_id for _, sender in results for message_id, _, _ in sender.sent)
    assert sorted(sent) == sorted(r.id for r in rows) and set(sent.values()) == {1}
    assert sum(report.enqueued for report, _ in results) == 7


def test_the_same_scan_completed_twice_at_once_is_decided_once(
    db_url: str, session_factory: sessionmaker[Session]
) -> None:
    # Given the account past its baseline and one scan naming the big new finding
    with session_factory.begin() as session:
        findings = estate(session)
        baseline_sent(session, NOW - timedelta(days=1))
    big: Any = findings["big_new"].id
    # When its ScanCompleted is handled twice at the same moment
    results = _twice(
        lambda senders: run_notify(
            _settings(db_url),
            now=NOW,
            senders=senders,
            session_factory=session_factory,
            accounts=["123456789012"],
            digests=False,
            new_finding_ids=[big],
            scan=("scan-1", "123456789012"),
        )
    )
    # Then one run decided (the other saw a replay), the alerts were enqueued and sent once, the scan recorded once
    assert sorted(report.replay for report, _ in results) == [False, True]
    rows = _outbox(session_factory)
    assert sorted(r.kind for r in rows) == ["alert"] * 3
    assert sum(len(sender.sent) for _, sender in results) == 3
    with session_factory() as session:
        assert session.scalars(select(NotifiedScan.scan_id)).all() == ["scan-1"]
