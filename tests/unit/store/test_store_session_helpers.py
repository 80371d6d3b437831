"""What the store gives the code above it instead of SQLAlchemy: a guarded transaction that turns a database error
into StoreUnavailable (its type only), a savepoint, a dry run's discard, and the CLI's database messages."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from sqlalchemy import exc as sae
from sqlalchemy.orm import Session, sessionmaker

from chipwise.errors import StoreUnavailable
from chipwise.store import guarded_scope, reading, transaction
from chipwise.store.errors import database_error_message
from chipwise.store.repositories import rows
from chipwise.store.repositories.intake import IntakeRepository
from chipwise.store.repositories.messaging import OutboxRepository
from chipwise.store.tables import Account, IntakeSubmission

NOW = datetime(2026, 11, 20, 9, 30, tzinfo=UTC)


def _submission(submission_id: str, email: str) -> IntakeSubmission:
    return IntakeSubmission(id=submission_id, received_at=NOW, company_name="Acme", contact_email=email)


def test_a_database_error_in_a_guarded_scope_is_store_unavailable_without_its_parameters(
    db_url: str, session_factory: sessionmaker[Session]
) -> None:
    # Given a submission stored once
    with guarded_scope(db_url, "the plan store") as session:
        rows.add(session, _submission("s-1", "ada@example.com"))
    # When the same primary key is written again (the database refuses it)
    with pytest.raises(StoreUnavailable) as raised, guarded_scope(db_url, "the plan store") as session:
        rows.add(session, _submission("s-1", "grace@example.com"), flush=True)
    # Then the message names what failed and the error's type, never the statement's values
    driver_error = "UniqueViolation" if db_url.startswith("postgresql") else "IntegrityError"
    assert str(raised.value) == f"the plan store cannot be used: {driver_error}"
    assert "grace@example.com" not in str(raised.value) and raised.value.__cause__ is None
    # and nothing of the failed transaction was kept
    with reading(session_factory) as session:
        stored = rows.get(session, IntakeSubmission, "s-1")
        assert stored is not None and stored.contact_email == "ada@example.com"


def test_a_savepoint_undoes_its_block_only_when_it_raises(session_factory: sessionmaker[Session]) -> None:
    # Given a transaction that adds one account, then one in a savepoint that raises, then one in a savepoint that
    # ends normally
    with transaction(session_factory) as session:
        rows.add(session, Account(account_id="111111111111"))
        with pytest.raises(RuntimeError), rows.savepoint(session):
            rows.add(session, Account(account_id="222222222222"), flush=True)
            raise RuntimeError("AWS said no")
        with rows.savepoint(session):
            rows.add(session, Account(account_id="333333333333"), flush=True)
    # Then the raising block's account is gone and the others are stored
    with reading(session_factory) as session:
        stored = {a for a in ("111111111111", "222222222222", "333333333333") if rows.get(session, Account, a)}
    assert stored == {"111111111111", "333333333333"}


def test_discard_writes_nothing_and_keeps_what_was_read_readable(session_factory: sessionmaker[Session]) -> None:
    with transaction(session_factory) as session:
        rows.add(session, Account(account_id="111111111111", name="kept"))
    with transaction(session_factory) as session:
        loaded = rows.get(session, Account, "111111111111")
        rows.add(session, Account(account_id="222222222222"))
        rows.discard(session)
    assert loaded is not None and loaded.name == "kept"
    with reading(session_factory) as session:
        assert rows.get(session, Account, "222222222222") is None


def test_a_limit_gives_its_places_then_refuses(session_factory: sessionmaker[Session]) -> None:
    window = NOW.replace(minute=0)
    with transaction(session_factory) as session:
        taken = [IntakeRepository(session).take_limit("client", "k" * 64, window, limit=2) for _ in range(3)]
        other_window = IntakeRepository(session).take_limit("client", "k" * 64, window + timedelta(hours=1), limit=2)
    assert taken == [True, True, False] and other_window is True


def test_an_outbox_key_is_stored_once(session_factory: sessionmaker[Session]) -> None:
    values = {
        "channel": "email",
        "kind": "digest",
        "recipient": "ops@example.com",
        "dedupe_key": "digest:111111111111:2026-11-20:x",
        "subject": "Digest",
        "payload": {"html": "<p>h</p>", "text": "h", "to": ["ops@example.com"]},
        "status": "pending",
        "attempts": 0,
        "created_at": NOW,
        "next_attempt_at": NOW,
    }
    with transaction(session_factory) as session:
        first = OutboxRepository(session).insert(values)
        again = OutboxRepository(session).insert({**values, "subject": "Digest again"})
        keys = OutboxRepository(session).keys([values["dedupe_key"], "digest:other"])
    assert first is not None and first.subject == "Digest" and again is None
    assert keys == {values["dedupe_key"]}


def test_the_cli_reads_database_failures_in_one_line() -> None:
    refused = sae.OperationalError("SELECT 1", {}, Exception("connection refused\nis the server running?"))
    assert database_error_message(refused) == (
        "the database failed: connection refused (check CHIPWISE_DATABASE_URL and that the server is running)"
    )
    bad_url = sae.ArgumentError("Could not parse SQLAlchemy URL from string 'nope'")
    assert database_error_message(bad_url) == (
        "invalid setting database_url (CHIPWISE_DATABASE_URL): Could not parse SQLAlchemy URL from string 'nope'"
    )
    assert database_error_message(ValueError("not a database error")) is None
