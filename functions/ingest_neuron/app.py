"""Lambda handler for neuron-monitor reports landing in S3 under ``neuron/`` (an S3 ObjectCreated notification
or the EventBridge "Object Created" event): parse, aggregate per instance, runtime and hour, store."""

from __future__ import annotations

from typing import Any

from aws_lambda_powertools.utilities.typing import LambdaContext

from chipwise.collect.neuron_ingest import ingest_event
from chipwise.observability import logger


@logger().inject_lambda_context(clear_state=True)
def handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    return ingest_event(event)
