"""Lambda handler for Slack's interactive requests (the alert's Apply, Snooze 7 days and Not waste buttons): an API
Gateway HTTP API (payload 2.0) request, parsed with the Powertools model, goes to the resolver in
:mod:`chipwise.pipeline.slack_actions`, which verifies Slack's signature and timestamp before anything else."""

from __future__ import annotations

from typing import Any

from aws_lambda_powertools.logging import correlation_paths
from aws_lambda_powertools.utilities.parser.models import APIGatewayProxyEventV2Model

from chipwise.edges import parsed_event
from chipwise.observability import logger, metrics, tracer
from chipwise.pipeline.slack_actions import handle


@metrics().log_metrics
@tracer().capture_lambda_handler
@logger().inject_lambda_context(clear_state=True, correlation_id_path=correlation_paths.API_GATEWAY_HTTP)
@parsed_event(APIGatewayProxyEventV2Model, "an HTTP API request")
def handler(request: APIGatewayProxyEventV2Model, context: Any) -> dict[str, Any]:
    return handle(request, context)
