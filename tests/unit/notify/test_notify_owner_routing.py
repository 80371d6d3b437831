"""Owner routing (issue 26 item 5): public mailbox providers are never allowed by default, whatever domain a
recipient uses; the per-resource owner cap applies to owner digests as to alerts."""

from __future__ import annotations

from datetime import timedelta
from decimal import Decimal
from typing import Any

from notify_factories import NOW, RecordingSender, add_account, add_finding, add_resource, baseline_sent
from sqlalchemy import select
from sqlalchemy.orm import Session, sessionmaker

from chipwise.catalog import get_public_mail_domains
from chipwise.notify.runner import owner_allowed
from chipwise.pipeline.notify import run_notify
from chipwise.settings import Settings
from chipwise.store.tables import OutboxMessage


def _settings(db_url: str, **overrides: Any) -> Settings:
    values: dict[str, Any] = {
        "database_url": db_url,
        "email_recipients": ["finops@example.com"],
        "alert_threshold_usd": Decimal("500"),
    }
    values.update(overrides)
    return Settings(**values)


def _emails(factory: sessionmaker[Session]) -> list[OutboxMessage]:
    with factory() as session:
        emails = session.scalars(select(OutboxMessage).where(OutboxMessage.channel == "email"))
        return [m for m in emails if m.recipient != "earlier@example.com"]  # the baseline digest of the factory


def test_the_public_mail_domains_file_has_its_source() -> None:
    domains = get_public_mail_domains()
    assert {"gmail.com", "outlook.com", "yahoo.com", "hotmail.com", "icloud.com"} <= domains.domains
    source = domains.sources[domains.source]
    assert source.url is not None and source.url.startswith("https://github.com/Kikobeats/free-email-domains/")


def test_a_gmail_owner_tag_with_a_gmail_recipient_gets_no_email(
    db_url: str, session_factory: sessionmaker[Session]
) -> None:
    # Given a recipient at gmail.com, and a resource tagged with a stranger's gmail.com address (opted in) with a
    # new $5,000 finding and an older one (a digest and an alert would both reach an allowed owner)
    with session_factory.begin() as session:
        add_account(session)
        baseline_sent(session, NOW - timedelta(days=1))
        tags = {"chipwise:owner": "stranger@gmail.com", "chipwise:notify": "yes"}
        add_resource(session, "tagged-gmail", tags=tags)
        add_finding(session, "tagged-gmail", savings="5000", first_seen=NOW - timedelta(hours=1))
    settings = _settings(db_url, email_recipients=["founder@gmail.com"])
    # When notify runs
    run_notify(settings, now=NOW, senders={"email": RecordingSender()}, session_factory=session_factory)
    # Then the recipient gets the alert and the digest, the gmail.com owner 0 emails
    emails = _emails(session_factory)
    assert sorted((m.kind, m.recipient) for m in emails) == [
        ("alert", "founder@gmail.com"),
        ("digest", "founder@gmail.com"),
    ]
    assert not owner_allowed("stranger@gmail.com", settings)
    # And a domain set explicitly is still allowed on purpose
    assert owner_allowed("stranger@gmail.com", _settings(db_url, owner_email_domains=["gmail.com"]))


def test_eight_owners_of_one_resource_get_at_most_the_cap_of_owner_digests(
    db_url: str, session_factory: sessionmaker[Session]
) -> None:
    # Given one resource whose owner tag names 8 addresses at the recipients' domain, with an older finding (in
    # the digest, not alerted) and a cap of 3 owners a resource
    owners = [f"owner{n}@example.com" for n in range(8)]
    with session_factory.begin() as session:
        add_account(session)
        baseline_sent(session, NOW - timedelta(days=1))
        add_resource(session, "shared-endpoint", tags={"owner": ", ".join(owners), "chipwise:notify": "yes"})
        add_finding(session, "shared-endpoint", savings="300", first_seen=NOW - timedelta(hours=2), action="rightsize")
    settings = _settings(db_url, max_owners_per_resource=3)
    # When notify runs
    run_notify(settings, now=NOW, senders={"email": RecordingSender()}, session_factory=session_factory)
    # Then the first 3 owners get their digest, the 5 others none
    digests = sorted(m.recipient for m in _emails(session_factory) if m.kind == "digest")
    assert digests == ["finops@example.com", "owner0@example.com", "owner1@example.com", "owner2@example.com"]


def test_eight_owners_of_one_alerted_resource_get_at_most_the_cap_of_emails(
    db_url: str, session_factory: sessionmaker[Session]
) -> None:
    # Given the same resource with a new $5,000 finding (an alert and a digest)
    owners = [f"owner{n}@example.com" for n in range(8)]
    with session_factory.begin() as session:
        add_account(session)
        baseline_sent(session, NOW - timedelta(days=1))
        add_resource(session, "shared-endpoint", tags={"owner": ", ".join(owners), "chipwise:notify": "yes"})
        add_finding(session, "shared-endpoint", savings="5000", first_seen=NOW - timedelta(hours=1))
    run_notify(
        _settings(db_url, max_owners_per_resource=3),
        now=NOW,
        senders={"email": RecordingSender()},
        session_factory=session_factory,
    )
    # Then every email to an owner goes to one of the first 3 (an alert and a digest each)
    to_owners = sorted(m.recipient for m in _emails(session_factory) if m.recipient.startswith("owner"))
    assert to_owners == sorted(["owner0@example.com", "owner1@example.com", "owner2@example.com"] * 2)
