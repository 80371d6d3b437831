"""Lambda handler for Slack's interactive requests (the alert's Apply, Snooze 7 days and Not waste buttons):
API Gateway HTTP API events go to the Powertools resolver in :mod:`chipwise.pipeline.slack_actions`, which verifies
Slack's signature and timestamp before anything else."""

from __future__ import annotations

from typing import Any

from aws_lambda_powertools.logging import correlation_paths
from aws_lambda_powertools.utilities.typing import LambdaContext

from chipwise.observability import logger, metrics, tracer
from chipwise.pipeline.slack_actions import handle


@metrics().log_metrics
@tracer().capture_lambda_handler
@logger().inject_lambda_context(clear_state=True, correlation_id_path=correlation_paths.API_GATEWAY_HTTP)
def handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    return handle(event, context)
