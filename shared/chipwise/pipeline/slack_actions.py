"""Slack approvals: the alert's buttons (Apply, Snooze 7 days, Not waste) post here (API Gateway HTTP API + Lambda).

Every request is verified before its body is read: Slack's v0 signature (``X-Slack-Signature`` is ``v0=`` and the
hex HMAC-SHA256 of ``v0:{X-Slack-Request-Timestamp}:{raw body}`` keyed with the app's signing secret, compared in
constant time) and a timestamp within five minutes of now (a replayed request is refused). A forged, stale or
unsigned request gets 401 and changes nothing.

A verified ``block_actions`` payload acts as its button says, as the Slack user who pressed it:

- ``chipwise_apply``: the same apply as ``chipwise findings apply ID --yes`` (re-checks, audit, rollback);
- ``chipwise_snooze``: suppressed for 7 days;
- ``chipwise_not_waste``: suppressed with the reason (a year) and recorded as a dismissal: it counts against the
  rule's alert precision.
"""

from __future__ import annotations

import binascii
import hashlib
import hmac
import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta
from functools import lru_cache
from http import HTTPStatus
from typing import Any
from urllib.parse import parse_qs

from aws_lambda_powertools.event_handler import APIGatewayHttpResolver, Response, content_types
from aws_lambda_powertools.utilities.parameters import SecretsProvider
from aws_lambda_powertools.utilities.parser.models import APIGatewayProxyEventV2Model

from chipwise.aws import aws_context
from chipwise.clock import utcnow
from chipwise.errors import ChipwiseError, ConfigError, InvalidInput, NotFound
from chipwise.observability import logger
from chipwise.pipeline.apply import apply_finding
from chipwise.remediate.approvers import approvers_for, may_approve, parse_button_value, scopes_of
from chipwise.settings import get_settings
from chipwise.store import Session, session_scope
from chipwise.store.repositories.bill import teams_by_arn
from chipwise.store.repositories.findings import FindingRepository
from chipwise.store.repositories.remediations import (
    DISMISSAL,
    RECORDED,
    REFUSAL,
    REFUSED,
    RemediationEvent,
    RemediationRepository,
)

MAX_AGE_SECONDS = 5 * 60
APPLY, SNOOZE, NOT_WASTE = "chipwise_apply", "chipwise_snooze", "chipwise_not_waste"
SNOOZE_DAYS = 7
NOT_WASTE_DAYS = 365
MAX_BODY_BYTES = 64 * 1024
GroupMembers = Callable[[str], set[str]]

app = APIGatewayHttpResolver()


# --- the signature ---------------------------------------------------------------------------------------------


def slack_signature(secret: str, timestamp: str, body: bytes) -> str:
    """``v0=`` + hex HMAC-SHA256 of ``v0:{timestamp}:{body}`` keyed with the signing secret."""
    base = b"v0:" + timestamp.encode() + b":" + body
    return "v0=" + hmac.new(secret.encode(), base, hashlib.sha256).hexdigest()


def plausible_timestamp(timestamp: str) -> bool:
    """Epoch seconds in at most 12 ASCII digits (any longer number is not a time: it is never turned into one)."""
    return 0 < len(timestamp) <= 12 and timestamp.isascii() and timestamp.isdigit()


def verified(secret: str, headers: Mapping[str, str], body: bytes, now: datetime) -> bool:
    """Whether a request is Slack's and fresh: a timestamp within five minutes and a matching signature."""
    lowered = {k.lower(): v for k, v in headers.items()}
    timestamp = lowered.get("x-slack-request-timestamp", "")
    signature = lowered.get("x-slack-signature", "")
    if not secret or not plausible_timestamp(timestamp) or not signature:
        return False
    if abs(now.timestamp() - int(timestamp)) > MAX_AGE_SECONDS:
        return False
    return hmac.compare_digest(slack_signature(secret, timestamp, body).encode(), signature.encode())


@lru_cache(maxsize=1)
def signing_secret() -> str:
    """The app's signing secret from Secrets Manager (``slack_signing_secret_name``; the value, or JSON with a
    ``signing_secret`` key), read once per Lambda container."""
    settings = get_settings()
    name = settings.slack_signing_secret_name
    if not name:
        raise ConfigError("slack_signing_secret_name is not set: Slack approvals are off")
    return _secret_text(name, "signing_secret")


def _secret_text(name: str, key: str) -> str:
    """A Slack secret from Secrets Manager: the value, or JSON with ``key``."""
    provider = SecretsProvider(boto3_client=aws_context(get_settings().region).client("secretsmanager"))
    try:
        value = provider.get(name, max_age=0)
    except Exception as exc:  # Powertools wraps every failure in GetParameterError
        raise ConfigError(f"cannot read the Slack secret {name!r}: {type(exc).__name__}") from exc
    text = (value.decode() if isinstance(value, bytes) else str(value or "")).strip()
    if text.startswith("{"):
        try:
            document = json.loads(text)
        except json.JSONDecodeError:
            document = None
        text = str(document.get(key, "")) if isinstance(document, dict) else ""
    if not text:
        raise ConfigError(f"the Slack secret {name!r} has no {key}")
    return text


# --- the payload -----------------------------------------------------------------------------------------------


class MalformedRequest(InvalidInput):
    """A request Chipwise cannot read (HTTP 400): never acted on."""


@dataclass(frozen=True)
class SlackAction:
    action_id: str
    value: str  # the button's value: "<finding id>:<account id>"
    user_id: str
    team_id: str
    user: str  # "slack:<username> (<user id>)"


def _text(value: Any, limit: int = 256) -> str:
    return value[:limit] if isinstance(value, str) else ""


def parse_payload(body: bytes) -> SlackAction:
    """The first action of a ``block_actions`` payload (form field ``payload``, JSON). Any other shape raises
    :class:`MalformedRequest`."""
    form = parse_qs(body.decode("utf-8", errors="replace"), max_num_fields=20)
    raw = (form.get("payload") or [""])[0]
    try:
        payload = json.loads(raw)
    except (json.JSONDecodeError, RecursionError) as exc:
        raise MalformedRequest("the request has no Slack interaction payload") from exc
    if not isinstance(payload, dict) or payload.get("type") != "block_actions":
        raise MalformedRequest("only block_actions payloads are handled")
    found, user, team = payload.get("actions"), payload.get("user"), payload.get("team")
    if not isinstance(found, list) or not found or not isinstance(found[0], dict):
        raise MalformedRequest("the payload's actions are not a list of actions")
    if not isinstance(user, dict) or not _text(user.get("id")):
        raise MalformedRequest("the payload names no user")
    action = found[0]
    action_id, value = _text(action.get("action_id")), _text(action.get("value"), 2000)
    if action_id not in {APPLY, SNOOZE, NOT_WASTE} or not value:
        raise MalformedRequest(f"unknown action {action_id!r}")
    team_id = _text(team.get("id")) if isinstance(team, dict) else ""
    user_id = _text(user.get("id"))
    name = _text(user.get("username")) or _text(user.get("name")) or "unknown"
    return SlackAction(action_id, value, user_id, team_id or _text(user.get("team_id")), f"slack:{name} ({user_id})")


# --- who may press ---------------------------------------------------------------------------------------------


def slack_group_members(group_id: str) -> set[str]:
    """The members of a Slack user group (``usergroups.users.list`` with the bot token of
    ``slack_bot_token_secret_name``); empty when no token is configured or Slack cannot be asked (fail closed)."""
    name = get_settings().slack_bot_token_secret_name
    if not name:
        return set()
    import httpx

    try:
        token = _secret_text(name, "bot_token")
        answer = httpx.get(
            "https://slack.com/api/usergroups.users.list",
            params={"usergroup": group_id},
            headers={"Authorization": f"Bearer {token}"},
            timeout=5.0,
        ).json()
    except (ConfigError, httpx.HTTPError, ValueError) as exc:
        logger().warning("slack user group not read", extra={"group": group_id, "reason": type(exc).__name__})
        return set()
    users = answer.get("users") if isinstance(answer, dict) and answer.get("ok") is True else None
    return {u for u in users if isinstance(u, str)} if isinstance(users, list) else set()


def refusal(session: Session, action: SlackAction, now: datetime, members_of: GroupMembers) -> str | None:
    """Why this press must not act (stored as a refusal on the finding it names, when there is one), or None."""
    settings = get_settings()
    target = parse_button_value(action.value)
    finding = _named_finding(session, target.finding_id if target else action.value.partition(":")[0])
    reason = None
    if not settings.slack_team_id or action.team_id != settings.slack_team_id:
        reason = f"the press came from Slack workspace {action.team_id or '?'}, not the one Chipwise answers"
    elif target is None or finding is None or finding.id != target.finding_id:
        reason = "the button does not name a finding in full with its account (press the one of a newer alert)"
    elif finding.account_id != target.account_id:
        reason = f"the button names account {target.account_id}, but the finding is in {finding.account_id}"
    else:
        team = teams_by_arn(session, finding.account_id, [finding.resource_arn], settings.team_tag_keys)
        named = approvers_for(settings.slack_approvers, scopes_of(finding.account_id, team.get(finding.resource_arn)))
        if not may_approve(named, action.user_id, members_of):
            reason = f"{action.user} is not an approver of this finding (slack_approvers)"
    if reason is None:
        return None
    logger().warning("slack press refused", extra={"reason": reason, "user": action.user})
    if finding is not None:
        event = RemediationEvent(REFUSAL, action.action_id, REFUSED, action.user, "slack", result=reason)
        RemediationRepository(session).record(finding, event, now)
    return f"refused: {reason}"


def _named_finding(session: Session, finding_ref: str) -> Any:
    """The finding a button names (a prefix too, only to audit the refusal on it)."""
    try:
        return FindingRepository(session).get(finding_ref)
    except (NotFound, InvalidInput):
        return None


# --- acting ----------------------------------------------------------------------------------------------------


def act(url: str, action: SlackAction, now: datetime, members_of: GroupMembers = slack_group_members) -> str:
    """Do what the button says, when an approver of the finding pressed it in our workspace; the sentence that
    answers the user."""
    with session_scope(url) as session:
        refused = refusal(session, action, now, members_of)
    target = parse_button_value(action.value)
    if refused is not None or target is None:
        return refused or "refused"
    if action.action_id == APPLY:
        outcome = apply_finding(
            target.finding_id, actor=action.user, source="slack", database_url=url, now=now, approved=True
        )
        if not outcome.ok:
            return f"{outcome.status}: {outcome.message}"
        return f"applied: {outcome.resource} (undo: `chipwise findings rollback {outcome.finding_id[:8]}`)"
    days = SNOOZE_DAYS if action.action_id == SNOOZE else NOT_WASTE_DAYS
    reason = f"snoozed {SNOOZE_DAYS} days" if action.action_id == SNOOZE else "not waste"
    with session_scope(url) as session:
        finding = FindingRepository(session).suppress(
            target.finding_id, until=now + timedelta(days=days), reason=f"{reason} ({action.user}, Slack)", now=now
        )
        RemediationRepository(session).record(
            finding,
            RemediationEvent(
                DISMISSAL if action.action_id == NOT_WASTE else "snooze",
                "not_waste" if action.action_id == NOT_WASTE else "snooze",
                RECORDED,
                action.user,
                "slack",
                result=reason,
            ),
            now,
        )
        return f"{reason}: {finding.resource_name} (until {finding.suppressed_until:%Y-%m-%d})"


def _answer(status: HTTPStatus, text: str) -> Response[str]:
    body = json.dumps({"response_type": "ephemeral", "replace_original": False, "text": text})
    return Response(status_code=status, content_type=content_types.APPLICATION_JSON, body=body)


def _raw_body(event: Any) -> bytes | None:
    """The request's body as sent (base64-decoded when API Gateway says so); None when it does not decode."""
    try:
        return (event.decoded_body or "").encode()
    except (binascii.Error, ValueError):
        return None


@app.post("/slack/actions")
def slack_actions() -> Response[str]:
    event = app.current_event
    body = _raw_body(event)
    if body is None:
        return _answer(HTTPStatus.BAD_REQUEST, "the request body does not decode")
    if len(body) > MAX_BODY_BYTES:
        return _answer(HTTPStatus.REQUEST_ENTITY_TOO_LARGE, "request too large")
    headers = {str(k).lower(): str(v) for k, v in dict(event.headers or {}).items()}
    timestamp = headers.get("x-slack-request-timestamp", "")
    if timestamp and not plausible_timestamp(timestamp):
        return _answer(HTTPStatus.BAD_REQUEST, "the request timestamp is not a time")
    now = utcnow()
    try:
        secret = signing_secret()
    except ConfigError as exc:
        logger().error("slack approvals are not configured", extra={"reason": str(exc)})
        return _answer(HTTPStatus.SERVICE_UNAVAILABLE, "Slack approvals are not configured")
    if not verified(secret, headers, body, now):
        logger().warning("slack request refused: bad or stale signature")
        return _answer(HTTPStatus.UNAUTHORIZED, "invalid signature")
    try:
        action = parse_payload(body)
    except MalformedRequest as exc:
        return _answer(HTTPStatus.BAD_REQUEST, str(exc))
    try:
        text = act(get_settings().database_url, action, now)
    except ChipwiseError as exc:
        return _answer(HTTPStatus.OK, str(exc))  # Slack shows a 200's text; another status is "failed" only
    logger().info("slack action", extra={"action": action.action_id, "value": action.value})
    return _answer(HTTPStatus.OK, text)


def handle(request: APIGatewayProxyEventV2Model, context: Any) -> dict[str, Any]:
    """The Lambda's one call: route the parsed API Gateway HTTP API (payload 2.0) request (its body kept as sent:
    the signature is over those bytes)."""
    return dict(app.resolve(request.model_dump(mode="json", by_alias=True, exclude_none=True), context))
