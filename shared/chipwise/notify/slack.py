"""Slack: Block Kit messages within Slack's limits, and a sender for an incoming webhook.

Limits (aws.md §7.2): at most 50 blocks, at most 3,000 characters of section text, and around 13,000
characters of block text in all; a message that breaks one is refused with HTTP 400. Long lists are cut
and end with "…and N more" so the message is always accepted. Every value from AWS is escaped with the
``slack`` filter in the templates (``<!channel>`` or ``*bold*`` in a tag cannot ping or format), and the
body is serialised with ``json.dumps`` (by httpx), never by string concatenation.

The webhook URL is a secret: it comes from Secrets Manager or SSM Parameter Store through Powertools
parameters, and it never appears in a log line or an error.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Sequence
from email.utils import parsedate_to_datetime
from typing import TYPE_CHECKING, Any

from chipwise.clock import utcnow
from chipwise.errors import ConfigError
from chipwise.notify.digest import Alert, Digest, FindingLine
from chipwise.notify.outbox import SLACK_MAX_BLOCKS, SLACK_MAX_SECTION_TEXT, SendError, SlackPayload
from chipwise.remediate.approvers import button_value
from chipwise.remediate.eligible import may_apply
from chipwise.render import money, render

if TYPE_CHECKING:
    import httpx
from chipwise.settings import Settings
from chipwise.store.repositories.messaging import OutboxRecord

HEADER_MAX = 150
GROUP_TEXT = 1500  # characters for each "what changed" list, so the whole message stays well under 13k
MAX_INLINE_WAIT = 30.0  # wait for a Retry-After this long inside one drain; longer ones reschedule the row
DEFAULT_RETRY_AFTER = 1.0


# --- Block Kit building ------------------------------------------------------------------------------------


def clip(text: str, limit: int) -> str:
    """``text`` cut to ``limit`` characters with an ellipsis, never through an escape such as ``&lt;``."""
    if len(text) <= limit:
        return text
    cut = text[: limit - 1]
    amp = cut.rfind("&")
    if amp != -1 and ";" not in cut[amp:]:
        cut = cut[:amp]
    return cut.rstrip() + "…"


def more_line(count: int) -> str:
    return f"…and {count} more"


def pack_lines(lines: Sequence[str], *, limit: int = SLACK_MAX_SECTION_TEXT, more: int = 0) -> str:
    """As many whole lines as fit in ``limit`` characters, then "…and N more" for the rest (and ``more``)."""
    kept: list[str] = []
    for index, line in enumerate(lines):
        rest = len(lines) - index - 1 + more
        tail = [more_line(rest)] if rest else []
        piece = clip(line, limit - (len(tail[0]) + 1 if tail else 0))
        if len("\n".join([*kept, piece, *tail])) > limit:
            # the previous step's tail (the same count) fitted after ``kept``
            return "\n".join([*kept, more_line(len(lines) - index + more)])
        kept.append(piece)
    return "\n".join([*kept, *([more_line(more)] if more else [])])


def section(text: str) -> dict[str, Any]:
    return {"type": "section", "text": {"type": "mrkdwn", "text": clip(text, SLACK_MAX_SECTION_TEXT)}}


def header(text: str) -> dict[str, Any]:
    return {"type": "header", "text": {"type": "plain_text", "text": clip(text, HEADER_MAX), "emoji": False}}


def context(text: str) -> dict[str, Any]:
    return {"type": "context", "elements": [{"type": "mrkdwn", "text": clip(text, SLACK_MAX_SECTION_TEXT)}]}


DIVIDER: dict[str, Any] = {"type": "divider"}
BUTTON_TEXT_MAX = 75
SUPPRESS_ANY = "ask the person who runs Chipwise to suppress it by the finding's id (shown above), until a date"
BUTTON_URL_MAX = 3000


def button(text: str, url: str, action_id: str) -> dict[str, Any]:
    """A link button (Block Kit: plain-text label of at most 75 characters, a URL of at most 3,000)."""
    return {
        "type": "button",
        "text": {"type": "plain_text", "text": clip(text, BUTTON_TEXT_MAX), "emoji": False},
        "url": url[:BUTTON_URL_MAX],
        "action_id": action_id[:255],
    }


def actions(*buttons: dict[str, Any]) -> dict[str, Any]:
    return {"type": "actions", "elements": list(buttons)[:25]}


def with_button(block: dict[str, Any], link: dict[str, Any]) -> dict[str, Any]:
    """A section with a button beside its text (the section's ``accessory``); none without a URL."""
    return {**block, "accessory": link} if link["url"] else block


def fit_blocks(blocks: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """At most 50 blocks: the tail is replaced by one "…and N more" context block."""
    if len(blocks) <= SLACK_MAX_BLOCKS:
        return blocks
    kept = blocks[: SLACK_MAX_BLOCKS - 1]
    return [*kept, context(f"{more_line(len(blocks) - len(kept))} blocks (see the email digest)")]


def _message(text: str, blocks: list[dict[str, Any]]) -> dict[str, Any]:
    """The webhook body, validated against the outbox's Slack shape."""
    return SlackPayload(text=clip(text.strip(), 3000), blocks=fit_blocks(blocks)).model_dump(mode="json")


def digest_message(digest: Digest) -> dict[str, Any]:
    """The daily digest as a Block Kit message: summary, chart, top findings, what changed."""
    blocks: list[dict[str, Any]] = [
        header(f"Chipwise digest · {digest.account_id}"),
        section(render("slack/digest_summary.mrkdwn.j2", digest=digest).strip()),
    ]
    if digest.by_rule:
        bars = [render("slack/rule_bar.mrkdwn.j2", bar=bar).strip() for bar in digest.by_rule]
        blocks += [DIVIDER, section("*Waste by rule*\n" + pack_lines(bars, limit=SLACK_MAX_SECTION_TEXT - 20))]
    if digest.top:
        blocks += [DIVIDER, section("*Top findings by saving*")]
        blocks += [
            with_button(
                section(render("slack/finding.mrkdwn.j2", f=f).strip()),
                button("AWS console", f.console_url, f"console-{f.short_id}"),
            )
            for f in digest.top
        ]
        if digest.more_count:
            blocks.append(context(more_line(digest.more_count) + " open findings"))
    changes = _change_groups(digest)
    if changes:
        blocks.append(DIVIDER)
        blocks += [section(f"*{title}*\n" + pack_lines(lines, limit=GROUP_TEXT)) for title, lines in changes]
    if digest.report_link:
        blocks.append(actions(button("Open the scan report", digest.report_link, "report")))
    report = "" if digest.report_link else f" · visual report: {digest.report_step}"
    blocks.append(context(f"Generated {digest.generated_at:%Y-%m-%d %H:%M} UTC · monthly = 730 h{report}"))
    blocks.append(context(f"To hide a finding for a while: {SUPPRESS_ANY}"))
    if digest.baseline:
        blocks.insert(
            2, context("First scan of this account: this digest is the baseline; no alerts were sent for it.")
        )
    return _message(render("slack/digest_fallback.txt.j2", digest=digest), blocks)


def _change_groups(digest: Digest) -> list[tuple[str, list[str]]]:
    groups = [
        ("New", [render("slack/change.mrkdwn.j2", change="new", f=f).strip() for f in digest.new]),
        ("Resolved", [render("slack/change.mrkdwn.j2", change="resolved", f=f).strip() for f in digest.resolved]),
        ("Benchmarked", [render("slack/benchmarked.mrkdwn.j2", b=b).strip() for b in digest.benchmarked]),
    ]
    return [(title, lines) for title, lines in groups if lines]


def choice(text: str, action_id: str, value: str, style: str | None = None) -> dict[str, Any]:
    """An interactive button: Slack posts ``action_id`` and ``value`` to the app's request URL when pressed."""
    found: dict[str, Any] = {
        "type": "button",
        "text": {"type": "plain_text", "text": clip(text, BUTTON_TEXT_MAX), "emoji": False},
        "action_id": action_id[:255],
        "value": value[:2000],
    }
    return {**found, "style": style} if style else found


def approval_buttons(f: FindingLine) -> dict[str, Any]:
    """Apply (only when the finding's next step is mechanical), Snooze 7 days and Not waste: the buttons the Slack
    approvals function (:mod:`chipwise.pipeline.slack_actions`) answers."""
    value = button_value(f.finding_id, f.account_id)  # the full id and its account: checked against the finding
    buttons = [
        *(
            [choice("Apply", "chipwise_apply", value, "primary")]
            if may_apply(f.resource_kind, f.action, f.instance_count)
            else []
        ),
        choice("Snooze 7 days", "chipwise_snooze", value),
        choice("Not waste", "chipwise_not_waste", value, "danger"),
    ]
    return {**actions(*buttons), "block_id": "chipwise-approvals"}


def alert_message(alert: Alert, approvals: bool = False) -> dict[str, Any]:
    """One new finding above the threshold; with ``approvals`` (a Slack app with a signing secret) its buttons."""
    f = alert.finding
    blocks = [
        header(f"Chipwise alert · {money(f.monthly_savings_usd, 0)} a month"),
        section(render("slack/alert.mrkdwn.j2", alert=alert).strip()),
        *(
            [actions(button("Open in the AWS console", f.console_url, f"console-{f.short_id}"))]
            if f.console_url
            else []
        ),
        *([approval_buttons(f)] if approvals else []),
        context(f"{f.rule_label} · first seen {f.first_seen:%Y-%m-%d %H:%M} UTC · finding `{f.short_id}`"),
    ]
    return _message(render("slack/alert_fallback.txt.j2", alert=alert), blocks)


# --- the webhook URL ---------------------------------------------------------------------------------------


def resolve_webhook_url(name: str, settings: Settings) -> str:
    """The webhook URL stored under ``name``: an SSM parameter when it starts with "/" or "ssm:", otherwise a
    Secrets Manager secret. The value is the URL itself or JSON with a ``url`` (or ``webhook_url``) key. The AWS SDK
    is imported here, when a message is sent: building the blocks (``notify --dry-run``) never loads it."""
    from aws_lambda_powertools.utilities.parameters import SecretsProvider, SSMProvider

    from chipwise.aws import aws_context

    ctx = aws_context(settings.region)
    try:
        if name.startswith(("/", "ssm:")):
            ssm = SSMProvider(boto3_client=ctx.client("ssm"))
            value = ssm.get(name.removeprefix("ssm:"), decrypt=True, max_age=0)
        else:
            secrets = SecretsProvider(boto3_client=ctx.client("secretsmanager"))
            value = secrets.get(name, max_age=0)
    except Exception as exc:  # Powertools wraps every failure in GetParameterError
        raise ConfigError(f"cannot read the Slack webhook from {name!r} (slack_webhook_secret_name): {exc}") from exc
    return _url_from_value(value, name)


def _url_from_value(value: object, name: str) -> str:
    text = value.decode() if isinstance(value, bytes) else str(value or "")
    text = text.strip()
    if text.startswith("{"):
        try:
            document = json.loads(text)
        except json.JSONDecodeError:
            document = {}
        text = str(document.get("url") or document.get("webhook_url") or "") if isinstance(document, dict) else ""
    if not text.startswith(("https://", "http://")):
        raise ConfigError(f"the Slack webhook stored in {name!r} is not a URL (expected https://hooks.slack.com/...)")
    return text


# --- sending -----------------------------------------------------------------------------------------------


def retry_after_seconds(value: str | None) -> float:
    """Retry-After as seconds: a number, or an HTTP date; a missing or odd header means one second."""
    if not value:
        return DEFAULT_RETRY_AFTER
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        return max(0.0, (parsedate_to_datetime(value) - utcnow()).total_seconds())
    except (TypeError, ValueError):
        return DEFAULT_RETRY_AFTER


class SlackWebhookSender:
    """Posts Slack rows to an incoming webhook, honouring HTTP 429 Retry-After.

    A short Retry-After is waited out here (``sleep`` is injectable for tests); a long one, or a third 429 in
    a row, hands the row back to the outbox with ``retry_after`` so the next drain sends it.
    """

    def __init__(
        self,
        webhook_url: str | Callable[[], str],
        *,
        client: httpx.Client | None = None,
        sleep: Callable[[float], None] = time.sleep,
        max_inline_wait: float = MAX_INLINE_WAIT,
        max_inline_retries: int = 2,
    ) -> None:
        self._webhook_url = webhook_url
        self._url: str | None = webhook_url if isinstance(webhook_url, str) else None
        if client is None:
            import httpx  # only a drain that posts to Slack needs it

            client = httpx.Client(timeout=httpx.Timeout(10.0), follow_redirects=False)
        self._client = client
        self._sleep = sleep
        self._max_inline_wait = max_inline_wait
        self._max_inline_retries = max_inline_retries

    def _target(self) -> str:
        if self._url is None:
            assert callable(self._webhook_url)
            self._url = self._webhook_url()
        return self._url

    def send(self, message: OutboxRecord) -> str | None:
        import httpx

        body = SlackPayload.model_validate(message.payload).model_dump(mode="json")
        url = self._target()
        for attempt in range(self._max_inline_retries + 1):
            try:
                response = self._client.post(url, json=body)
            except httpx.HTTPError as exc:
                raise SendError(f"Slack webhook unreachable: {type(exc).__name__}") from exc
            if response.status_code == 429:
                wait = retry_after_seconds(response.headers.get("Retry-After"))
                if wait > self._max_inline_wait or attempt == self._max_inline_retries:
                    raise SendError(f"Slack rate limit (HTTP 429, Retry-After {wait:g}s)", retry_after=wait)
                self._sleep(wait)
                continue
            if response.is_success:
                return None
            reason = response.text.strip()[:200] or response.reason_phrase
            # 5xx may pass; 4xx (invalid_blocks, no_service, channel_is_archived) will not on its own.
            raise SendError(f"Slack HTTP {response.status_code}: {reason}", permanent=response.status_code < 500)
        raise AssertionError("unreachable")  # the loop always returns or raises

    def close(self) -> None:
        self._client.close()


def slack_sender(settings: Settings) -> SlackWebhookSender | None:
    """The production Slack sender, or None when no webhook is configured (Slack is then skipped)."""
    name = settings.slack_webhook_secret_name
    if not name:
        return None
    return SlackWebhookSender(lambda: resolve_webhook_url(name, settings))
