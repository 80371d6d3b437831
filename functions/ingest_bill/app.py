"""Lambda handler for a delivered AWS Data Exports manifest (`metadata/BILLING_PERIOD=YYYY-MM/<export>-Manifest.json`):
the S3 ObjectCreated notification or EventBridge "Object Created" event (parsed with
:class:`chipwise.models.events.ObjectCreatedEvent`; any other event is rejected with its reason), then that billing
period read and stored by :func:`chipwise.pipeline.bill_ingest.ingest_event`."""

from __future__ import annotations

from typing import Any

from chipwise.edges import parsed_event
from chipwise.models.events import ObjectCreatedEvent
from chipwise.observability import logger, metrics, tracer
from chipwise.pipeline.bill_ingest import ingest_event

CORRELATION_ID = 'Records[0].responseElements."x-amz-request-id" || Records[0].messageId || id'
SHAPES = "an S3 ObjectCreated notification or an EventBridge 'Object Created' event of an export's manifest"


@metrics().log_metrics
@tracer().capture_lambda_handler
@logger().inject_lambda_context(clear_state=True, correlation_id_path=CORRELATION_ID)
@parsed_event(ObjectCreatedEvent, SHAPES, dead_letter_as="ingest_bill")
def handler(created: ObjectCreatedEvent, context: Any) -> dict[str, Any]:
    return ingest_event(created).answer()
