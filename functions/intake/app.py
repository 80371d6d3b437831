"""Lambda handler for the public intake: API Gateway HTTP API events go to the Powertools resolver in
:mod:`chipwise.intake.api` (form, submissions, plans, signed links); the daily schedule's event
(``{"chipwise_job": "intake_retention"}``) queues the advisory digest and deletes what is past retention."""

from __future__ import annotations

from dataclasses import asdict
from typing import Any

from aws_lambda_powertools.logging import correlation_paths
from aws_lambda_powertools.utilities.typing import LambdaContext

from chipwise.intake.api import app
from chipwise.intake.service import run_retention
from chipwise.observability import logger, metrics, tracer

RETENTION_JOB = "intake_retention"


@metrics().log_metrics
@tracer().capture_lambda_handler
@logger().inject_lambda_context(clear_state=True, correlation_id_path=correlation_paths.API_GATEWAY_HTTP)
def handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    if event.get("chipwise_job") == RETENTION_JOB:
        return asdict(run_retention())
    return app.resolve(event, context)
