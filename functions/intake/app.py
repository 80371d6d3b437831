"""Lambda handler for the intake HTTP API (API Gateway HTTP API, payload v2): the form, the plan, the plan's page."""

from __future__ import annotations

from typing import Any

from aws_lambda_powertools.utilities.typing import LambdaContext

from chipwise.observability import logger
from chipwise.plan.api import app


@logger().inject_lambda_context(clear_state=True)
def handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    return app.resolve(event, context)
