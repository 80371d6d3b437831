"""Lambda handler for the scan queue: each SQS message is one ScanRequest. Powertools' BatchProcessor parses every
record with :class:`ScanRequestRecord` and reports failed messages individually (partial batch response): a
malformed message or a failed scan is retried by SQS, then dead-lettered, without re-running the others."""

from __future__ import annotations

from typing import Any

from aws_lambda_powertools.metrics import MetricUnit
from aws_lambda_powertools.utilities.batch import EventType, process_partial_response

from chipwise.edges import QuietBatchProcessor, count
from chipwise.errors import UpstreamError
from chipwise.models.events import ScanRequestRecord
from chipwise.observability import logger, metrics, tracer
from chipwise.pipeline.scan import scan_account_request

# A batch whose every record failed is reported like any other (each failed message is retried on its own).
processor = QuietBatchProcessor(event_type=EventType.SQS, model=ScanRequestRecord, raise_on_entire_batch_failure=False)


@tracer().capture_method
def record_handler(record: ScanRequestRecord) -> str:
    """Scan the account a message names and publish its EMF metrics; a failed scan fails only this record."""
    logger().set_correlation_id(record.messageId)
    document = scan_account_request(record.body)
    count("ScanDuration", (document.finished_at - document.started_at).total_seconds(), MetricUnit.Seconds)
    count("ApiCalls", sum(document.api_calls.values()))
    count("Findings", len(document.findings))
    count("EstimatedSavings", float(sum(f.estimated_monthly_savings_usd for f in document.findings)), MetricUnit.Count)
    if document.status == "failed":
        raise UpstreamError(f"scan of {record.body.account_id} in {record.body.region} failed: {document.errors}")
    return document.scan_id


@metrics().log_metrics
@tracer().capture_lambda_handler
@logger().inject_lambda_context(clear_state=True)
def handler(event: dict[str, Any], context: Any) -> dict[str, Any]:
    return dict(process_partial_response(event, record_handler, processor, context))
