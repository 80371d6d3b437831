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

import hashlib
import hmac
import json
from collections.abc import Mapping
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
from chipwise.errors import ChipwiseError, ConfigError, InvalidInput
from chipwise.observability import logger
from chipwise.remediate.runner import apply_finding, remediation_context
from chipwise.settings import get_settings
from chipwise.store import Session, session_scope
from chipwise.store.repositories.findings import FindingRepository
from chipwise.store.repositories.remediations import DISMISSAL, RECORDED, RemediationEvent, RemediationRepository

MAX_AGE_SECONDS = 5 * 60
APPLY, SNOOZE, NOT_WASTE = "chipwise_apply", "chipwise_snooze", "chipwise_not_waste"
SNOOZE_DAYS = 7
NOT_WASTE_DAYS = 365
MAX_BODY_BYTES = 64 * 1024

app = APIGatewayHttpResolver()


# --- the signature ---------------------------------------------------------------------------------------------


def slack_signature(secret: str, timestamp: str, body: bytes) -> str:
    """``v0=`` + hex HMAC-SHA256 of ``v0:{timestamp}:{body}`` keyed with the signing secret."""
    base = b"v0:" + timestamp.encode() + b":" + body
    return "v0=" + hmac.new(secret.encode(), base, hashlib.sha256).hexdigest()


def verified(secret: str, headers: Mapping[str, str], body: bytes, now: datetime) -> bool:
    """Whether a request is Slack's and fresh: a timestamp within five minutes and a matching signature."""
    lowered = {k.lower(): v for k, v in headers.items()}
    timestamp = lowered.get("x-slack-request-timestamp", "")
    signature = lowered.get("x-slack-signature", "")
    if not secret or not timestamp.isdigit() or not signature:
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
    provider = SecretsProvider(boto3_client=aws_context(settings.region).client("secretsmanager"))
    try:
        value = provider.get(name, max_age=0)
    except Exception as exc:  # Powertools wraps every failure in GetParameterError
        raise ConfigError(f"cannot read the Slack signing secret {name!r}: {type(exc).__name__}") from exc
    text = (value.decode() if isinstance(value, bytes) else str(value or "")).strip()
    if text.startswith("{"):
        document = json.loads(text)
        text = str(document.get("signing_secret", "")) if isinstance(document, dict) else ""
    if not text:
        raise ConfigError(f"the Slack signing secret {name!r} is empty")
    return text


# --- the payload -----------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class SlackAction:
    action_id: str
    finding_id: str
    user: str  # "slack:<username> (<user id>)"


def parse_payload(body: bytes) -> SlackAction:
    """The first action of a ``block_actions`` payload (form field ``payload``, JSON)."""
    form = parse_qs(body.decode("utf-8", errors="replace"))
    raw = (form.get("payload") or [""])[0]
    try:
        payload = json.loads(raw)
    except json.JSONDecodeError as exc:
        raise InvalidInput("the request has no Slack interaction payload") from exc
    if not isinstance(payload, dict) or payload.get("type") != "block_actions":
        raise InvalidInput("only block_actions payloads are handled")
    found = payload.get("actions") or []
    action = found[0] if found and isinstance(found[0], dict) else {}
    user = payload.get("user") or {}
    action_id, value = str(action.get("action_id", "")), str(action.get("value", ""))
    if action_id not in {APPLY, SNOOZE, NOT_WASTE} or not value:
        raise InvalidInput(f"unknown action {action_id!r}")
    name = user.get("username") or user.get("name") or "unknown"
    return SlackAction(action_id, value, f"slack:{name} ({user.get('id', '?')})")


# --- acting ----------------------------------------------------------------------------------------------------


def act(session: Session, action: SlackAction, now: datetime) -> str:
    """Do what the button says; the sentence that answers the user."""
    if action.action_id == APPLY:
        outcome = apply_finding(
            session, remediation_context, action.finding_id, actor=action.user, source="slack", now=now, approved=True
        )
        if not outcome.ok:
            return f"{outcome.status}: {outcome.message}"
        return f"applied: {outcome.resource} (undo: `chipwise findings rollback {outcome.finding_id[:8]}`)"
    findings = FindingRepository(session)
    days = SNOOZE_DAYS if action.action_id == SNOOZE else NOT_WASTE_DAYS
    reason = f"snoozed {SNOOZE_DAYS} days" if action.action_id == SNOOZE else "not waste"
    finding = findings.suppress(
        action.finding_id, until=now + timedelta(days=days), reason=f"{reason} ({action.user}, Slack)", now=now
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


@app.post("/slack/actions")
def slack_actions() -> Response[str]:
    event = app.current_event
    body = (event.decoded_body or "").encode()
    if len(body) > MAX_BODY_BYTES:
        return _answer(HTTPStatus.REQUEST_ENTITY_TOO_LARGE, "request too large")
    now = utcnow()
    try:
        secret = signing_secret()
    except ConfigError as exc:
        logger().error("slack approvals are not configured", extra={"reason": str(exc)})
        return _answer(HTTPStatus.SERVICE_UNAVAILABLE, "Slack approvals are not configured")
    if not verified(secret, dict(event.headers or {}), body, now):
        logger().warning("slack request refused: bad or stale signature")
        return _answer(HTTPStatus.UNAUTHORIZED, "invalid signature")
    try:
        action = parse_payload(body)
        with session_scope(get_settings().database_url) as session:
            text = act(session, action, now)
    except ChipwiseError as exc:
        return _answer(HTTPStatus.OK, str(exc))  # Slack shows a 200's text; another status is "failed" only
    logger().info("slack action", extra={"action": action.action_id, "finding_id": action.finding_id})
    return _answer(HTTPStatus.OK, text)


def handle(request: APIGatewayProxyEventV2Model, context: Any) -> dict[str, Any]:
    """The Lambda's one call: route the parsed API Gateway HTTP API (payload 2.0) request (its body kept as sent:
    the signature is over those bytes)."""
    return dict(app.resolve(request.model_dump(mode="json", by_alias=True, exclude_none=True), context))
