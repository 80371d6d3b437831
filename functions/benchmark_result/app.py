"""Lambda handler for AWS Batch "Batch Job State Change" events of benchmark jobs (parsed with
:class:`chipwise.models.events.BatchJobStateChangeEvent`; a malformed one is rejected with its reason, not
retried): record the result and re-price the finding."""

from __future__ import annotations

from typing import Any

from aws_lambda_powertools.logging import correlation_paths

from chipwise.edges import parsed_event
from chipwise.models.events import BatchJobStateChangeEvent
from chipwise.observability import logger, metrics, tracer
from chipwise.pipeline.benchmarks import record_state_change


@metrics().log_metrics
@tracer().capture_lambda_handler
@logger().inject_lambda_context(clear_state=True, correlation_id_path=correlation_paths.EVENT_BRIDGE)
@parsed_event(BatchJobStateChangeEvent, "a Batch job state change", dead_letter_as="benchmark_result")
def handler(event: BatchJobStateChangeEvent, context: Any) -> dict[str, Any]:
    return record_state_change(event).model_dump(mode="json", exclude_none=True)
