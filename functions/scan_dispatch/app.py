"""Lambda handler for the daily schedule: fan the scans out, one SQS message per (account, region)."""

from __future__ import annotations

from typing import Any

from aws_lambda_powertools.utilities.typing import LambdaContext

from chipwise.aws import aws_context
from chipwise.fanout import dispatch_scans
from chipwise.observability import logger
from chipwise.settings import get_settings


@logger().inject_lambda_context(clear_state=True)
def handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    """The event (an EventBridge Scheduler invocation) carries nothing we need: settings say who to scan."""
    settings = get_settings()
    return dispatch_scans(aws_context(settings.region), settings).as_dict()
