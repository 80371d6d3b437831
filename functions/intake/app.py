"""Lambda handler for the public intake (API Gateway HTTP API): the Powertools resolver in
:mod:`chipwise.intake.api` serves the form, takes submissions and shows plans."""

from __future__ import annotations

from typing import Any

from aws_lambda_powertools.logging import correlation_paths
from aws_lambda_powertools.utilities.typing import LambdaContext

from chipwise.intake.api import app
from chipwise.observability import logger, metrics, tracer


@metrics().log_metrics
@tracer().capture_lambda_handler
@logger().inject_lambda_context(clear_state=True, correlation_id_path=correlation_paths.API_GATEWAY_HTTP)
def handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    return app.resolve(event, context)
