"""What every Lambda edge shares: the event parsed with a Powertools parser model before anything else runs
(:func:`parsed_event`), an SQS batch processor that reports a failed record without its content, and the EMF metrics
a handler publishes from what the called function returned (Powertools Metrics, flushed by the handler's
``log_metrics`` decorator; nothing is printed outside Lambda)."""

from __future__ import annotations

import functools
import json
from collections.abc import Callable
from typing import Any, TypeVar

from aws_lambda_powertools.metrics import MetricUnit
from aws_lambda_powertools.utilities.batch import BatchProcessor
from aws_lambda_powertools.utilities.batch.exceptions import ExceptionInfo
from aws_lambda_powertools.utilities.parser import parse
from aws_lambda_powertools.utilities.parser.exceptions import InvalidModelTypeError
from pydantic import BaseModel, ValidationError

from chipwise.dead_letter import dead_letter
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


def parsed_event(
    model: type[M], what: str, *, reject: bool = True, dead_letter_as: str | None = None
) -> Callable[[Callable[[M, Any], Any]], Handler]:
    """A handler's edge: the event is parsed with ``model`` and the decorated function gets the model.

    A malformed event fails the same way every time, so it is not retried: with ``dead_letter_as`` (the function's
    name) it goes straight to the dead-letter queue with its reason (:mod:`chipwise.dead_letter`) and is
    answered ``{"status": "rejected", "reason": ..., "dead_lettered": true}``. Without a queue (or with
    ``reject=False`` and no queue) it is answered rejected and logged (``reject``), or raises InvalidInput so the
    invocation fails and Lambda's own retries and dead-letter queue keep it (``reject=False``)."""

    def decorate(function: Callable[[M, Any], Any]) -> Handler:
        @functools.wraps(function)
        def handler(event: dict[str, Any], context: Any) -> dict[str, Any]:
            try:
                parsed = parse_event(event, model, what)
            except InvalidInput as exc:
                return _rejected(event, exc, reject=reject, source=dead_letter_as)
            answer: dict[str, Any] = function(parsed, context)
            return answer

        handler.event_model = model  # type: ignore[attr-defined]  # what the edge parses with (the tests read it)
        return handler

    return decorate


def _rejected(event: dict[str, Any], exc: InvalidInput, *, reject: bool, source: str | None) -> dict[str, Any]:
    queued = source is not None and dead_letter(json.dumps(event, default=str), str(exc), source=source)
    if not reject and not queued:
        raise exc
    logger().warning("event rejected", extra={"reason": str(exc), "dead_lettered": queued})
    return {"status": "rejected", "reason": str(exc), "dead_lettered": queued}


class QuietBatchProcessor(BatchProcessor):
    """Powertools' SQS ``BatchProcessor`` (partial batch responses, records parsed with a model), logging each
    failed record with its message id and a reason that never includes the record's content.

    A record that fails the model (a poison pill: it would fail every time) goes straight to the dead-letter queue
    with its reason (:func:`chipwise.dead_letter.dead_letter`) and is then not a batch item failure, so SQS
    deletes it instead of redelivering it; a record whose work failed is a batch item failure, retried."""

    def failure_handler(self, record: Any, exception: ExceptionInfo) -> Any:
        error = exception[1]
        reason = describe_validation_error(error) if isinstance(error, ValidationError) else str(error)
        message_id = _field(record, "message_id") or _field(record, "messageId")
        logger().error("record failed", extra={"message_id": message_id, "reason": reason[:1000]})
        if self._malformed(error) and dead_letter(
            str(_field(record, "body") or ""),
            f"malformed record: {reason}",
            source=str(_field(record, "event_source_arn") or "sqs"),
            message_id=message_id,
        ):
            return self.success_handler(record, "dead-lettered")
        return super().failure_handler(record, exception)

    def _malformed(self, error: BaseException | None) -> bool:
        """The record failed the processor's own model (Powertools' poison-pill test), not the work."""
        title = getattr(error, "title", None)
        return isinstance(error, ValidationError) and title == getattr(self.model, "__name__", None)


def _field(record: Any, name: str) -> Any:
    """A record's field, None when the (malformed) record lacks it: the data class raises KeyError then."""
    try:
        return getattr(record, name, None)
    except (KeyError, TypeError):
        return None


def count(name: str, value: float, unit: MetricUnit = MetricUnit.Count) -> None:
    """One EMF metric value for this invocation."""
    metrics().add_metric(name=name, unit=unit, value=value)
