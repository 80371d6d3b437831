"""What every Lambda edge shares: the event parsed with a Powertools parser model before anything else runs
(:func:`parsed_event`), an SQS batch processor that reports a failed record without its content, and the EMF metrics
a handler publishes from what the called function returned (Powertools Metrics, flushed by the handler's
``log_metrics`` decorator; nothing is printed outside Lambda)."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any, TypeVar

from aws_lambda_powertools.metrics import MetricUnit
from aws_lambda_powertools.utilities.batch import BatchProcessor
from aws_lambda_powertools.utilities.batch.base import FailureResponse
from aws_lambda_powertools.utilities.batch.exceptions import ExceptionInfo
from aws_lambda_powertools.utilities.parser import parse
from aws_lambda_powertools.utilities.parser.exceptions import InvalidModelTypeError
from pydantic import BaseModel, ValidationError

from chipwise.errors import InvalidInput
from chipwise.models.events import describe_validation_error
from chipwise.observability import logger, metrics

M = TypeVar("M", bound=BaseModel)
Handler = Callable[[dict[str, Any], Any], dict[str, Any]]


def parse_event(event: dict[str, Any], model: type[M], what: str) -> M:
    """``event`` parsed with ``model`` (Powertools' parser); raises InvalidInput ``not <what>: <where>`` naming the
    failing fields and their error types, never their values."""
    try:
        return parse(event=event, model=model)
    except ValidationError as exc:
        raise InvalidInput(f"not {what}: {describe_validation_error(exc)}") from exc
    except (InvalidModelTypeError, TypeError, AttributeError) as exc:  # a parser model's validator tripped on it
        raise InvalidInput(f"not {what}: a record lacks the fields the shape requires") from exc


def parsed_event(model: type[M], what: str, *, reject: bool = True) -> Callable[[Callable[[M, Any], Any]], Handler]:
    """A handler's edge: the event is parsed with ``model`` and the decorated function gets the model. A malformed
    event is answered ``{"status": "rejected", "reason": ...}`` and logged (a retry would not help), or with
    ``reject=False`` raises InvalidInput (the invocation fails: Lambda retries it, then the dead-letter queue)."""

    def decorate(function: Callable[[M, Any], Any]) -> Handler:
        @functools.wraps(function)
        def handler(event: dict[str, Any], context: Any) -> dict[str, Any]:
            try:
                parsed = parse_event(event, model, what)
            except InvalidInput as exc:
                if not reject:
                    raise
                logger().warning("event rejected", extra={"reason": str(exc)})
                return {"status": "rejected", "reason": str(exc)}
            answer: dict[str, Any] = function(parsed, context)
            return answer

        handler.event_model = model  # type: ignore[attr-defined]  # what the edge parses with (the tests read it)
        return handler

    return decorate


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
