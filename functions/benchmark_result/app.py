"""Lambda handler: EventBridge "Batch Job State Change" (aws.batch) -> the run stored, retried or priced."""

from __future__ import annotations

from typing import Any

from aws_lambda_powertools.utilities.typing import LambdaContext

from chipwise.act.benchmarks.results import handle_state_change_event
from chipwise.observability import logger


@logger().inject_lambda_context(clear_state=True)
def handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    return handle_state_change_event(event).model_dump(mode="json", exclude_none=True)
