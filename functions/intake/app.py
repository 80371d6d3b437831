"""Lambda handler for the public intake, parsed with :class:`chipwise.models.events.IntakeEvent`: API Gateway
HTTP API requests (form, submissions, plans, signed links) go to the Powertools resolver; the daily schedule's
event (``{"chipwise_job": "intake_retention"}``) queues the advisory digest and deletes what is past retention."""

from __future__ import annotations

from typing import Any

from aws_lambda_powertools.logging import correlation_paths

from chipwise.edges import parsed_event
from chipwise.models.events import IntakeEvent
from chipwise.observability import logger, metrics, tracer
from chipwise.pipeline.intake import answer_intake


@metrics().log_metrics
@tracer().capture_lambda_handler
@logger().inject_lambda_context(clear_state=True, correlation_id_path=correlation_paths.API_GATEWAY_HTTP)
@parsed_event(IntakeEvent, "an HTTP API request nor the retention job")
def handler(event: IntakeEvent, context: Any) -> dict[str, Any]:
    return answer_intake(event, context)
