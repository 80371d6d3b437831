"""What every Lambda edge shares: an SQS batch processor that reports a failed record without its content, and
the EMF metrics a handler publishes from what the called function returned (Powertools Metrics, flushed by the
handler's ``log_metrics`` decorator; nothing is printed outside Lambda)."""

from __future__ import annotations

from typing import Any

from aws_lambda_powertools.metrics import MetricUnit
from aws_lambda_powertools.utilities.batch import BatchProcessor
from aws_lambda_powertools.utilities.batch.exceptions import ExceptionInfo
from pydantic import ValidationError

from chipwise.act.dead_letter import dead_letter
from chipwise.models.events import describe_validation_error
from chipwise.observability import logger, metrics


class QuietBatchProcessor(BatchProcessor):
    """Powertools' SQS ``BatchProcessor`` (partial batch responses, records parsed with a model), logging each
    failed record with its message id and a reason that never includes the record's content.

    A record that fails the model (a poison pill: it would fail every time) goes straight to the dead-letter queue
    with its reason (:func:`chipwise.act.dead_letter.dead_letter`) and is then not a batch item failure, so SQS
    deletes it instead of redelivering it; a record whose work failed is a batch item failure, retried."""

    def failure_handler(self, record: Any, exception: ExceptionInfo) -> Any:
        error = exception[1]
        reason = describe_validation_error(error) if isinstance(error, ValidationError) else str(error)
        message_id = getattr(record, "message_id", None) or getattr(record, "messageId", None)
        logger().error("record failed", extra={"message_id": message_id, "reason": reason[:1000]})
        if self._malformed(error) and dead_letter(
            str(getattr(record, "body", "") or ""),
            f"malformed record: {reason}",
            source=str(getattr(record, "event_source_arn", None) or "sqs"),
            message_id=message_id,
        ):
            return self.success_handler(record, "dead-lettered")
        return super().failure_handler(record, exception)

    def _malformed(self, error: BaseException | None) -> bool:
        """The record failed the processor's own model (Powertools' poison-pill test), not the work."""
        title = getattr(error, "title", None)
        return isinstance(error, ValidationError) and title == getattr(self.model, "__name__", None)


def count(name: str, value: float, unit: MetricUnit = MetricUnit.Count) -> None:
    """One EMF metric value for this invocation."""
    metrics().add_metric(name=name, unit=unit, value=value)
