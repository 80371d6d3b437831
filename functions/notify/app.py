"""Lambda handler for notifications: the daily schedule (digests and alerts for every account) and the
``ScanCompleted`` event (that account's immediate alerts). Both enqueue what is due and drain the outbox."""

from __future__ import annotations

from typing import Any

from aws_lambda_powertools.utilities.typing import LambdaContext

from chipwise.act.notify.runner import handle_event
from chipwise.observability import logger
from chipwise.settings import get_settings


@logger().inject_lambda_context(clear_state=True)
def handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    return handle_event(event, get_settings())
