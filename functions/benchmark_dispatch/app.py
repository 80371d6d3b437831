"""Lambda handler: EventBridge ``ScanCompleted`` on the Chipwise bus -> benchmark jobs for that account's findings."""

from __future__ import annotations

from typing import Any

from aws_lambda_powertools.utilities.typing import LambdaContext

from chipwise.act.benchmarks.dispatch import handle_scan_completed_event
from chipwise.observability import logger


@logger().inject_lambda_context(clear_state=True)
def handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    return handle_scan_completed_event(event)
