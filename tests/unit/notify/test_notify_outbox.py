"""The outbox: enqueue once per dedupe key, send once, retry with backoff, fail after N attempts."""

from __future__ import annotations

from datetime import timedelta

import pytest
from notify_factories import NOW, RecordingSender
from sqlalchemy import func, select
from sqlalchemy.orm import Session, sessionmaker

from chipwise.errors import InvalidInput
from chipwise.notify.outbox import (
    LEASE,
    OutboxStatus,
    SendError,
    _claim,
    backoff,
    drain,
    enqueue,
    existing_keys,
    outbox_status,
    requeue_failed,
    undelivered,
)
from chipwise.store.tables import OutboxMessage

EMAIL = {"html": "<p>hello</p>", "text": "hello"}


def _enqueue_email(session: Session, key: str = "k1", recipient: str = "a@example.com") -> OutboxMessage | None:
    return enqueue(
        session,
        channel="email",
        kind="digest",
        recipient=recipient,
        dedupe_key=key,
        subject="Subject",
        payload=dict(EMAIL),
        account_id="123456789012",
        now=NOW,
    )


def _row(factory: sessionmaker[Session], message_id: int) -> OutboxMessage:
    with factory() as session:
        row = session.get(OutboxMessage, message_id)
        assert row is not None
        return row


def test_enqueue_stores_one_row_per_dedupe_key(session_factory: sessionmaker[Session]) -> None:
    # Given a message enqueued once
    with session_factory.begin() as session:
        first = _enqueue_email(session)
        assert first is not None
    # When the same key is enqueued again (another run, another day)
    with session_factory.begin() as session:
        again = _enqueue_email(session)
        count = session.scalar(select(func.count()).select_from(OutboxMessage))
    # Then the second call is a no-op
    assert again is None
    assert count == 1
    assert first.status == "pending" and first.attempts == 0
    assert first.payload["to"] == ["a@example.com"]  # "to" defaults to the recipient


def test_enqueue_rejects_bad_payloads(session: Session) -> None:
    # Given payloads that the senders could not send
    cases = [
        ("email", None, dict(EMAIL), "subject"),
        ("email", "S", {"html": "<p>x</p>"}, "text"),
        ("email", "S", {**EMAIL, "to": ["not-an-address"]}, "to"),
        ("slack", None, {"blocks": []}, "text"),
        ("slack", None, {"text": "t", "blocks": [{"type": "divider"}] * 51}, "blocks"),
        (
            "slack",
            None,
            {"text": "t", "blocks": [{"type": "section", "text": {"type": "mrkdwn", "text": "x" * 3001}}]},
            "3001",
        ),
        ("fax", "S", dict(EMAIL), "unknown channel"),
    ]
    with pytest.raises(InvalidInput, match="dedupe key is 1 to 256 characters"):
        enqueue(
            session,
            channel="email",
            kind="k",
            recipient="a@example.com",
            dedupe_key="k" * 257,
            subject="S",
            payload=dict(EMAIL),
        )
    for channel, subject, payload, expected in cases:
        # When each is enqueued / Then it is refused with a reason naming the problem
        with pytest.raises(InvalidInput, match=expected):
            enqueue(
                session,
                channel=channel,  # type: ignore[arg-type]
                kind="digest",
                recipient="a@example.com",
                dedupe_key=f"bad-{expected}",
                subject=subject,
                payload=payload,
            )
    assert session.scalar(select(func.count()).select_from(OutboxMessage)) == 0


def test_drain_sends_each_message_once(session_factory: sessionmaker[Session]) -> None:
    # Given two pending emails
    with session_factory.begin() as session:
        _enqueue_email(session, "k1", "a@example.com")
        _enqueue_email(session, "k2", "b@example.com")
    sender = RecordingSender()
    # When the outbox is drained twice
    first = drain(session_factory, now=NOW, senders={"email": sender})
    second = drain(session_factory, now=NOW + timedelta(hours=1), senders={"email": sender})
    # Then each message went out exactly once and is marked sent
    assert sorted(r for _, r, _ in sender.sent) == ["a@example.com", "b@example.com"]
    assert len(first.sent) == 2 and second.sent == []
    for message_id in first.sent:
        row = _row(session_factory, message_id)
        assert row.status == "sent" and row.sent_at == NOW and row.attempts == 1


def test_a_failure_stays_pending_with_backoff_and_is_sent_later(session_factory: sessionmaker[Session]) -> None:
    # Given a message whose first send fails
    with session_factory.begin() as session:
        message = _enqueue_email(session)
        assert message is not None
    sender = RecordingSender(SendError("SES Throttling: slow down"))
    # When the outbox is drained
    report = drain(session_factory, now=NOW, senders={"email": sender}, retry_seconds=60)
    # Then the message is pending, with the error and the next attempt a minute later
    row = _row(session_factory, message.id)
    assert report.retrying == [message.id] and report.errors[message.id] == "SES Throttling: slow down"
    assert (row.status, row.attempts, row.last_error) == ("pending", 1, "SES Throttling: slow down")
    assert row.next_attempt_at == NOW + timedelta(seconds=60)
    # ...a drain before that time leaves it alone, a drain after it sends it
    assert drain(session_factory, now=NOW + timedelta(seconds=30), senders={"email": sender}).sent == []
    assert drain(session_factory, now=NOW + timedelta(seconds=61), senders={"email": sender}).sent == [message.id]
    assert _row(session_factory, message.id).status == "sent"


def test_failed_after_max_attempts_with_doubling_backoff(session_factory: sessionmaker[Session]) -> None:
    # Given a message that can never be sent
    with session_factory.begin() as session:
        message = _enqueue_email(session)
        assert message is not None
    sender = RecordingSender(*(SendError(f"boom {i}") for i in range(10)))
    when, delays = NOW, []
    # When it is drained whenever it is due, three attempts allowed
    for _ in range(3):
        drain(session_factory, now=when, senders={"email": sender}, max_attempts=3, retry_seconds=10)
        row = _row(session_factory, message.id)
        delays.append(row.next_attempt_at - when)
        when = row.next_attempt_at
    # Then the delays doubled and the third failure marked it failed for good
    assert delays[:2] == [timedelta(seconds=10), timedelta(seconds=20)]
    row = _row(session_factory, message.id)
    assert (row.status, row.attempts, row.last_error) == ("failed", 3, "boom 2")
    assert drain(session_factory, now=when + timedelta(days=1), senders={"email": sender}).sent == []
    status = outbox_status_of(session_factory)
    assert [m.id for m in status.failed] == [message.id]
    assert status.counts == {("email", "failed"): 1}


def test_an_outage_of_ten_drains_delays_messages_and_loses_none(session_factory: sessionmaker[Session]) -> None:
    # Given three queued messages and SES down for ten drains, each drain when the messages are due again
    with session_factory.begin() as session:
        ids = [m.id for k in ("a", "b", "c") if (m := _enqueue_email(session, key=k, recipient=f"{k}@example.com"))]
    outage = RecordingSender(*(SendError("SES ServiceUnavailable") for _ in range(30)))
    when = NOW
    for _ in range(10):
        drain(session_factory, now=when, senders={"email": outage})
        rows = [_row(session_factory, i) for i in ids]
        assert {r.status for r in rows} == {"pending"}  # never parked as failed by a short outage
        when = max(r.next_attempt_at for r in rows)
    # ten failures: 60 s doubling (60 x 511 s = 8.5 h) then the 6-hour cap: 14.5 hours, inside the 48-hour window
    assert when - NOW == timedelta(seconds=60 * 511) + timedelta(hours=6)
    with session_factory() as session:
        assert undelivered(session, now=when, older_than=timedelta(hours=2)) == 3  # what the alarm sees
    # When SES is back
    back = RecordingSender()
    drain(session_factory, now=when, senders={"email": back})
    drain(session_factory, now=when + timedelta(hours=1), senders={"email": back})
    # Then every message is delivered exactly once
    assert sorted(i for i, _, _ in back.sent) == sorted(ids)
    assert {_row(session_factory, i).status for i in ids} == {"sent"}


def test_a_message_undelivered_past_the_give_up_window_fails(session_factory: sessionmaker[Session]) -> None:
    with session_factory.begin() as session:
        message = _enqueue_email(session)
        assert message is not None
    sender = RecordingSender(SendError("down"), SendError("still down"))
    drain(session_factory, now=NOW, senders={"email": sender}, give_up_after=timedelta(hours=48))
    assert _row(session_factory, message.id).status == "pending"
    drain(session_factory, now=NOW + timedelta(hours=49), senders={"email": sender}, give_up_after=timedelta(hours=48))
    assert _row(session_factory, message.id).status == "failed"


def outbox_status_of(factory: sessionmaker[Session]) -> OutboxStatus:
    with factory() as session:
        return outbox_status(session)


def test_permanent_errors_fail_at_once_and_retry_after_is_honoured(session_factory: sessionmaker[Session]) -> None:
    # Given two messages: one refused for good, one rate limited for ten minutes
    with session_factory.begin() as session:
        refused = _enqueue_email(session, "k1")
        limited = _enqueue_email(session, "k2")
        assert refused is not None and limited is not None
    sender = RecordingSender(SendError("invalid_blocks", permanent=True), SendError("429", retry_after=600))
    # When drained
    report = drain(session_factory, now=NOW, senders={"email": sender}, retry_seconds=60)
    # Then the refused one is failed after one attempt and the limited one waits for its Retry-After
    assert report.failed == [refused.id] and report.retrying == [limited.id]
    assert _row(session_factory, refused.id).status == "failed"
    assert _row(session_factory, limited.id).next_attempt_at == NOW + timedelta(seconds=600)


def test_a_crashing_sender_does_not_stop_the_others(session_factory: sessionmaker[Session]) -> None:
    # Given two messages and a sender that crashes on the first
    with session_factory.begin() as session:
        first = _enqueue_email(session, "k1")
        second = _enqueue_email(session, "k2")
        assert first is not None and second is not None
    sender = RecordingSender(RuntimeError("bug"))
    # When drained
    report = drain(session_factory, now=NOW, senders={"email": sender})
    # Then the crash is recorded on its row and the other one is sent
    assert report.sent == [second.id]
    assert _row(session_factory, first.id).last_error == "RuntimeError: bug"
    assert _row(session_factory, first.id).status == "pending"


def test_only_channels_with_a_sender_and_only_ids_asked_for(session_factory: sessionmaker[Session]) -> None:
    # Given an email and a Slack message
    with session_factory.begin() as session:
        mail = _enqueue_email(session, "k1")
        chat = enqueue(
            session,
            channel="slack",
            kind="alert",
            recipient="slack:x",
            dedupe_key="k2",
            subject=None,
            payload={"text": "hi", "blocks": []},
            now=NOW,
        )
        other = _enqueue_email(session, "k3")
        assert mail is not None and chat is not None and other is not None
    sender = RecordingSender()
    # When drained with an email sender only, for one id
    report = drain(session_factory, now=NOW, senders={"email": sender}, ids=[mail.id])
    # Then only that email went out; Slack waits for its sender
    assert report.sent == [mail.id]
    assert _row(session_factory, chat.id).status == "pending"
    assert _row(session_factory, other.id).status == "pending"


def test_a_claimed_row_is_invisible_to_a_second_drain(session_factory: sessionmaker[Session]) -> None:
    # Given a message claimed by one drain (which is still sending it)
    with session_factory.begin() as session:
        message = _enqueue_email(session)
        assert message is not None
    assert _claim(session_factory, message.id, NOW) is not None
    # When another drain tries at the same time / after the lease
    assert _claim(session_factory, message.id, NOW) is None
    # Then it can take it only after the lease has run out (the first drain died)
    assert _claim(session_factory, message.id, NOW + LEASE) is not None
    assert _row(session_factory, message.id).attempts == 2


def test_requeue_failed_and_existing_keys(session_factory: sessionmaker[Session]) -> None:
    # Given a failed message
    with session_factory.begin() as session:
        message = _enqueue_email(session)
        assert message is not None
    drain(session_factory, now=NOW, senders={"email": RecordingSender(SendError("x", permanent=True))})
    # When it is requeued
    with session_factory.begin() as session:
        assert requeue_failed(session, now=NOW) == 1
        assert existing_keys(session, ["k1", "nope"]) == {"k1"}
    # Then it has a fresh set of attempts and the next drain sends it
    row = _row(session_factory, message.id)
    assert (row.status, row.attempts) == ("pending", 0)
    assert drain(session_factory, now=NOW, senders={"email": RecordingSender()}).sent == [message.id]


def test_backoff_doubles_and_is_capped() -> None:
    assert [backoff(n, 60).total_seconds() for n in (1, 2, 3, 4)] == [60, 120, 240, 480]
    assert backoff(30, 60) == timedelta(hours=6)
