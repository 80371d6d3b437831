"""What every Lambda edge shares: an SQS batch processor that reports a failed record without its content, and
the EMF metrics a handler publishes from what the called function returned (Powertools Metrics, flushed by the
handler's ``log_metrics`` decorator; nothing is printed outside Lambda)."""

from __future__ import annotations

from typing import Any

from aws_lambda_powertools.metrics import MetricUnit
from aws_lambda_powertools.utilities.batch import BatchProcessor
from aws_lambda_powertools.utilities.batch.base import FailureResponse
from aws_lambda_powertools.utilities.batch.exceptions import ExceptionInfo
from pydantic import ValidationError

from chipwise.models.events import describe_validation_error
from chipwise.observability import logger, metrics


class QuietBatchProcessor(BatchProcessor):
    """Powertools' SQS ``BatchProcessor`` (partial batch responses, records parsed with a model), logging each
    failed record with its message id and a reason that never includes the record's content."""

    def failure_handler(self, record: Any, exception: ExceptionInfo) -> FailureResponse:
        error = exception[1]
        reason = describe_validation_error(error) if isinstance(error, ValidationError) else str(error)
        message_id = getattr(record, "message_id", None) or getattr(record, "messageId", None)
        logger().error("record failed", extra={"message_id": message_id, "reason": reason[:1000]})
        return super().failure_handler(record, exception)


def count(name: str, value: float, unit: MetricUnit = MetricUnit.Count) -> None:
    """One EMF metric value for this invocation."""
    metrics().add_metric(name=name, unit=unit, value=value)
