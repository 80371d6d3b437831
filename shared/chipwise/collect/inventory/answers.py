"""Reading AWS answers the same way in every inventory source: tags, JSON-safe details, error codes and messages,
and SageMaker's way of saying a resource was deleted between the listing and the describe call."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from datetime import datetime
from decimal import Decimal
from typing import Any

from botocore.exceptions import BotoCoreError, ClientError

from chipwise.models.records import ResourceProblem

# What a call can fail with once the client's retries are spent: an AWS answer, or no answer (a timeout, a dropped
# connection).
CALL_ERRORS = (ClientError, BotoCoreError)
# What SageMaker answers for a name that no longer exists (it has no NotFound code of its own).
GONE_CODES = frozenset({"ValidationException", "ResourceNotFound", "ResourceNotFoundException"})


def tags(items: Iterable[Mapping[str, Any]] | None) -> dict[str, str]:
    """An AWS ``[{"Key": ..., "Value": ...}]`` tag list as a dictionary."""
    return {str(t["Key"]): str(t.get("Value", "")) for t in items or [] if "Key" in t}


def jsonable(value: Any) -> Any:
    """AWS response values as JSON (datetimes as ISO strings), for ``details``."""
    if isinstance(value, datetime):
        return value.isoformat()
    if isinstance(value, Decimal):
        return str(value)
    if isinstance(value, Mapping):
        return {str(k): jsonable(v) for k, v in value.items() if k != "ResponseMetadata"}
    if isinstance(value, list | tuple):
        return [jsonable(v) for v in value]
    return value


def error_code(exc: ClientError | BotoCoreError) -> str | None:
    """The AWS error code (``AccessDeniedException``, ``ThrottlingException``); the exception's class when AWS
    gave no answer (``ReadTimeoutError``)."""
    if not isinstance(exc, ClientError):
        return type(exc).__name__
    code = exc.response.get("Error", {}).get("Code")
    return str(code) if code else None


def message(exc: ClientError | BotoCoreError) -> str:
    if not isinstance(exc, ClientError):
        return str(exc)[:500]
    return str(exc.response.get("Error", {}).get("Message") or exc)[:500]


def gone(exc: ClientError) -> bool:
    """Deleted between the listing and the describe call (SageMaker says "Could not find ...")."""
    text = str(exc.response.get("Error", {}).get("Message", "")).lower()
    return error_code(exc) in GONE_CODES and ("could not find" in text or "not found" in text)


def problem(
    arn: str,
    name: str,
    exc: ClientError | BotoCoreError,
    *,
    recorded: bool,
    what: str | None = None,
    note: str | None = None,
) -> ResourceProblem:
    """A listed resource a call failed for: ``recorded`` when the resource is still recorded with what is known;
    ``what`` names the part that could not be read, ``note`` what was kept instead."""
    text = message(exc) if what is None else f"{what}: {message(exc)}"
    if note:
        text = f"{text} ({note})"
    return ResourceProblem(arn, name, error_code(exc), text, recorded=recorded)
