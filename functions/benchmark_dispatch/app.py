"""Lambda handler for ``ScanCompleted`` events (parsed with :class:`chipwise.models.events.ScanCompletedEvent`; a
malformed one is rejected with its reason, not retried): submit benchmark jobs for the account's migration
findings."""

from __future__ import annotations

from typing import Any

from aws_lambda_powertools.logging import correlation_paths

from chipwise.edges import count, parsed_event
from chipwise.models.events import ScanCompletedEvent
from chipwise.observability import logger, metrics, tracer
from chipwise.pipeline.benchmarks import benchmark_after_scan


@metrics().log_metrics
@tracer().capture_lambda_handler
@logger().inject_lambda_context(clear_state=True, correlation_id_path=correlation_paths.EVENT_BRIDGE)
@parsed_event(ScanCompletedEvent, "a ScanCompleted event", dead_letter_as="benchmark_dispatch")
def handler(event: ScanCompletedEvent, context: Any) -> dict[str, Any]:
    summary = benchmark_after_scan(event)
    count("BenchmarksSubmitted", summary.submitted)
    return summary.answer()
