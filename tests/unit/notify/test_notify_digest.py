"""The digest and alert view-models: figures, what changed since the last digest, owners."""

from __future__ import annotations

from datetime import timedelta
from decimal import Decimal

from notify_factories import NOW, add_benchmark, add_finding, estate
from sqlalchemy.orm import Session

from chipwise.models.resources import WorkloadHints
from chipwise.notify.digest import (
    alert_candidates,
    build_digest,
    load_snapshot,
    owner_emails,
    waste_by_rule,
)
from chipwise.rules.registry import rule_title

SINCE = NOW - timedelta(days=1)


def test_owner_emails_come_from_owner_tags_and_hints() -> None:
    # Given tags in the shapes people write them
    tags = {
        "chipwise:owner": "Alice@Example.com",
        "owner": "team-x, bob@example.com; alice@example.com",
        "team": "c@x.io",
    }
    # When owners are read / Then addresses are found, lower-cased, once each; team names and other tags ignored
    assert owner_emails(tags, WorkloadHints(owner="carol@example.com")) == (
        "alice@example.com",
        "bob@example.com",
        "carol@example.com",
    )
    assert owner_emails({"Owner": "ML Team <nlp@example.com>"}, WorkloadHints()) == ("nlp@example.com",)
    assert owner_emails({"owner": "platform-team"}, WorkloadHints()) == ()


def test_rules_are_named_by_their_titles_not_their_ids() -> None:
    assert rule_title("gpu_inference_portable") == "GPU inference portable to Inferentia"
    assert rule_title("inferentia_idle") == "Idle Inferentia endpoint or instance"
    assert rule_title("a_retired_rule") == "A retired rule"  # an id no rule has any more still reads as words


def test_digest_figures_and_changes(session: Session) -> None:
    # Given the estate: two new findings, an older one, one resolved since the last digest, and a benchmark
    findings = estate(session)
    add_benchmark(session, findings["big_new"], savings="2100", created_at=NOW - timedelta(hours=1))
    add_benchmark(session, findings["old"], savings="1", created_at=NOW - timedelta(days=3))  # before the window
    add_finding(session, "old-resolved", status="resolved", resolved_at=NOW - timedelta(days=4))  # before too
    # When the digest is built
    snapshot = load_snapshot(session, "123456789012", since=SINCE)
    digest = build_digest(snapshot, now=NOW, top_n=2)
    # Then the totals are the open findings' (Decimal, exact)
    assert digest.open_count == 3
    assert digest.total_monthly_waste_usd == Decimal("2400.50") + Decimal("310") + Decimal("554.80")
    # ...and no "resources costing" figure: without a bill no resource's own cost is known (never more than spend)
    assert digest.total_monthly_cost_usd is None
    # ...the top findings are ordered by saving, with the rest counted
    assert [f.resource_name for f in digest.top] == ["chat-mistral-g5", "search-idle-inf2"]
    assert digest.more_count == 1
    # ...what changed: new since the last digest, resolved since, benchmarked since
    assert [f.resource_name for f in digest.new] == ["chat-mistral-g5", "bert-ner-g6"]
    assert digest.new_monthly_waste_usd == Decimal("2710.50")
    assert [f.resource_name for f in digest.resolved] == ["old-endpoint"]
    assert [(b.finding.resource_name, b.measured_savings_usd, b.estimated_savings_usd) for b in digest.benchmarked] == [
        ("chat-mistral-g5", Decimal("2100.000000"), Decimal("2400.500000"))
    ]
    # ...and the chart has one bar per rule, the largest at 100 %
    assert [(b.rule_id, b.findings, b.percent) for b in digest.by_rule] == [
        ("gpu_inference_portable", 1, 100),
        ("inferentia_idle", 1, 23),
        ("gpu_small_model", 1, 13),
    ]
    assert digest.has_news and digest.changes == 4


def test_measured_savings_win_over_the_estimate(session: Session) -> None:
    # Given a finding re-priced by a benchmark
    estate(session)
    add_finding(session, "measured-one", savings="900", measured="650.25")
    # When the digest is built
    digest = build_digest(load_snapshot(session, "123456789012", since=SINCE), now=NOW)
    # Then its measured saving is used and counted as measured
    line = next(f for f in digest.top if f.resource_name == "measured-one")
    assert (line.monthly_savings_usd, line.measured) == (Decimal("650.25"), True)
    assert digest.measured_monthly_waste_usd == Decimal("650.25")


def test_owner_digest_shows_only_their_resources(session: Session) -> None:
    # Given findings on resources tagged with two owners and one untagged
    estate(session)
    snapshot = load_snapshot(session, "123456789012", since=SINCE)
    # When narrowed to an owner
    assert snapshot.owners() == ["support-ai@example.com", "nlp@example.com"]
    mine = build_digest(snapshot.for_owner("support-ai@example.com"), now=NOW, owner="support-ai@example.com")
    # Then only their findings and changes are in it
    assert [f.resource_name for f in mine.top] == ["chat-mistral-g5"]
    assert [f.resource_name for f in mine.resolved] == ["old-endpoint"]
    assert mine.total_monthly_waste_usd == Decimal("2400.50")


def test_alerts_are_for_new_findings_above_the_threshold(session: Session) -> None:
    # Given new findings at $2,400 and $310, an older one at $554.80, and one exactly at the threshold
    findings = estate(session)
    add_finding(session, "at-threshold", savings="500", first_seen=NOW - timedelta(hours=1))
    snapshot = load_snapshot(session, "123456789012", since=SINCE)
    # When alert candidates are chosen with a $500 threshold
    chosen = alert_candidates(snapshot, threshold_usd=Decimal("500"))
    # Then only the new one strictly above it qualifies
    assert [f.resource_name for f in chosen] == ["chat-mistral-g5"]
    # ...unless the scan named an older finding as new
    named = alert_candidates(snapshot, threshold_usd=Decimal("500"), finding_ids=[findings["old"].id])
    assert [f.resource_name for f in named] == ["chat-mistral-g5", "search-idle-inf2"]


def test_no_news_means_no_digest(session: Session) -> None:
    # Given an account whose only finding was resolved long ago
    estate(session)
    snapshot = load_snapshot(session, "999999999999", since=SINCE)
    # When the digest is built / Then there is nothing to tell
    assert not build_digest(snapshot, now=NOW).has_news
    assert waste_by_rule([]) == []
