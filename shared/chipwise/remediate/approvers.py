"""Who may approve an action on a finding from Slack: the named approvers of ``slack_approvers``, by scope.

A scope is ``*`` (every finding), an account id (``123456789012``) or a team (``team:<value of the resource's team
tag>``); its approvers are Slack user ids (``U…``/``W…``) or user-group ids (``S…``, whose members approve). A press
is allowed when the presser is named in any scope the finding falls in."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass

EVERYWHERE = "*"
TEAM_PREFIX = "team:"
_FULL_ID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")


def scopes_of(account_id: str, team: str | None) -> list[str]:
    """The scopes a finding of ``account_id`` (and of ``team``, its resource's team tag) falls in."""
    return [EVERYWHERE, account_id, *([f"{TEAM_PREFIX}{team}"] if team else [])]


def approvers_for(approvers: Mapping[str, Sequence[str]], scopes: Iterable[str]) -> list[str]:
    """The user and user-group ids named for any of ``scopes`` (in order, each once)."""
    named: list[str] = []
    for scope in scopes:
        for who in approvers.get(scope, ()):
            if who.strip() and who.strip() not in named:
                named.append(who.strip())
    return named


def may_approve(named: Sequence[str], user_id: str, members_of: Callable[[str], set[str]]) -> bool:
    """Whether ``user_id`` is one of ``named``, or a member of a user group among them (``members_of`` lists a
    group's members; it is asked only when the user is not named directly)."""
    if not user_id:
        return False
    if user_id in named:
        return True
    return any(user_id in members_of(group) for group in named if group.startswith("S"))


@dataclass(frozen=True)
class ButtonTarget:
    finding_id: str
    account_id: str


def button_value(finding_id: str, account_id: str) -> str:
    """What an alert's button carries: the full finding id and its account."""
    return f"{finding_id}:{account_id}"


def parse_button_value(value: str) -> ButtonTarget | None:
    """The finding and account a button names; None unless it is a full finding id and a 12-digit account id (a
    prefix is never resolved)."""
    finding_id, sep, account_id = value.partition(":")
    if not sep or not _FULL_ID.fullmatch(finding_id) or not (account_id.isdigit() and len(account_id) == 12):
        return None
    return ButtonTarget(finding_id, account_id)
