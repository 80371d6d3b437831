"""Alert precision: per rule, of the findings alerted in the last 30 days, the share acted on (applied or resolved)
against dismissed ("Not waste" or suppressed); the digest shows it, and a rule under ``alert_precision_floor`` is
sent to the digest only."""

from __future__ import annotations

from datetime import timedelta
from decimal import Decimal
from typing import Any

from notify_factories import NOW, add_finding, baseline_sent, estate
from sqlalchemy.orm import Session, sessionmaker

from chipwise.notify.runner import plan_notifications
from chipwise.settings import Settings
from chipwise.store.repositories.remediations import (
    APPLIED,
    APPLY,
    DISMISSAL,
    RECORDED,
    RemediationEvent,
    RemediationRepository,
)
from chipwise.store.tables import Finding, OutboxMessage

RULE = "gpu_inference_portable"


def _settings(db_url: str, **overrides: Any) -> Settings:
    values: dict[str, Any] = {
        "database_url": db_url,
        "email_recipients": ["finops@example.com"],
        "alert_threshold_usd": Decimal("500"),
    }
    return Settings(**{**values, **overrides})


def alerted(session: Session, finding: Finding, days_ago: float) -> None:
    at = NOW - timedelta(days=days_ago)
    session.add(
        OutboxMessage(
            channel="email",
            kind="alert",
            recipient="finops@example.com",
            dedupe_key=f"alert:{finding.id}:{finding.first_seen:%Y%m%dT%H%M%SZ}:email:finops@example.com",
            subject="Chipwise alert",
            payload={"text": "alert"},
            account_id=finding.account_id,
            status="sent",
            created_at=at,
            next_attempt_at=at,
        )
    )
    session.flush()


def history(session: Session) -> None:
    """Five earlier alerts of RULE in the window: one applied, one resolved, two "Not waste", one suppressed; and
    one alert 40 days ago (dismissed, outside the window)."""
    audit = RemediationRepository(session)
    rows = [add_finding(session, f"ep-{i}", rule_id=RULE, first_seen=NOW - timedelta(days=12)) for i in range(6)]
    for row in rows[:5]:
        alerted(session, row, days_ago=10)
    alerted(session, rows[5], days_ago=40)
    audit.record(rows[0], RemediationEvent(APPLY, "ec2_stop", APPLIED, "alice", "cli", "done"), NOW - timedelta(days=9))
    rows[1].status = "resolved"
    for row in (rows[2], rows[3], rows[5]):
        row.status = "suppressed"
        event = RemediationEvent(DISMISSAL, "not_waste", RECORDED, "slack:bob (U1)", "slack", "not waste")
        audit.record(row, event, NOW - timedelta(days=8))
    rows[4].status = "suppressed"
    session.flush()


def test_precision_counts_acted_and_dismissed_alerts_of_the_last_30_days(session: Session) -> None:
    estate(session)
    history(session)
    (found,) = RemediationRepository(session).alert_precision(NOW - timedelta(days=30))
    assert (found.rule_id, found.alerted, found.acted, found.dismissed) == (RULE, 5, 2, 3)
    assert found.precision == 0.4  # 2 / (2 + 3)


def test_a_rule_under_the_floor_goes_to_the_digest_only(db_url: str, session_factory: sessionmaker[Session]) -> None:
    with session_factory.begin() as session:
        findings = estate(session)
        baseline_sent(session, NOW - timedelta(days=1))
        history(session)
        big_new = findings["big_new"].id  # RULE, $2,400.50 a month: alerted unless the rule is held back
        kept = plan_notifications(session, now=NOW, settings=_settings(db_url), slack_enabled=False)
        held = plan_notifications(
            session, now=NOW, settings=_settings(db_url, alert_precision_floor=0.5), slack_enabled=False
        )
        recovered = plan_notifications(
            session, now=NOW, settings=_settings(db_url, alert_precision_floor=0.4), slack_enabled=False
        )
    assert any(p.kind == "alert" and big_new in p.dedupe_key for p in kept)
    assert not any(p.kind == "alert" and big_new in p.dedupe_key for p in held)
    assert any(p.kind == "alert" and big_new in p.dedupe_key for p in recovered)  # 40 % is not under 40 %
    (digest,) = [p for p in held if p.kind == "digest" and p.recipient == "finops@example.com"]
    text = digest.payload["text"]
    assert "Alert precision, 30 days" in text
    assert "5 alerted, 2 acted on, 3 dismissed (40 %), under the precision floor: digest only" in text
    (plain,) = [p for p in kept if p.kind == "digest" and p.recipient == "finops@example.com"]
    assert "5 alerted, 2 acted on, 3 dismissed (40 %)\n" in plain.payload["text"]
    # The audit since the last digest (a day ago): the apply nine days ago is older; the dismissals are too
    assert "Actions since the last digest" not in text


def test_the_digest_lists_the_actions_since_the_last_digest(
    db_url: str, session_factory: sessionmaker[Session]
) -> None:
    with session_factory.begin() as session:
        findings = estate(session)
        baseline_sent(session, NOW - timedelta(days=1))
        event = RemediationEvent(APPLY, "ec2_stop", APPLIED, "alice", "cli", "done")
        RemediationRepository(session).record(findings["old"], event, NOW - timedelta(hours=5))
        planned = plan_notifications(session, now=NOW, settings=_settings(db_url), slack_enabled=False)
    (digest,) = [p for p in planned if p.kind == "digest" and p.recipient == "finops@example.com"]
    assert "Actions since the last digest" in digest.payload["text"]
    assert "search-idle-inf2 (Inferentia idle): apply (ec2_stop) applied by alice" in (digest.payload["text"])
    assert "Actions since the last digest" in digest.payload["html"]
