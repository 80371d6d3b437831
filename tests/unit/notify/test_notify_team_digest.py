"""Issue 37: an organisation's digest goes per team. Each team's digest opens with the organisation's summary
(total, largest accounts and teams, each list cut), then the team's total and its top findings with how many more;
its length does not grow with the organisation. The store here exceeds every list's bound."""

from __future__ import annotations

import re
from datetime import timedelta
from decimal import Decimal
from typing import Any

from notify_factories import NOW, RecordingSender, add_account, add_finding, add_resource, arn_for
from sqlalchemy.orm import Session, sessionmaker

from chipwise.notify.teams import ACCOUNTS_SHOWN, TEAMS_SHOWN, TOP_PER_TEAM
from chipwise.pipeline.notify import run_notify
from chipwise.settings import Settings
from chipwise.store.repositories.finding_pages import NO_TEAM

ACCOUNTS = ACCOUNTS_SHOWN + 2  # more than the summary lists, and more than "auto" needs for team digests
TEAMS = TEAMS_SHOWN + 2
PER_ACCOUNT = 2 * TEAMS  # every team has more findings than its digest lists
LINES = 200  # the bound on a team's digest


def _settings(db_url: str, **overrides: Any) -> Settings:
    values: dict[str, Any] = {
        "database_url": db_url,
        "email_recipients": ["finops@example.com"],
        "alert_threshold_usd": Decimal("500"),
        **overrides,
    }
    return Settings(**values)


def _organisation(
    session: Session, *, first: int = 0, accounts: int = ACCOUNTS, untagged: int = 2
) -> dict[str, Decimal]:
    """Accounts whose resources are spread over the teams, plus ``untagged`` resources; returns each team's
    estimated saving."""
    totals: dict[str, Decimal] = {}
    for a in range(first, first + accounts):
        account = f"{100000000000 + a:012d}"
        add_account(session, account, name=f"Account {a}")
        for r in range(PER_ACCOUNT + (untagged if a == first else 0)):
            name = f"ep-{a:03d}-{r:03d}"
            team = f"team-{(a + r) % TEAMS:02d}" if r < PER_ACCOUNT else None
            add_resource(session, name, account_id=account, tags={"team": team} if team else {})
            savings = Decimal(100 + (a * 37 + r * 11) % 900)
            add_finding(session, name, account_id=account, savings=str(savings), first_seen=NOW - timedelta(days=2))
            totals[team or NO_TEAM] = totals.get(team or NO_TEAM, Decimal(0)) + savings
    return totals


def _team_digests(db_url: str, factory: sessionmaker[Session]) -> dict[str, str]:
    report = run_notify(_settings(db_url), now=NOW, dry_run=True, senders={}, session_factory=factory)
    assert {p.kind for p in report.planned} == {"team_digest"}  # no digest per account
    found = {}
    for p in report.planned:
        assert p.recipient == "finops@example.com" and p.account_id is None
        found[p.dedupe_key.split(":")[2]] = str(p.payload["text"])
    return found


def test_each_team_gets_its_own_bounded_digest_under_the_organisation_s_summary(
    db_url: str, session_factory: sessionmaker[Session]
) -> None:
    # Given an organisation of 12 accounts and 12 teams (and untagged resources), 24 findings per team
    with session_factory.begin() as session:
        totals = _organisation(session)
    # When notify plans the day (a dry run)
    digests = _team_digests(db_url, session_factory)
    # Then one digest per team, the untagged resources' findings as their own team
    assert set(digests) == set(totals) and NO_TEAM in digests
    organisation = sum(totals.values(), Decimal(0))
    for team, text in digests.items():
        lines = text.splitlines()
        assert len(lines) <= LINES
        # the organisation's summary on top: its total, its largest accounts and teams, each list cut
        summary, section = text.index("The organisation"), text.index(f"Team {team}\n")
        assert summary < section
        assert f"${organisation:,.0f} a month to save" in text[summary:section]
        assert "...and 2 more accounts" in text and f"...and {len(totals) - TEAMS_SHOWN} more teams" in text
        # then the team's own total and its top findings, with how many more
        count = len(re.findall(r"^\d+\. ", text[section:], flags=re.MULTILINE))
        team_count = ACCOUNTS * PER_ACCOUNT // TEAMS if team != NO_TEAM else 2
        assert count == min(TOP_PER_TEAM, team_count)
        assert f"{team_count} open findings: ${totals[team]:,.0f} a month to save" in text[section:]
        if team_count > TOP_PER_TEAM:
            assert f"...and {team_count - TOP_PER_TEAM} more open findings" in text


def test_a_team_digest_does_not_grow_with_the_organisation(db_url: str, session_factory: sessionmaker[Session]) -> None:
    # Given the organisation, then three times as many accounts
    with session_factory.begin() as session:
        _organisation(session)
    before = {team: len(text.splitlines()) for team, text in _team_digests(db_url, session_factory).items()}
    with session_factory.begin() as session:
        _organisation(session, first=ACCOUNTS, accounts=2 * ACCOUNTS, untagged=0)
    after = {team: len(text.splitlines()) for team, text in _team_digests(db_url, session_factory).items()}
    # Then every team's digest has as many lines as before
    assert after == before and max(after.values()) <= LINES


def test_team_digests_go_once_a_day_and_alerts_follow_the_baseline(
    db_url: str, session_factory: sessionmaker[Session]
) -> None:
    # Given the organisation's first team digests sent (the baseline: no alerts)
    with session_factory.begin() as session:
        _organisation(session)
    settings = _settings(db_url)
    first = run_notify(settings, now=NOW, senders={"email": RecordingSender()}, session_factory=session_factory)
    assert {p.kind for p in first.planned} == {"team_digest"} and first.enqueued == TEAMS + 1
    # When a new $2,000 finding appears and notify runs again the same day
    with session_factory.begin() as session:
        add_resource(session, "ep-new", account_id=f"{100000000000:012d}", tags={"team": "team-00"})
        found = NOW + timedelta(minutes=30)  # after the digest
        add_finding(session, "ep-new", account_id=f"{100000000000:012d}", savings="2000", first_seen=found)
    later = NOW + timedelta(hours=1)
    second = run_notify(settings, now=later, senders={"email": RecordingSender()}, session_factory=session_factory)
    # Then it is alerted, and no team digest goes twice on one day
    assert [(p.kind, p.recipient) for p in second.planned] == [("alert", "finops@example.com")]
    assert "ep-new" in str(second.planned[0].subject)


def test_a_few_accounts_keep_their_account_digest(db_url: str, session_factory: sessionmaker[Session]) -> None:
    with session_factory.begin() as session:
        _organisation(session, accounts=3)
    report = run_notify(_settings(db_url), now=NOW, dry_run=True, senders={}, session_factory=session_factory)
    assert {p.kind for p in report.planned} == {"digest"}
    forced = run_notify(
        _settings(db_url, digest_scope="team"), now=NOW, dry_run=True, senders={}, session_factory=session_factory
    )
    assert {p.kind for p in forced.planned} == {"team_digest"}


def test_one_team_s_digest_and_alerts_only(db_url: str, session_factory: sessionmaker[Session]) -> None:
    # Given an organisation whose team digests went out (the baseline), then new large findings in two teams
    with session_factory.begin() as session:
        _organisation(session)
    settings = _settings(db_url)
    whole = _team_digests(db_url, session_factory)
    run_notify(settings, now=NOW, senders={"email": RecordingSender()}, session_factory=session_factory)
    with session_factory.begin() as session:
        for name, team in (("ep-new-0", "team-00"), ("ep-new-1", "team-01")):
            add_resource(session, name, account_id=f"{100000000000:012d}", tags={"team": team})
            add_finding(
                session, name, account_id=f"{100000000000:012d}", savings="2000", first_seen=NOW + timedelta(minutes=30)
            )
    later = NOW + timedelta(days=1)
    # When notify plans team-01 alone (a dry run, the next day)
    report = run_notify(settings, now=later, dry_run=True, senders={}, session_factory=session_factory, team="team-01")
    # Then team-01's alert and its digest, no other team's
    alerts = [p for p in report.planned if p.kind == "alert"]
    assert [str(p.subject).count("ep-new-1") for p in alerts] == [1]
    digests = [p for p in report.planned if p.kind == "team_digest"]
    assert [p.dedupe_key.split(":")[2] for p in digests] == ["team-01"]
    text = str(digests[0].payload["text"])
    assert "Team team-01\n" in text and "Team team-00\n" not in text
    assert text.count("The organisation") == whole["team-01"].count("The organisation") == 1


def test_one_team_s_digest_whatever_the_scope(db_url: str, session_factory: sessionmaker[Session]) -> None:
    # Given three accounts: "auto" gives account digests
    with session_factory.begin() as session:
        _organisation(session, accounts=3)
    report = run_notify(
        _settings(db_url), now=NOW, dry_run=True, senders={}, session_factory=session_factory, team="team-02"
    )
    # Then --team asks for the team's digest all the same
    assert [(p.kind, p.dedupe_key.split(":")[2]) for p in report.planned] == [("team_digest", "team-02")]
    nobody = run_notify(
        _settings(db_url), now=NOW, dry_run=True, senders={}, session_factory=session_factory, team="no-such-team"
    )
    assert nobody.planned == []


def test_a_team_s_findings_are_those_of_its_resource_variant(session_factory: sessionmaker[Session]) -> None:
    """A finding's team is its own resource row's (account, ARN and variant): the team filter of a page agrees
    with the per-team totals, and another variant of the same ARN tagged for another team does not pull it in."""
    from chipwise.store.repositories.finding_pages import FindingFilter, FindingPages

    with session_factory.begin() as session:
        add_account(session, "100000000000", name="Account 0")
        add_resource(session, "ep-variants", account_id="100000000000", tags={"team": "team-a"})
        other = add_resource(session, "ep-variants-b", account_id="100000000000", tags={"team": "team-b"})
        other.arn, other.variant = arn_for("ep-variants", "100000000000"), "blue"
        finding = add_finding(session, "ep-variants", account_id="100000000000", savings="700")
        finding.resource_variant = "blue"
    with session_factory() as session:
        pages = FindingPages(session)
        keys = ("team",)
        assert [(g.key, g.count) for g in pages.by_team(FindingFilter(team_tag_keys=keys))] == [("team-b", 1)]
        assert [d.finding_id for d in pages.page(FindingFilter(team="team-b", team_tag_keys=keys), limit=5)] == [
            finding.id
        ]
        assert pages.page(FindingFilter(team="team-a", team_tag_keys=keys), limit=5) == []
        assert {
            t: [d.finding_id for d in top]
            for t, top in pages.top_by_team(FindingFilter(team_tag_keys=keys), limit=5).items()
        } == {"team-b": [finding.id]}


def test_a_resource_tagged_under_two_keys_is_the_first_key_s_team_alone(session_factory: sessionmaker[Session]) -> None:
    """A team is the first of the team tag keys a resource carries: a resource tagged ``team=team-a`` and
    ``cost-center=team-b`` is team-a's in the totals, in team-a's page and top findings, and in none of team-b's
    (the filter and the grouping give one answer)."""
    from chipwise.store.repositories.finding_pages import FindingFilter, FindingPages

    with session_factory.begin() as session:
        add_account(session, "100000000000", name="Account 0")
        add_resource(session, "ep-both", account_id="100000000000", tags={"team": "team-a", "cost-center": "team-b"})
        add_resource(session, "ep-second", account_id="100000000000", tags={"cost-center": "team-b"})
        both = add_finding(session, "ep-both", account_id="100000000000", savings="700")
        second = add_finding(session, "ep-second", account_id="100000000000", savings="300")
        add_resource(session, "ep-none", account_id="100000000000", tags={"owner": "team-a"})
        untagged = add_finding(session, "ep-none", account_id="100000000000", savings="100")
    keys = ("team", "cost-center")
    with session_factory() as session:
        pages = FindingPages(session)
        assert [(g.key, g.count) for g in pages.by_team(FindingFilter(team_tag_keys=keys))] == [
            ("team-a", 1),
            ("team-b", 1),
            (NO_TEAM, 1),
        ]
        for team, expected in (("team-a", [both.id]), ("team-b", [second.id]), (NO_TEAM, [untagged.id])):
            page = pages.page(FindingFilter(team=team, team_tag_keys=keys), limit=5)
            assert [d.finding_id for d in page] == expected
            assert [g.count for g in pages.by_team(FindingFilter(team=team, team_tag_keys=keys))] == [1]
        tops = pages.top_by_team(FindingFilter(team_tag_keys=keys), limit=5)
        assert {t: [d.finding_id for d in top] for t, top in tops.items()} == {
            "team-a": [both.id],
            "team-b": [second.id],
            NO_TEAM: [untagged.id],
        }


def test_a_team_the_bill_alone_names_is_the_finding_s_team_everywhere(session_factory: sessionmaker[Session]) -> None:
    """A resource without a live team tag takes the team its latest scan gave it (from the bill's cost allocation
    tags: the scan's verdict rows), in the per-team totals, a team's page and its top findings, as ``chipwise
    resources`` and the reports have it; a live team tag still comes first; a scan of another region does not
    count."""
    from datetime import date

    from chipwise.store.repositories.finding_pages import FindingFilter, FindingPages
    from chipwise.store.tables import Scan, ScanVerdict

    account = "100000000000"
    with session_factory.begin() as session:
        add_account(session, account, name="Account 0")
        add_resource(session, "ep-billed", account_id=account, tags={})
        add_resource(session, "ep-live", account_id=account, tags={"team": "live-team"})
        billed = add_finding(session, "ep-billed", account_id=account, savings="700")
        live = add_finding(session, "ep-live", account_id=account, savings="300")
        window = {"window_start": date(2026, 11, 1), "window_end": date(2026, 11, 15)}
        session.add(Scan(id="scan-latest", account_id=account, region="us-east-1", status="succeeded", **window))
        session.add(Scan(id="scan-other-region", account_id=account, region="eu-west-1", status="succeeded", **window))
        session.flush()
        for scan_id, position, name, team in (
            ("scan-latest", 0, "ep-billed", "billed-team"),
            ("scan-latest", 1, "ep-live", "billed-other"),
            ("scan-other-region", 0, "ep-billed", "elsewhere"),
        ):
            arn = arn_for(name, account)
            session.add(
                ScanVerdict(
                    scan_id=scan_id,
                    position=position,
                    resource_id=arn,
                    resource_arn=arn,
                    resource_variant="",
                    team=team,
                    verdict="waste",
                )
            )
    keys = ("team", "user:team")
    with session_factory() as session:
        pages = FindingPages(session)
        assert [(g.key, g.count) for g in pages.by_team(FindingFilter(team_tag_keys=keys))] == [
            ("billed-team", 1),
            ("live-team", 1),
        ]
        for team, expected in (("billed-team", [billed.id]), ("live-team", [live.id]), ("billed-other", [])):
            page = pages.page(FindingFilter(team=team, team_tag_keys=keys), limit=5)
            assert [d.finding_id for d in page] == expected, team
        tops = pages.top_by_team(FindingFilter(team_tag_keys=keys), limit=5)
        assert {t: [d.finding_id for d in top] for t, top in tops.items()} == {
            "billed-team": [billed.id],
            "live-team": [live.id],
        }
        assert pages.page(FindingFilter(team=NO_TEAM, team_tag_keys=keys), limit=5) == []
        # without team tag keys no team is known, the scan's included
        assert [g.key for g in pages.by_team(FindingFilter())] == [NO_TEAM]


def test_every_team_s_top_findings_in_one_statement_are_its_own_page(
    session_factory: sessionmaker[Session],
) -> None:
    """The digests read every team's top findings with one windowed statement: for each team, the same findings
    in the same order as a page of that team alone, the untagged ones under "(no team tag)", nothing for a team
    with no open finding; without team tag keys every finding is one team's."""
    from chipwise.store.repositories.finding_pages import FindingFilter, FindingPages

    with session_factory.begin() as session:
        _organisation(session)
    keys = ("team", "cost-center")
    with session_factory() as session:
        pages = FindingPages(session)
        tops = pages.top_by_team(FindingFilter(team_tag_keys=keys), limit=TOP_PER_TEAM)
        groups = pages.by_team(FindingFilter(team_tag_keys=keys))
        assert set(tops) == {g.key for g in groups} and len(tops) == TEAMS + 1
        for group in groups:
            alone = pages.page(FindingFilter(team=group.key, team_tag_keys=keys), limit=TOP_PER_TEAM)
            assert [d.finding_id for d in tops[group.key]] == [d.finding_id for d in alone]
            assert len(alone) == min(group.count, TOP_PER_TEAM)
        assert pages.top_by_team(FindingFilter(team_tag_keys=keys, team="team-00"), limit=3).keys() == {"team-00"}
        untagged = pages.top_by_team(FindingFilter(), limit=4)
        assert [d.finding_id for d in untagged[NO_TEAM]] == [d.finding_id for d in pages.page(FindingFilter(), limit=4)]
