"""Lambda handler for neuron-monitor reports landing in S3 under ``neuron/``: an S3 ObjectCreated notification,
the EventBridge "Object Created" event, or S3 notifications delivered through SQS (parsed with
:class:`chipwise.models.events.ObjectCreatedEvent`; any other event fails the invocation with its reason). Parse,
aggregate per instance, runtime and hour, store."""

from __future__ import annotations

from typing import Any

from chipwise.edges import count, parsed_event
from chipwise.models.events import ObjectCreatedEvent
from chipwise.observability import logger, metrics, tracer
from chipwise.pipeline.neuron_ingest import ingest_event

# The S3 request id of a notification (direct or through SQS: the message id), else the EventBridge event id.
CORRELATION_ID = 'Records[0].responseElements."x-amz-request-id" || Records[0].messageId || id'
SHAPES = "an S3 ObjectCreated notification, an EventBridge 'Object Created' event or SQS messages of S3 notifications"


@metrics().log_metrics
@tracer().capture_lambda_handler
@logger().inject_lambda_context(clear_state=True, correlation_id_path=CORRELATION_ID)
@parsed_event(ObjectCreatedEvent, SHAPES, reject=False, dead_letter_as="ingest_neuron")
def handler(created: ObjectCreatedEvent, context: Any) -> dict[str, Any]:
    result = ingest_event(created)
    count("ReportsIngested", result.reports)
    count("LinesRejected", result.malformed_lines)
    return result.answer()
