"""Notifications people act on: a baseline digest first, then a few alerts for new findings, each with a link.

* The first notify run of an account sends one digest per channel (the baseline) and no alert.
* A later run alerts each new finding above the threshold once, at most ``alert_max_per_run``; the digest counts
  the rest.
* Every message carries the resource's AWS console link, the finding id and the suppress command.
* Owners get mail only when they opted in (``chipwise:notify=yes`` or ``owner_opt_in``), never after opting out
  (``chipwise:notify=off``), and every owner email says how to opt out.
* A weekly digest goes out on its weekday only.
"""

from __future__ import annotations

import json
from datetime import datetime, timedelta
from decimal import Decimal
from typing import Any

from notify_factories import NOW, RecordingSender, add_account, add_finding, add_resource
from sqlalchemy import select
from sqlalchemy.orm import Session, sessionmaker

from chipwise.links import console_url, short_id
from chipwise.pipeline.notify import run_notify
from chipwise.settings import Settings
from chipwise.store.tables import Finding, OutboxMessage

EC2_LINK = "https://us-east-1.console.aws.amazon.com/ec2/home?region=us-east-1#InstanceDetails:instanceId="


def _settings(db_url: str, **overrides: Any) -> Settings:
    values: dict[str, Any] = {
        "database_url": db_url,
        "email_recipients": ["finops@example.com"],
        "slack_webhook_secret_name": "chipwise/slack",
        "alert_threshold_usd": Decimal("500"),
    }
    values.update(overrides)
    return Settings(**values)


def _run(db_url: str, factory: sessionmaker[Session], at: datetime, **overrides: Any) -> list[OutboxMessage]:
    """One notify run at ``at``; the messages it queued (and sent)."""
    settings = _settings(db_url, **overrides)
    senders = {"email": RecordingSender()}
    if settings.slack_webhook_secret_name:
        senders["slack"] = RecordingSender()
    with factory() as session:
        before = {m.id for m in session.scalars(select(OutboxMessage))}
    report = run_notify(settings, now=at, senders=senders, session_factory=factory)
    assert report.drained.failed == [] and report.drained.retrying == []
    with factory() as session:
        return [m for m in session.scalars(select(OutboxMessage).order_by(OutboxMessage.id)) if m.id not in before]


def _first_scan(session: Session, *, at: datetime) -> list[Finding]:
    """What a first scan stored: three findings, two above the $500 threshold, on untagged resources."""
    add_account(session)
    found = []
    for name, savings in (("chat-g5", "2400.50"), ("ner-g6", "900"), ("small-g4", "120")):
        add_resource(session, name)
        found.append(add_finding(session, name, savings=savings, first_seen=at - timedelta(minutes=30)))
    return found


def _new_instances(session: Session, names: list[str], *, at: datetime, savings: str = "800") -> list[Finding]:
    """A later scan's new findings on EC2 instances (first seen just before the notify run)."""
    found = []
    for name in names:
        arn = f"arn:aws:ec2:us-east-1:123456789012:instance/{name}"
        add_resource(session, name, kind="ec2_instance", instance_type="g5.2xlarge")
        row = add_finding(session, name, savings=savings, first_seen=at - timedelta(minutes=10))
        row.resource_arn, row.resource_kind, row.instance_type = arn, "ec2_instance", "g5.2xlarge"
        found.append(row)
    session.flush()
    return found


def _text(m: OutboxMessage) -> str:
    return m.payload["text"] + m.payload["html"] if m.channel == "email" else json.dumps(m.payload)


def _kinds(messages: list[OutboxMessage]) -> list[tuple[str, str, str]]:
    return sorted((m.kind, m.channel, m.recipient) for m in messages)


def test_first_scan_sends_one_baseline_digest_per_channel_and_no_alert(
    db_url: str, session_factory: sessionmaker[Session]
) -> None:
    # Given an account's first scan: two findings above the alert threshold
    with session_factory.begin() as session:
        findings = _first_scan(session, at=NOW)
    # When notify runs for the first time
    messages = _run(db_url, session_factory, NOW)
    # Then one digest per channel, marked as the baseline, and no alert
    assert _kinds(messages) == [
        ("digest", "email", "finops@example.com"),
        ("digest", "slack", "slack:chipwise/slack"),
    ]
    email, slack = messages if messages[0].channel == "email" else messages[::-1]
    assert "baseline" in email.payload["text"] and "No alerts were sent" in email.payload["text"]
    assert "baseline" in json.dumps(slack.payload)
    # ...and each names every finding's id and console link, and how a reader has one hidden (no CLI command)
    for finding in findings:
        link = console_url(finding.resource_arn, finding.region, finding.resource_kind, finding.resource_name)
        for message in (email, slack):
            body = _text(message)
            assert short_id(finding.id) in body
            assert link in body or link.replace("&", "&amp;") in body
    for message in (email, slack):
        body = _text(message)
        assert "to suppress finding" in body or "to suppress it by the finding's id" in body
        assert "chipwise findings" not in body and "chipwise report" not in body


def test_a_second_scan_with_two_new_findings_sends_two_alerts(
    db_url: str, session_factory: sessionmaker[Session]
) -> None:
    # Given the first scan and its baseline digest
    with session_factory.begin() as session:
        _first_scan(session, at=NOW)
    _run(db_url, session_factory, NOW)
    # When a second scan the next day finds two new findings above the threshold, and notify runs
    later = NOW + timedelta(days=1)
    with session_factory.begin() as session:
        new = _new_instances(session, ["i-0aaa1111bbbb2222c", "i-0ddd3333eeee4444f"], at=later)
        new_ids = {f.id: f for f in new}
    messages = _run(db_url, session_factory, later)
    # Then two alerts per channel (one per new finding), and the day's digest
    alerts = [m for m in messages if m.kind == "alert"]
    assert _kinds(alerts) == [
        ("alert", "email", "finops@example.com"),
        ("alert", "email", "finops@example.com"),
        ("alert", "slack", "slack:chipwise/slack"),
        ("alert", "slack", "slack:chipwise/slack"),
    ]
    # ...each with its finding's id, the instance's console page, and how to have it hidden (no CLI command)
    for alert in alerts:
        body = _text(alert)
        (finding_id,) = [fid for fid in new_ids if fid in body]
        instance = new_ids[finding_id].resource_arn.rsplit("/", 1)[-1]
        assert EC2_LINK + instance in body
        assert f"to suppress finding {short_id(finding_id)} until a date" in body
        assert "chipwise findings" not in body
    # ...Slack's alerts carry the console link as a button
    for alert in (a for a in alerts if a.channel == "slack"):
        buttons = [e for b in alert.payload["blocks"] if b["type"] == "actions" for e in b["elements"]]
        assert [b["url"].startswith(EC2_LINK) for b in buttons] == [True]
    # ...and the digest is no longer the baseline
    digest = next(m for m in messages if m.kind == "digest" and m.channel == "email")
    assert "baseline" not in digest.payload["text"].split("\n")[0]


def test_alerts_are_capped_per_run_and_the_rest_wait_for_the_digest(
    db_url: str, session_factory: sessionmaker[Session]
) -> None:
    with session_factory.begin() as session:
        _first_scan(session, at=NOW)
    _run(db_url, session_factory, NOW)
    later = NOW + timedelta(days=1)
    with session_factory.begin() as session:
        _new_instances(session, [f"i-{n:017x}" for n in range(7)], at=later)
    # When seven new findings above the threshold meet a cap of five alerts
    messages = _run(db_url, session_factory, later, alert_max_per_run=5, slack_webhook_secret_name=None)
    # Then five are alerted, and the digest says two more are in it
    assert len([m for m in messages if m.kind == "alert"]) == 5
    digest = next(m for m in messages if m.kind == "digest")
    assert "2 more new findings are above the alert threshold, listed here" in digest.payload["text"]
    # ...and a later run alerts none of them again (the digest told about the other two)
    again = _run(db_url, session_factory, later + timedelta(hours=1), alert_max_per_run=5)
    assert [m for m in again if m.kind == "alert"] == []


def test_owners_are_emailed_only_when_they_opted_in(db_url: str, session_factory: sessionmaker[Session]) -> None:
    # Given resources owned by three people: one opted in by tag, one silent, one opted out
    with session_factory.begin() as session:
        add_account(session)
        for name, notify in (("opted-in", "yes"), ("silent", None), ("opted-out", "off")):
            tags = {"chipwise:owner": f"{name}@example.com", **({"chipwise:notify": notify} if notify else {})}
            add_resource(session, name, tags=tags)
            add_finding(session, name, savings="900", first_seen=NOW - timedelta(hours=1))
    # When the baseline goes out with owner_opt_in off
    messages = _run(db_url, session_factory, NOW, slack_webhook_secret_name=None)
    owners = {m.recipient for m in messages} - {"finops@example.com"}
    # Then only the owner who opted in gets their digest, and it says how to opt out
    assert owners == {"opted-in@example.com"}
    mine = next(m for m in messages if m.recipient == "opted-in@example.com")
    assert "chipwise:notify=off" in mine.payload["text"] and "chipwise:notify=off" in mine.payload["html"]


def test_owner_opt_in_setting_reaches_silent_owners_but_not_opted_out_ones(
    db_url: str, session_factory: sessionmaker[Session]
) -> None:
    with session_factory.begin() as session:
        add_account(session)
        for name, notify in (("silent", None), ("opted-out", "off")):
            tags = {"chipwise:owner": f"{name}@example.com", **({"chipwise:notify": notify} if notify else {})}
            add_resource(session, name, tags=tags)
            add_finding(session, name, savings="900", first_seen=NOW - timedelta(hours=1))
    _run(db_url, session_factory, NOW, slack_webhook_secret_name=None, owner_opt_in=True)
    # A later new finding on the silent owner's resource: the alert reaches them, with the opt-out line
    later = NOW + timedelta(days=1)
    with session_factory.begin() as session:
        add_finding(session, "silent", rule_id="gpu_small_model", savings="700", first_seen=later - timedelta(hours=1))
    messages = _run(db_url, session_factory, later, slack_webhook_secret_name=None, owner_opt_in=True)
    alerts = {m.recipient: m for m in messages if m.kind == "alert"}
    assert set(alerts) == {"finops@example.com", "silent@example.com"}
    assert "chipwise:notify=off" in alerts["silent@example.com"].payload["text"]
    assert "chipwise:notify=off" not in alerts["finops@example.com"].payload["text"]
    assert all("opted-out" not in m.recipient for m in messages)


def test_an_owner_with_nothing_to_save_gets_no_digest(db_url: str, session_factory: sessionmaker[Session]) -> None:
    with session_factory.begin() as session:
        add_account(session)
        add_resource(session, "no-telemetry", tags={"chipwise:owner": "ops@example.com", "chipwise:notify": "yes"})
        add_finding(session, "no-telemetry", rule_id="enable_telemetry", savings="0", action="enable_telemetry")
    messages = _run(db_url, session_factory, NOW, slack_webhook_secret_name=None)
    assert {m.recipient for m in messages} == {"finops@example.com"}


def test_a_weekly_digest_goes_out_on_its_day(db_url: str, session_factory: sessionmaker[Session]) -> None:
    # Given the baseline went out (the first digest goes out whatever the day)
    with session_factory.begin() as session:
        _first_scan(session, at=NOW)
    weekly = {"digest_schedule": "weekly", "slack_webhook_secret_name": None}
    assert [m.kind for m in _run(db_url, session_factory, NOW, **weekly)] == ["digest"]
    # When later days pass with a weekly digest due on Thursdays
    sent = {}
    for day in range(1, 8):
        at = NOW + timedelta(days=day)
        sent[f"{at:%A}".lower()] = [
            m.kind for m in _run(db_url, session_factory, at, digest_weekday="thursday", **weekly)
        ]
    # Then the digest goes out on the Thursday only
    assert {day: kinds for day, kinds in sent.items() if kinds} == {"thursday": ["digest"]}
