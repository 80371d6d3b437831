"""Lambda handler for AWS Batch "Batch Job State Change" events of benchmark jobs (parsed with
:class:`chipwise.models.events.BatchJobStateChangeEvent`): record the result and re-price the finding."""

from __future__ import annotations

from typing import Any

from aws_lambda_powertools.logging import correlation_paths
from aws_lambda_powertools.utilities.typing import LambdaContext

from chipwise.act.benchmarks.results import handle_state_change_event
from chipwise.observability import logger, metrics, tracer


@metrics().log_metrics
@tracer().capture_lambda_handler
@logger().inject_lambda_context(clear_state=True, correlation_id_path=correlation_paths.EVENT_BRIDGE)
def handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    return handle_state_change_event(event).model_dump(mode="json", exclude_none=True)
