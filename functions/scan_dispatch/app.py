"""Lambda handler for the daily schedule (parsed with :class:`chipwise.models.events.ScheduledEvent`): queue one
scan per account and region the settings name."""

from __future__ import annotations

from typing import Any

from aws_lambda_powertools.logging import correlation_paths

from chipwise.edges import count, parsed_event
from chipwise.models.events import ScheduledEvent
from chipwise.observability import logger, metrics, tracer
from chipwise.pipeline.fanout import dispatch_on_schedule


@metrics().log_metrics
@tracer().capture_lambda_handler
@logger().inject_lambda_context(clear_state=True, correlation_id_path=correlation_paths.EVENT_BRIDGE)
@parsed_event(ScheduledEvent, "a scheduled event", dead_letter_as="scan_dispatch")
def handler(schedule: ScheduledEvent, context: Any) -> dict[str, Any]:
    report = dispatch_on_schedule(schedule)
    count("ScansQueued", report.sent)
    return report.as_dict()
