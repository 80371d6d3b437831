"""Lambda handler for the daily schedule (digests and alerts) and ``ScanCompleted`` events (that account's alerts),
parsed with :class:`chipwise.models.events.NotifyTrigger` (anything else is rejected with its reason, not retried);
sends from the outbox and counts what was sent and what failed."""

from __future__ import annotations

from typing import Any

from aws_lambda_powertools.logging import correlation_paths

from chipwise.edges import count, parsed_event
from chipwise.models.events import NotifyTrigger
from chipwise.observability import logger, metrics, tracer
from chipwise.pipeline.notify import notify_on


@metrics().log_metrics
@tracer().capture_lambda_handler
@logger().inject_lambda_context(clear_state=True, correlation_id_path=correlation_paths.EVENT_BRIDGE)
@parsed_event(NotifyTrigger, "a ScanCompleted nor a scheduled event", dead_letter_as="notify")
def handler(trigger: NotifyTrigger, context: Any) -> dict[str, Any]:
    result = notify_on(trigger)
    count("MessagesSent", result.sent)
    count("MessagesFailed", result.failed)
    count("MessagesUndelivered", result.undelivered)  # the alarm watches this
    return result.answer()
