"""The organisation's digest, one per team: the organisation's summary on top (its total, its largest accounts and
teams), then the team's own total and top findings. Every figure is aggregated in SQL
(:class:`~chipwise.store.repositories.finding_pages.FindingPages`) and every list is cut, so a digest has a bounded
number of lines whatever the size of the organisation, and planning them costs a few statements per team, not a
snapshot per account.

A team is the first of ``team_tag_keys`` a finding's resource carries (its live tags, else its latest scan's
team from the bill, as ``chipwise findings --team`` resolves it); findings of resources neither names make the
"(no team tag)" team. Team digests go to the configured recipients;
alerts keep their per-finding messages (new findings above the threshold since the last team digest, the largest
first, at most ``alert_max_per_run``).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, replace
from datetime import datetime
from decimal import Decimal
from typing import Any

from chipwise.notify.digest import AccountSnapshot, FindingLine, _owners_by_arn, account_ids_with_findings
from chipwise.notify.runner import (
    FIRST_DIGEST_LOOKBACK,
    PlannedMessage,
    alert_messages,
    dedupe_key,
    digest_due,
    precision_lines,
)
from chipwise.render import money, render
from chipwise.settings import Settings
from chipwise.store import Session
from chipwise.store.repositories.accounts import AccountRepository
from chipwise.store.repositories.digests import DigestRepository
from chipwise.store.repositories.finding_pages import FindingFilter, FindingPages, Group

KIND = "team_digest"
TEAM_DIGEST_ACCOUNTS = 10  # digest_scope "auto": per team above this many accounts with findings
TOP_PER_TEAM = 10  # findings listed in a team's digest; the rest counted
ACCOUNTS_SHOWN = 10  # the organisation's largest accounts in the summary
TEAMS_SHOWN = 10  # and its largest teams


@dataclass(frozen=True)
class OrgSummary:
    """The organisation's open findings: how many, their estimated saving a month, the largest accounts and
    teams (each list cut, with how many more)."""

    open_count: int
    monthly_savings_usd: Decimal
    accounts: int
    teams: int
    by_account: tuple[Group, ...]
    by_team: tuple[Group, ...]

    @property
    def more_accounts(self) -> int:
        return self.accounts - len(self.by_account)

    @property
    def more_teams(self) -> int:
        return self.teams - len(self.by_team)


@dataclass(frozen=True)
class TeamDigest:
    """One team's digest: the organisation's summary, then the team's total and its top findings."""

    team: str
    generated_at: datetime
    since: datetime
    organisation: OrgSummary
    open_count: int
    monthly_savings_usd: Decimal
    top: tuple[FindingLine, ...]
    baseline: bool = False
    alerts_held: int = 0  # new findings above the alert threshold left to the digests (over alert_max_per_run)

    @property
    def more_count(self) -> int:
        return max(0, self.open_count - len(self.top))

    @property
    def share_percent(self) -> int:
        """The team's share of the organisation's saving (0–100)."""
        total = self.organisation.monthly_savings_usd
        return int((self.monthly_savings_usd * 100 / total).to_integral_value()) if total > 0 else 0


def team_scope(session: Session, settings: Settings, accounts: Iterable[str] | None) -> bool:
    """Whether this notify run sends team digests (``digest_scope``; auto: every account, and more than
    :data:`TEAM_DIGEST_ACCOUNTS` of them with findings)."""
    if settings.digest_scope != "auto":
        return settings.digest_scope == "team"
    return accounts is None and len(account_ids_with_findings(session)) > TEAM_DIGEST_ACCOUNTS


def _open(settings: Settings, **narrowed: Any) -> FindingFilter:
    return FindingFilter(team_tag_keys=tuple(settings.team_tag_keys), **narrowed)


def org_summary(pages: FindingPages, settings: Settings) -> tuple[OrgSummary, list[Group]]:
    """The summary and every team's group (largest saving first)."""
    everything = _open(settings)
    totals = pages.totals(everything)
    teams = pages.by_team(everything)
    accounts = pages.by_account(everything)
    summary = OrgSummary(
        open_count=totals.count,
        monthly_savings_usd=totals.estimated_monthly_usd,
        accounts=len(accounts),
        teams=len(teams),
        by_account=tuple(accounts[:ACCOUNTS_SHOWN]),
        by_team=tuple(teams[:TEAMS_SHOWN]),
    )
    return summary, teams


def _lines(session: Session, documents: list[Any], settings: Settings, team: str | None) -> list[FindingLine]:
    owners = _owners_by_arn(session, (d.resource_id for d in documents), opt_in_by_default=settings.owner_opt_in)
    return [FindingLine.from_document(d, owners.get(d.resource_id, ()), team) for d in documents]


def team_digests(
    session: Session, *, now: datetime, since: datetime, settings: Settings, team: str | None = None
) -> list[TeamDigest]:
    """Every team's digest (teams with open findings, largest saving first); only ``team``'s when given."""
    pages = FindingPages(session)
    summary, teams = org_summary(pages, settings)
    digests = []
    # Every team's top findings in one statement (a page per team read every open finding once per team); one
    # team's page alone when only its digest is wanted.
    tops = pages.top_by_team(_open(settings), limit=TOP_PER_TEAM) if team is None else {}
    for group in teams:
        if team is not None and group.key != team:
            continue
        top = tops.get(group.key, []) if team is None else pages.page(_open(settings, team=team), limit=TOP_PER_TEAM)
        lines = tuple(_lines(session, top, settings, group.key))
        digests.append(TeamDigest(group.key, now, since, summary, group.count, group.estimated_monthly_usd, lines))
    return digests


def team_digest_email(digest: TeamDigest) -> tuple[str, dict[str, Any]]:
    """Subject and payload (both parts) of a team digest."""
    subject = (
        f"Chipwise: {money(digest.monthly_savings_usd, 0)} a month to save in team {digest.team} "
        f"(organisation: {money(digest.organisation.monthly_savings_usd, 0)})"
    )
    html = render("email/team_digest.html.j2", digest=digest)
    text = render("email/team_digest.txt.j2", digest=digest)
    return subject, {"html": html, "text": text}


def _alerts(
    session: Session,
    *,
    now: datetime,
    since: datetime,
    settings: Settings,
    slack_enabled: bool,
    team: str | None = None,
) -> tuple[list[PlannedMessage], int]:
    """Alerts for new findings above the threshold (first seen after ``since``), largest first, at most
    ``alert_max_per_run`` alerted; returns the messages and how many more new findings are left to the digests
    (at most: the ones after the cap are counted, not checked against earlier runs' alerts)."""
    from chipwise.notify.outbox import existing_keys

    pages = FindingPages(session)
    threshold = settings.alert_threshold_usd
    narrowed: dict[str, Any] = {"team": team} if team is not None else {}
    candidates = _open(settings, min_savings=threshold, first_seen_after=since, **narrowed)
    digest_only = {p.rule_id for p in precision_lines(session, now=now, settings=settings) if p.digest_only}
    names: dict[str, str | None] = {}
    planned: list[PlannedMessage] = []
    alerted = examined = 0
    for document in pages.stream(candidates, batch=50):
        if alerted >= settings.alert_max_per_run:
            break
        examined += 1
        line = _lines(session, [document], settings, None)[0]
        if not line.counted or line.monthly_savings_usd <= threshold or line.rule_id in digest_only:
            continue
        if line.account_id not in names:
            account = AccountRepository(session).get(line.account_id)
            names[line.account_id] = account.name if account else None
        snapshot = AccountSnapshot(line.account_id, names[line.account_id], since, [line], [], [])
        messages = alert_messages(snapshot, [line], now=now, settings=settings, slack_enabled=slack_enabled)
        existing = existing_keys(session, [m.dedupe_key for m in messages])
        fresh = [m for m in messages if m.dedupe_key not in existing]
        if fresh:
            alerted += 1
            planned += fresh
    held = pages.totals(candidates).count - examined if alerted >= settings.alert_max_per_run else 0
    return planned, held


def plan_team_notifications(
    session: Session,
    *,
    now: datetime,
    settings: Settings,
    slack_enabled: bool,
    digests: bool = True,
    alerts: bool = True,
    team: str | None = None,
) -> list[PlannedMessage]:
    """The organisation's run: alerts for new findings (none on the first run: the baseline), and today's team
    digests to the configured recipients, once a day; ``team``: that team's alerts and digest only (the
    organisation's summary on top stays whole). Nothing is written."""
    from chipwise.notify.outbox import existing_keys

    repository = DigestRepository(session)
    last = repository.last_queued_at(KIND, None)
    baseline = last is None
    since = last or now - FIRST_DIGEST_LOOKBACK
    day = f"{now:%Y-%m-%d}"
    planned: list[PlannedMessage] = []
    held = 0
    if alerts and not baseline:
        planned, held = _alerts(
            session, now=now, since=since, settings=settings, slack_enabled=slack_enabled, team=team
        )
    due = (digests or baseline) and digest_due(now, settings, baseline=baseline)
    if due and not repository.outbox_key_with_prefix(f"{KIND}:{day}:"):
        for digest in team_digests(session, now=now, since=since, settings=settings, team=team):
            subject, body = team_digest_email(replace(digest, baseline=baseline, alerts_held=held))
            for recipient in settings.email_recipients:
                key = dedupe_key(KIND, day, digest.team, "email", recipient.lower())
                payload = {**body, "to": [recipient]}
                planned.append(PlannedMessage("email", KIND, recipient, key, subject, payload, None))
    existing = existing_keys(session, [p.dedupe_key for p in planned])
    return [p for p in planned if p.dedupe_key not in existing]
