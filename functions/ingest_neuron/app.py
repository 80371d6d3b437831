"""Lambda handler for neuron-monitor reports landing in S3 under ``neuron/``: an S3 ObjectCreated notification,
the EventBridge "Object Created" event, or S3 notifications delivered through SQS (parsed by
:class:`chipwise.models.events.ObjectCreatedEvent`). Parse, aggregate per instance, runtime and hour, store."""

from __future__ import annotations

from typing import Any

from aws_lambda_powertools.utilities.typing import LambdaContext

from chipwise.edges import count
from chipwise.observability import logger, metrics, tracer
from chipwise.pipeline.neuron_ingest import ingest_event

# The S3 request id of a notification (direct or through SQS: the message id), else the EventBridge event id.
CORRELATION_ID = 'Records[0].responseElements."x-amz-request-id" || Records[0].messageId || id'


@metrics().log_metrics
@tracer().capture_lambda_handler
@logger().inject_lambda_context(clear_state=True, correlation_id_path=CORRELATION_ID)
def handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    result = ingest_event(event)
    count("ReportsIngested", result["reports"])
    count("LinesRejected", result["malformed_lines"])
    return result
