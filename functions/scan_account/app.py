"""Lambda handler for the scan queue: each SQS message is one ScanRequest (account, region, member role).

Powertools' BatchProcessor reports failed messages individually (partial batch response): one failing account
is retried by SQS (and ends in the dead-letter queue) without re-running the others.
"""

from __future__ import annotations

from typing import Any

from aws_lambda_powertools.utilities.batch import BatchProcessor, EventType, process_partial_response
from aws_lambda_powertools.utilities.data_classes.sqs_event import SQSRecord
from aws_lambda_powertools.utilities.typing import LambdaContext
from pydantic import ValidationError

from chipwise.errors import InvalidInput, UpstreamError
from chipwise.models.scan import ScanRequest
from chipwise.observability import logger
from chipwise.scan import scan_account_request

processor = BatchProcessor(event_type=EventType.SQS)


def record_handler(record: SQSRecord) -> str:
    """Scan the account a message names; a malformed message or a failed scan fails only this record."""
    try:
        request = ScanRequest.model_validate_json(record.body)
    except ValidationError as exc:
        logger().error("malformed scan request", extra={"message_id": record.message_id, "errors": exc.errors()})
        raise InvalidInput(f"message {record.message_id} is not a ScanRequest: {exc.error_count()} errors") from exc
    document = scan_account_request(request)
    if document.status == "failed":
        raise UpstreamError(f"scan of {request.account_id} in {request.region} failed: {document.errors}")
    return document.scan_id


@logger().inject_lambda_context(clear_state=True)
def handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    return dict(
        process_partial_response(event=event, record_handler=record_handler, processor=processor, context=context)
    )
