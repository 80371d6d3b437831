"""Lambda handler for ``ScanCompleted`` events: submit benchmark jobs for the account's migration findings (the
event is parsed with :class:`chipwise.models.events.ScanCompletedEvent`; a malformed one is rejected, not retried)."""

from __future__ import annotations

from typing import Any

from aws_lambda_powertools.logging import correlation_paths
from aws_lambda_powertools.utilities.typing import LambdaContext

from chipwise.act.benchmarks.dispatch import handle_scan_completed_event
from chipwise.edges import count
from chipwise.observability import logger, metrics, tracer


@metrics().log_metrics
@tracer().capture_lambda_handler
@logger().inject_lambda_context(clear_state=True, correlation_id_path=correlation_paths.EVENT_BRIDGE)
def handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    summary = handle_scan_completed_event(event)
    count("BenchmarksSubmitted", summary.get("submitted", 0))
    return summary
