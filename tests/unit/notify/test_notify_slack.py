"""Slack Block Kit messages: within Slack's limits however many findings there are, escaped, with a fallback."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from typing import Any

import pytest
from notify_factories import HOSTILE, NOW, line

from chipwise.errors import ConfigError
from chipwise.notify.digest import AccountSnapshot, build_alert, build_digest
from chipwise.notify.outbox import SLACK_MAX_BLOCKS, SLACK_MAX_SECTION_TEXT, validate_payload
from chipwise.notify.slack import (
    _url_from_value,
    alert_message,
    clip,
    digest_message,
    fit_blocks,
    pack_lines,
    retry_after_seconds,
    section,
)
from chipwise.remediate.eligible import may_apply
from chipwise.remediate.steps import FindingFacts, mechanical_action
from chipwise_devkit.fakes.webhook_sink import slack_problems


def _block_text(payload: dict[str, Any]) -> int:
    """Characters of text in the blocks (what Slack's overall message limit counts)."""
    total = 0
    for block in payload["blocks"]:
        texts = [block.get("text", {}), *block.get("elements", [])]
        total += sum(len(t.get("text", "")) for t in texts)
    return total


def test_pack_lines_keeps_whole_lines_and_counts_the_rest() -> None:
    # Given 100 lines of 50 characters
    lines = [f"{i:03d} " + "x" * 46 for i in range(100)]
    # When packed into 1,000 characters
    text = pack_lines(lines, limit=1000)
    # Then whole lines fit, the rest is counted, and the limit holds
    assert len(text) <= 1000
    kept = text.splitlines()
    assert kept[-1] == f"…and {100 - (len(kept) - 1)} more"
    assert all(len(k) == 50 for k in kept[:-1])
    # ...and a list that fits is unchanged, with extra items counted on request
    assert pack_lines(["a", "b"], limit=100) == "a\nb"
    assert pack_lines(["a", "b"], limit=100, more=7) == "a\nb\n…and 7 more"
    # ...and one huge line is clipped rather than dropped
    huge = pack_lines(["y" * 5000, "z" * 400], limit=300)
    assert len(huge) <= 300 and huge.startswith("yyy") and huge.endswith("…\n…and 1 more")


def test_clip_never_cuts_an_escape_in_half() -> None:
    assert clip("abc &lt;script&gt;", 7) == "abc…"
    assert clip("abc &lt;script&gt;", 9) == "abc &lt;…"
    assert clip("short", 10) == "short"
    assert section("x" * 4000)["text"]["text"].endswith("…")
    assert len(section("x" * 4000)["text"]["text"]) == SLACK_MAX_SECTION_TEXT


@pytest.mark.parametrize("count", [1, 10, 400])
def test_digest_message_stays_within_slack_limits(count: int) -> None:
    # Given a digest with many findings, all new, with long hostile names and summaries
    open_ = [
        line(f"{HOSTILE} endpoint-{i:04d} " + "n" * 200, str(100 + i), rule=f"rule_{i % 30}", summary=HOSTILE * 30)
        for i in range(count)
    ]
    snapshot = AccountSnapshot("123456789012", HOSTILE, NOW - timedelta(days=1), open_, open_[:count], [])
    digest = build_digest(snapshot, now=NOW)
    # When the Slack message is built
    payload = digest_message(digest)
    # Then Slack would accept it: a text fallback, at most 50 blocks, sections within 3,000 characters
    assert slack_problems(payload) == []
    assert validate_payload("slack", None, payload) == payload
    assert len(payload["blocks"]) <= SLACK_MAX_BLOCKS
    assert _block_text(payload) < 13_000
    assert payload["text"].startswith("Chipwise digest for ")
    # ...nothing from the data can ping or format
    dumped = json.dumps(payload, ensure_ascii=False)
    assert "<!channel>" not in dumped and "<script>" not in dumped and "*bold*" not in dumped
    # ...and what did not fit is counted
    if count > 10:
        assert f"…and {count - 10} more open findings" in dumped
        sections = [b for b in payload["blocks"] if b["type"] == "section"]
        assert "…and" in sections[-1]["text"]["text"]  # the resolved list was cut too


def test_alert_message_shape() -> None:
    # Given a new finding above the threshold
    snapshot = AccountSnapshot("123456789012", "Acme", NOW - timedelta(days=1), [line("chat", "2400.50")], [], [])
    alert = build_alert(snapshot, snapshot.open[0], now=NOW, threshold_usd=Decimal(500))
    # When built
    payload = alert_message(alert)
    # Then: a header with the money, the finding, a console button, context, and a fallback naming the resource
    assert [b["type"] for b in payload["blocks"]] == ["header", "section", "actions", "context"]
    (console,) = payload["blocks"][2]["elements"]
    assert console["type"] == "button" and console["url"] == snapshot.open[0].console_url
    assert "f-chat" in payload["blocks"][1]["text"]["text"]  # the finding id
    assert "to suppress finding f-chat until a date" in payload["blocks"][1]["text"]["text"]
    assert "chipwise " not in json.dumps(payload)  # a Slack reader has no CLI: no command to run
    assert payload["blocks"][0]["text"]["text"] == "Chipwise alert · $2,401 a month"
    assert "Migrate → inf2.xlarge ×2" in payload["blocks"][1]["text"]["text"]
    assert payload["text"].startswith("Chipwise alert: $2,401 a month on chat")


def test_alert_buttons_with_approvals() -> None:
    # Given an idle instance's finding (mechanical: it can be applied) and a migration (not mechanical)
    stop = line("gpu-box", "734.40", rule="gpu_idle", resource_kind="ec2_instance", action="stop")
    move = line("chat", "2400.50")
    for finding, labels in ((stop, ["Apply", "Snooze 7 days", "Not waste"]), (move, ["Snooze 7 days", "Not waste"])):
        snapshot = AccountSnapshot("123456789012", "Acme", NOW - timedelta(days=1), [finding], [], [])
        alert = build_alert(snapshot, finding, now=NOW, threshold_usd=Decimal(500))
        # When built for a Slack app with approvals, Then the buttons carry the finding id; without, there are none
        approvals = alert_message(alert, approvals=True)["blocks"]
        (buttons,) = [b for b in approvals if b.get("block_id") == "chipwise-approvals"]
        assert [e["text"]["text"] for e in buttons["elements"]] == labels
        assert {e["value"] for e in buttons["elements"]} == {
            f"{finding.finding_id}:{finding.account_id}"
        }  # the full id and its account
        assert [e["action_id"] for e in buttons["elements"]][-2:] == ["chipwise_snooze", "chipwise_not_waste"]
        assert not any(b.get("block_id") == "chipwise-approvals" for b in alert_message(alert)["blocks"])


def test_fit_blocks_caps_at_fifty() -> None:
    blocks = [section(str(i)) for i in range(80)]
    fitted = fit_blocks(blocks)
    assert len(fitted) == SLACK_MAX_BLOCKS
    assert fitted[-1]["elements"][0]["text"].startswith("…and 31 more blocks")


def test_retry_after_values() -> None:
    assert retry_after_seconds("3") == 3.0
    assert retry_after_seconds(None) == 1.0
    assert retry_after_seconds("soon") == 1.0
    assert retry_after_seconds("Wed, 21 Oct 2015 07:28:00 GMT") == 0.0  # a date in the past: go now


def test_webhook_values() -> None:
    assert _url_from_value("https://hooks.slack.com/services/T/B/x\n", "n") == "https://hooks.slack.com/services/T/B/x"
    assert _url_from_value('{"url": "https://hooks.slack.com/a"}', "n") == "https://hooks.slack.com/a"
    assert _url_from_value(b'{"webhook_url": "https://hooks.slack.com/b"}', "n") == "https://hooks.slack.com/b"
    with pytest.raises(ConfigError, match="is not a URL"):
        _url_from_value('{"token": "xoxb"}', "n")
    with pytest.raises(ConfigError, match="is not a URL"):
        _url_from_value("", "n")


def test_the_apply_button_is_offered_for_exactly_the_kinds_and_actions_with_a_mechanical_step() -> None:
    kinds = ("ec2_instance", "sagemaker_endpoint", "sagemaker_inference_component", "sagemaker_training_job")
    actions = ("stop", "delete", "rightsize", "schedule", "migrate")
    rules = ("gpu_idle", "inferentia_idle", "accelerator_off_hours", "endpoint_overprovisioned")

    def stepped(kind: str, action: str) -> bool:
        """Whether some finding of this kind and action (any rule, a smaller count of the same type) has a step."""
        facts = [
            FindingFacts(
                finding_id="f",
                rule_id=rule,
                resource_arn="arn",
                resource_variant=None,
                resource_kind=kind,
                instance_type="ml.g5.xlarge",
                instance_count=2,
                recommendation={"action": action, "target_count": 1},
                evidence={},
                last_seen=datetime(2026, 1, 1, tzinfo=UTC),
            )
            for rule in rules
        ]
        return any(mechanical_action(f) is not None for f in facts)

    assert {(k, a) for k in kinds for a in actions if may_apply(k, a)} == {
        (k, a) for k in kinds for a in actions if stepped(k, a)
    }


def test_a_single_instance_variant_s_schedule_offers_no_apply() -> None:
    # A variant keeps at least one instance: its off hours reach zero only with inference components (a person's job)
    assert not may_apply("sagemaker_endpoint", "schedule", 1)
    assert may_apply("sagemaker_endpoint", "schedule", 2) and may_apply("sagemaker_endpoint", "schedule")
    assert may_apply("ec2_instance", "schedule", 1)
