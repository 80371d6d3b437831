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
from remediate_factories import ACCOUNT, gpu_instance, gpu_utilisation, idle_instance_finding, instance_state

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
    monkeypatch.setenv("CHIPWISE_SLACK_TEAM_ID", "T024BE7LD")
    monkeypatch.setenv("CHIPWISE_SLACK_APPROVERS", json.dumps({"*": ["U024BE7LH"], "999999999999": ["U0OTHER"]}))
    get_settings.cache_clear()
    slack_actions.signing_secret.cache_clear()
    yield use_db
    slack_actions.signing_secret.cache_clear()


def body_for(
    action_id: str, finding_id: str, *, value: str | None = None, user: str = "U024BE7LH", team: str = "T024BE7LD"
) -> str:
    """Slack's interactive request body: the form field ``payload``, a block_actions document (the button's value is
    the finding's full id and its account, as the alert builds it)."""
    payload = {
        "type": "block_actions",
        "user": {"id": user, "username": "alice", "name": "alice", "team_id": team},
        "team": {"id": team, "domain": "acme"},
        "api_app_id": "A0KRD7HC3",
        "trigger_id": "12466734323.1395872398",
        "response_url": "https://hooks.slack.com/actions/T024BE7LD/1/abc",
        "actions": [
            {
                "type": "button",
                "action_id": action_id,
                "block_id": "chipwise-approvals",
                "value": f"{finding_id}:{ACCOUNT}" if value is None else value,
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
    gpu_utilisation(aws, instance, 0.5)
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


def _audit(url: str, finding: str) -> list[tuple[str, str, str, str]]:
    with get_session_factory(url).begin() as session:
        return [(r.event, r.status, r.actor, r.result) for r in RemediationRepository(session).for_finding(finding)]


@pytest.mark.parametrize(
    ("body", "why"),
    [
        pytest.param(lambda f: body_for("chipwise_apply", f, team="T0OTHERTEAM"), "workspace T0OTHERTEAM", id="team"),
        pytest.param(lambda f: body_for("chipwise_apply", f, user="U0NOTNAMED"), "not an approver", id="user"),
        pytest.param(lambda f: body_for("chipwise_apply", f, value=f[:8]), "in full", id="prefix"),
        pytest.param(lambda f: body_for("chipwise_apply", f, value=f"{f[:8]}:{ACCOUNT}"), "in full", id="prefix+acct"),
        pytest.param(lambda f: body_for("chipwise_apply", f, value=f"{f}:999999999999"), "names account", id="acct"),
        pytest.param(lambda f: body_for("chipwise_not_waste", f, user="U0NOTNAMED"), "not an approver", id="dismiss"),
    ],
)
def test_a_press_from_elsewhere_or_by_someone_else_is_refused_and_audited(
    approvals: str, aws: Emulator, lambda_context: Any, body: Callable[[str], str], why: str
) -> None:
    instance = gpu_instance()
    with get_session_factory(approvals).begin() as session:
        finding = idle_instance_finding(session, instance)
    gpu_utilisation(aws, instance, 0.5)
    answer = _handler()(event_for(body(finding)), lambda_context)
    assert answer["statusCode"] == 200  # Slack shows the answer's text to the presser
    text = json.loads(answer["body"])["text"]
    assert text.startswith("refused: ") and why in text
    assert instance_state(instance) == ("running", {})
    ((event, status, actor, result),) = _audit(approvals, finding)
    assert (event, status) == ("refusal", "refused") and actor.startswith("slack:alice") and why in result
    with get_session_factory(approvals).begin() as session:
        assert session.get(Finding, finding).status == "open"  # type: ignore[union-attr]


def test_an_approver_of_the_account_or_of_a_user_group_may_press(approvals: str, aws: Emulator) -> None:
    from chipwise.clock import utcnow

    instance = gpu_instance()
    with get_session_factory(approvals).begin() as session:
        finding = idle_instance_finding(session, instance)
    gpu_utilisation(aws, instance, 0.5)
    get_settings.cache_clear()
    import os

    os.environ["CHIPWISE_SLACK_APPROVERS"] = json.dumps({ACCOUNT: ["S0PLATFORM"]})
    try:
        get_settings.cache_clear()
        press = slack_actions.parse_payload(body_for("chipwise_snooze", finding, user="U0MEMBER").encode())
        groups = {"S0PLATFORM": {"U0MEMBER"}}
        text = slack_actions.act(approvals, press, utcnow(), members_of=lambda g: groups.get(g, set()))
        assert text.startswith("snoozed 7 days"), text
        outsider = slack_actions.parse_payload(body_for("chipwise_snooze", finding, user="U0OUTSIDER").encode())
        text = slack_actions.act(approvals, outsider, utcnow(), members_of=lambda g: groups.get(g, set()))
        assert text.startswith("refused: ") and "not an approver" in text
    finally:
        del os.environ["CHIPWISE_SLACK_APPROVERS"]


def _payload_body(payload: Any) -> str:
    return "payload=" + quote(json.dumps(payload))


@pytest.mark.parametrize(
    "event",
    [
        pytest.param(lambda: {**event_for(body_for("chipwise_apply", "f")), "isBase64Encoded": True}, id="not-base64"),
        pytest.param(
            lambda: {
                **(e := event_for(body_for("chipwise_apply", "f"))),
                "headers": {**e["headers"], "x-slack-request-timestamp": "9" * 400},
            },
            id="400-digit-timestamp",
        ),
        pytest.param(
            lambda: event_for(_payload_body({"type": "block_actions", "user": {"id": "U1"}, "actions": {"x": 1}})),
            id="actions-not-a-list",
        ),
        pytest.param(
            lambda: event_for(_payload_body({"type": "block_actions", "user": "U1", "actions": [{"action_id": 1}]})),
            id="user-not-an-object",
        ),
        pytest.param(lambda: event_for("payload=%7B%22type%22%3A"), id="truncated-json"),
        pytest.param(lambda: event_for(_payload_body([1, 2, 3])), id="payload-a-list"),
    ],
)
def test_a_malformed_request_is_400_never_500(
    approvals: str, aws: Emulator, lambda_context: Any, event: Callable[[], dict[str, Any]]
) -> None:
    answer = _handler()(event(), lambda_context)
    assert answer["statusCode"] == 400, answer
