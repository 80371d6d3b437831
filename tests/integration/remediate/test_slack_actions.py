"""The Slack approvals function (functions/slack_actions) on the emulator: a correctly signed Apply acts as the Slack
user who pressed it; a wrongly signed or replayed (6 minutes old) request is 401 and changes nothing; Snooze and Not
waste suppress the finding (Not waste recorded as a dismissal). The signing secret comes from Secrets Manager."""

from __future__ import annotations

import hashlib
import hmac
import importlib.util
import json
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any
from urllib.parse import quote

import boto3
import pytest
from remediate_factories import gpu_instance, idle_instance_finding, instance_state

from chipwise.pipeline import slack_actions
from chipwise.settings import get_settings
from chipwise.store.repositories.remediations import RemediationRepository
from chipwise.store.session import get_session_factory
from chipwise.store.tables import Finding
from chipwise_devkit.emulator import Emulator

ROOT = Path(__file__).resolve().parents[3]
SECRET = "8f742231b10e8888abcd99yyyzzz85a5"  # the shape of a Slack signing secret (hex-like, 32 characters)


def _handler() -> Callable[[dict[str, Any], Any], dict[str, Any]]:
    spec = importlib.util.spec_from_file_location("chipwise_slack_actions_app", ROOT / "functions/slack_actions/app.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.handler  # type: ignore[no-any-return]


@pytest.fixture
def approvals(aws: Emulator, use_db: str, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """The signing secret stored in Secrets Manager (as JSON) and named in the settings."""
    arn = boto3.client("secretsmanager").create_secret(
        Name="chipwise/slack-signing", SecretString=json.dumps({"signing_secret": SECRET})
    )["ARN"]
    monkeypatch.setenv("CHIPWISE_SLACK_SIGNING_SECRET_NAME", arn)
    get_settings.cache_clear()
    slack_actions.signing_secret.cache_clear()
    yield use_db
    slack_actions.signing_secret.cache_clear()


def body_for(action_id: str, finding_id: str) -> str:
    """Slack's interactive request body: the form field ``payload``, a block_actions document."""
    payload = {
        "type": "block_actions",
        "user": {"id": "U024BE7LH", "username": "alice", "name": "alice", "team_id": "T024BE7LD"},
        "team": {"id": "T024BE7LD", "domain": "acme"},
        "api_app_id": "A0KRD7HC3",
        "trigger_id": "12466734323.1395872398",
        "response_url": "https://hooks.slack.com/actions/T024BE7LD/1/abc",
        "actions": [
            {
                "type": "button",
                "action_id": action_id,
                "block_id": "chipwise-approvals",
                "value": finding_id,
                "text": {"type": "plain_text", "text": "Apply"},
                "action_ts": "1764212400.000000",
            }
        ],
    }
    return "payload=" + quote(json.dumps(payload))


def event_for(body: str, *, secret: str = SECRET, age_seconds: int = 0) -> dict[str, Any]:
    """An API Gateway HTTP API (v2) event, signed as Slack signs: v0=hex(HMAC-SHA256(secret, v0:ts:body))."""
    timestamp = str(int(time.time()) - age_seconds)
    digest = hmac.new(secret.encode(), f"v0:{timestamp}:{body}".encode(), hashlib.sha256).hexdigest()
    return {
        "version": "2.0",
        "routeKey": "POST /slack/actions",
        "rawPath": "/slack/actions",
        "rawQueryString": "",
        "headers": {
            "content-type": "application/x-www-form-urlencoded",
            "x-slack-request-timestamp": timestamp,
            "x-slack-signature": f"v0={digest}",
        },
        "requestContext": {
            "accountId": "123456789012",
            "apiId": "abc123",
            "domainName": "abc123.execute-api.us-east-1.amazonaws.com",
            "domainPrefix": "abc123",
            "http": {
                "method": "POST",
                "path": "/slack/actions",
                "protocol": "HTTP/1.1",
                "sourceIp": "54.209.1.1",
                "userAgent": "Slackbot 1.0 (+https://api.slack.com/robots)",
            },
            "requestId": "JKJaXmPLvHcESHA=",
            "routeKey": "POST /slack/actions",
            "stage": "$default",
            "time": time.strftime("%d/%b/%Y:%H:%M:%S +0000", time.gmtime(int(timestamp))),
            "timeEpoch": int(timestamp) * 1000,
        },
        "body": body,
        "isBase64Encoded": False,
    }


def test_a_correctly_signed_apply_acts_as_the_slack_user(approvals: str, aws: Emulator, lambda_context: Any) -> None:
    instance = gpu_instance()
    with get_session_factory(approvals).begin() as session:
        finding = idle_instance_finding(session, instance)
    answer = _handler()(event_for(body_for("chipwise_apply", finding)), lambda_context)
    assert answer["statusCode"] == 200
    assert json.loads(answer["body"])["text"].startswith(f"applied: instance {instance}")
    assert instance_state(instance)[0] == "stopped"
    with get_session_factory(approvals).begin() as session:
        (row,) = RemediationRepository(session).for_finding(finding)
        assert (row.event, row.status, row.actor, row.source) == (
            "apply",
            "applied",
            "slack:alice (U024BE7LH)",
            "slack",
        )


@pytest.mark.parametrize(
    "forge",
    [
        pytest.param(lambda body: event_for(body, secret="not-the-signing-secret"), id="wrongly-signed"),
        pytest.param(lambda body: event_for(body, age_seconds=6 * 60), id="replayed-6-minutes-old"),
        pytest.param(
            lambda body: {**event_for(body), "body": body.replace("chipwise_apply", "chipwise_snooze")},
            id="body-changed-after-signing",
        ),
    ],
)
def test_a_forged_or_stale_request_is_401_and_changes_nothing(
    approvals: str, aws: Emulator, lambda_context: Any, forge: Callable[[str], dict[str, Any]]
) -> None:
    instance = gpu_instance()
    with get_session_factory(approvals).begin() as session:
        finding = idle_instance_finding(session, instance)
    answer = _handler()(forge(body_for("chipwise_apply", finding)), lambda_context)
    assert answer["statusCode"] == 401
    assert instance_state(instance) == ("running", {})
    with get_session_factory(approvals).begin() as session:
        assert RemediationRepository(session).for_finding(finding) == []
        assert session.get(Finding, finding).status == "open"  # type: ignore[union-attr]


def test_not_waste_suppresses_with_the_reason_and_counts_as_a_dismissal(
    approvals: str, aws: Emulator, lambda_context: Any
) -> None:
    instance = gpu_instance()
    with get_session_factory(approvals).begin() as session:
        finding = idle_instance_finding(session, instance)
        snoozed = idle_instance_finding(session, gpu_instance())
    for action, target in (("chipwise_not_waste", finding), ("chipwise_snooze", snoozed)):
        answer = _handler()(event_for(body_for(action, target)), lambda_context)
        assert answer["statusCode"] == 200, answer
    with get_session_factory(approvals).begin() as session:
        row = session.get(Finding, finding)
        assert row is not None and row.status == "suppressed"
        assert row.suppress_reason == "not waste (slack:alice (U024BE7LH), Slack)"
        (event,) = RemediationRepository(session).for_finding(finding)
        assert (event.event, event.action, event.actor) == ("dismissal", "not_waste", "slack:alice (U024BE7LH)")
        later = session.get(Finding, snoozed)
        assert later is not None and later.status == "suppressed" and later.suppressed_until is not None
        assert 6.9 < (later.suppressed_until - event.created_at).total_seconds() / 86400 < 7.1
    assert instance_state(instance)[0] == "running"


def test_without_a_signing_secret_nothing_is_acted_on(aws: Emulator, use_db: str, lambda_context: Any) -> None:
    slack_actions.signing_secret.cache_clear()
    answer = _handler()(event_for(body_for("chipwise_apply", "00000000")), lambda_context)
    assert answer["statusCode"] == 503
