"""Lambda handler for the daily schedule (digests and alerts) and ``ScanCompleted`` events (that account's alerts),
parsed with Powertools parser models; sends from the outbox and counts what was sent and what failed."""

from __future__ import annotations

from typing import Any

from aws_lambda_powertools.logging import correlation_paths
from aws_lambda_powertools.utilities.typing import LambdaContext

from chipwise.act.notify.runner import handle_event
from chipwise.edges import count
from chipwise.observability import logger, metrics, tracer
from chipwise.settings import get_settings


@metrics().log_metrics
@tracer().capture_lambda_handler
@logger().inject_lambda_context(clear_state=True, correlation_id_path=correlation_paths.EVENT_BRIDGE)
def handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    result = handle_event(event, get_settings())
    count("MessagesSent", result.get("sent", 0))
    count("MessagesFailed", result.get("failed", 0))
    count("MessagesUndelivered", result.get("undelivered", 0))  # the alarm watches this
    return result
