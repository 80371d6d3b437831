"""Lambda handler for a delivered AWS Data Exports manifest (`metadata/BILLING_PERIOD=YYYY-MM/<export>-Manifest.json`):
the S3 ObjectCreated notification or EventBridge "Object Created" event, parsed with the Powertools S3 models in
:func:`chipwise.pipeline.bill_ingest.ingest_event`, which reads and stores that billing period."""

from __future__ import annotations

from typing import Any

from aws_lambda_powertools.utilities.typing import LambdaContext

from chipwise.observability import logger, metrics, tracer
from chipwise.pipeline.bill_ingest import ingest_event

CORRELATION_ID = 'Records[0].responseElements."x-amz-request-id" || Records[0].messageId || id'


@metrics().log_metrics
@tracer().capture_lambda_handler
@logger().inject_lambda_context(clear_state=True, correlation_id_path=CORRELATION_ID)
def handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    return ingest_event(event)
