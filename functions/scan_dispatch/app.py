"""Lambda handler for the daily schedule: queue one scan per account and region (the settings say who to scan; the
event is a schedule, parsed only for its correlation id)."""

from __future__ import annotations

from typing import Any

from aws_lambda_powertools.logging import correlation_paths
from aws_lambda_powertools.utilities.typing import LambdaContext

from chipwise.aws import aws_context
from chipwise.edges import count
from chipwise.observability import logger, metrics, tracer
from chipwise.pipeline.fanout import dispatch_scans
from chipwise.settings import get_settings


@metrics().log_metrics
@tracer().capture_lambda_handler
@logger().inject_lambda_context(clear_state=True, correlation_id_path=correlation_paths.EVENT_BRIDGE)
def handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    settings = get_settings()
    report = dispatch_scans(aws_context(settings.region), settings).as_dict()
    count("ScansQueued", float(str(report["sent"])))
    return report
