"""Who may approve from Slack (``slack_approvers`` by scope) and what a button names (the full finding id and its
account, never a prefix)."""

from __future__ import annotations

from chipwise.remediate.approvers import (
    ButtonTarget,
    approvers_for,
    button_value,
    may_approve,
    parse_button_value,
    scopes_of,
)

FINDING = "3efd6ef7-054a-4eee-beb8-d2b38ff1df08"
APPROVERS = {"*": ["U0ADMIN"], "123456789012": ["U0ACCT", "S0PLATFORM"], "team:search": ["U0SEARCH"]}


def test_a_finding_falls_in_every_scope_and_its_team_s() -> None:
    assert scopes_of("123456789012", "search") == ["*", "123456789012", "team:search"]
    assert scopes_of("123456789012", None) == ["*", "123456789012"]
    named = approvers_for(APPROVERS, scopes_of("123456789012", "search"))
    assert named == ["U0ADMIN", "U0ACCT", "S0PLATFORM", "U0SEARCH"]
    assert approvers_for(APPROVERS, scopes_of("999999999999", "ads")) == ["U0ADMIN"]


def test_a_user_named_or_in_a_named_group_may_approve_nobody_else() -> None:
    groups = {"S0PLATFORM": {"U0MEMBER"}}
    asked: list[str] = []

    def members(group: str) -> set[str]:
        asked.append(group)
        return groups.get(group, set())

    named = approvers_for(APPROVERS, scopes_of("123456789012", None))
    assert may_approve(named, "U0ACCT", members) and asked == []  # named directly: no group looked up
    assert may_approve(named, "U0MEMBER", members)
    assert not may_approve(named, "U0SEARCH", members)  # the search team's approver, not this finding's (no team)
    assert not may_approve(named, "", members) and not may_approve([], "U0ADMIN", members)


def test_a_button_names_the_full_id_and_the_account() -> None:
    assert parse_button_value(button_value(FINDING, "123456789012")) == ButtonTarget(FINDING, "123456789012")
    for value in (FINDING, FINDING[:8], f"{FINDING[:8]}:123456789012", f"{FINDING}:12345", f"{FINDING}:", "", ":"):
        assert parse_button_value(value) is None, value
    assert parse_button_value(f"{FINDING.upper()}:123456789012") is None  # ids are stored lower-case
