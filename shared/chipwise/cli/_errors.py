"""What the ``chipwise`` command says when it fails: one or two lines, never a traceback (unless ``--debug``).

``explain`` turns an expected failure (a Chipwise error, missing AWS credentials, no network, a permission AWS
denied, a missing bucket, a busy port, a database that is not there) into a message that says what to do;
anything else is a bug and is reported as "unexpected X: …" with the hint to run again with ``--debug``.
Every message passes through :func:`redact` so a password in a database URL is never printed.
"""

from __future__ import annotations

import errno
import re
import traceback
from types import TracebackType
from typing import Any

from chipwise.errors import ChipwiseError

DEBUG_FLAG = "--debug"
DEBUG_HINT = "run again with --debug for the traceback"

_URL_PASSWORD = re.compile(r"(?P<head>[a-zA-Z][\w+.-]*://[^:/@\s]*:)(?P<password>[^@\s]+)(?P<at>@)")
_ACTION_IN_MESSAGE = re.compile(r"perform:?\s+(?P<action>[a-z0-9-]+:[A-Za-z0-9]+)")
_DENIED = {
    "AccessDenied",
    "AccessDeniedException",
    "UnauthorizedOperation",
    "UnauthorizedException",
    "AuthorizationError",
    "Forbidden",
    "403",
}
_BAD_CREDENTIALS = {
    "InvalidClientTokenId",
    "UnrecognizedClientException",
    "ExpiredToken",
    "ExpiredTokenException",
    "SignatureDoesNotMatch",
    "InvalidAccessKeyId",
    "AuthFailure",
}
_NO_BUCKET = {"NoSuchBucket"}
# Operations authorised under another action's name (the S3 list and head calls).
_ACTION_OF = {
    "s3:ListObjectsV2": "s3:ListBucket",
    "s3:ListObjects": "s3:ListBucket",
    "s3:HeadBucket": "s3:ListBucket",
    "s3:HeadObject": "s3:GetObject",
}
NO_CREDENTIALS = (
    "no AWS credentials found: run `aws configure` (or `aws sso login`), set AWS_PROFILE, or set "
    "AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY"
)


def redact(text: str) -> str:
    """``text`` with the password of any ``scheme://user:password@host`` URL replaced by ``***``."""
    return _URL_PASSWORD.sub(lambda m: f"{m['head']}***{m['at']}", text)


def first_line(text: str, limit: int = 400) -> str:
    line = next((part.strip() for part in text.strip().splitlines() if part.strip()), "")
    return line if len(line) <= limit else line[: limit - 1] + "…"


def _api_client(tb: TracebackType | None) -> Any:
    """The botocore client whose call raised (found in the traceback), or None."""
    for frame, _ in traceback.walk_tb(tb):
        if frame.f_code.co_name == "_make_api_call":
            return frame.f_locals.get("self")
    return None


def iam_action(exc: Any) -> str | None:
    """The IAM action a denied call needed: named in AWS's message, else the client's prefix and the operation."""
    message = str(exc.response.get("Error", {}).get("Message", ""))
    found = _ACTION_IN_MESSAGE.search(message)
    if found:
        return found["action"]
    client = _api_client(exc.__traceback__)
    operation = getattr(exc, "operation_name", None)
    if client is None or not operation:
        return None
    model = client.meta.service_model
    prefix = model.signing_name or model.endpoint_prefix
    action = f"{prefix}:{operation}"
    return _ACTION_OF.get(action, action)


def _client_error(exc: Any) -> str:
    error = exc.response.get("Error", {})
    code = str(error.get("Code", ""))
    message = first_line(str(error.get("Message", "")), 200)
    operation = getattr(exc, "operation_name", "the call")
    if code in _DENIED or code.endswith("AccessDenied") or "not authorized" in message:
        action = iam_action(exc)
        needs = f"the IAM identity needs {action}" if action else "the IAM identity lacks the permission"
        return f"AWS denied {operation} ({code}): {needs} (see iac/README.md for Chipwise's policies)"
    if code in _BAD_CREDENTIALS:
        fix = "refresh them (`aws sso login`, `aws configure`) or check AWS_PROFILE"
        return f"AWS rejected the credentials ({code}): {fix}"
    if code in _NO_BUCKET:
        bucket = error.get("BucketName") or "the bucket"
        return f"S3 bucket {bucket} does not exist (or is in another account): check the s3:// path"
    return f"AWS {operation} failed: {code}: {message}".rstrip(": ")


def _botocore_error(exc: BaseException) -> str | None:
    try:
        from botocore import exceptions as bce
    except ImportError:  # pragma: no cover - boto3 is a dependency
        return None
    if isinstance(exc, bce.NoCredentialsError | bce.PartialCredentialsError | bce.CredentialRetrievalError):
        return NO_CREDENTIALS
    if isinstance(exc, bce.ProfileNotFound | bce.NoRegionError | bce.InvalidConfigError):
        return f"AWS configuration: {first_line(str(exc))}"
    if isinstance(exc, bce.TokenRetrievalError | bce.SSOTokenLoadError | bce.UnauthorizedSSOTokenError):
        return "the AWS SSO session has expired: run `aws sso login`"
    if isinstance(exc, bce.EndpointConnectionError | bce.ConnectTimeoutError | bce.ConnectionClosedError):
        url = getattr(exc, "kwargs", {}).get("endpoint_url") or "AWS"
        return (
            f"cannot reach {url}: check the network (a proxy, a VPN) and AWS_ENDPOINT_URL; "
            "AWS_MAX_ATTEMPTS sets how often it is retried"
        )
    if isinstance(exc, bce.ReadTimeoutError):
        return "AWS did not answer in time: try again (AWS_MAX_ATTEMPTS sets the retries)"
    if isinstance(exc, bce.ParamValidationError):
        return f"invalid AWS request: {first_line(str(exc))}"
    if isinstance(exc, bce.ClientError):
        return _client_error(exc)
    return None


def _database_error(exc: BaseException) -> str | None:
    from chipwise.pipeline._store import database_error_message  # loads the database library only on an error

    return database_error_message(exc)


def _os_error(exc: BaseException) -> str | None:
    if isinstance(exc, FileNotFoundError):
        return f"no such file: {exc.filename}" if exc.filename else None
    if isinstance(exc, PermissionError) and exc.filename:
        return f"permission denied: {exc.filename}"
    if isinstance(exc, OSError) and exc.errno == errno.EADDRINUSE:
        return "the port is already in use: stop what listens there or pass another --port"
    return None


def explain(exc: BaseException) -> str | None:
    """The message for an expected failure (one or two lines), or None when ``exc`` is a bug."""
    if isinstance(exc, ChipwiseError):
        message: str | None = str(exc)
    else:
        message = _botocore_error(exc) or _database_error(exc) or _os_error(exc)
    return None if message is None else redact(message)


def unexpected(exc: BaseException) -> str:
    """The message for a bug: its type and first line, and how to see the traceback."""
    detail = first_line(redact(str(exc)), 300)
    return f"unexpected {type(exc).__name__}{': ' + detail if detail else ''} ({DEBUG_HINT}, and report it)"


def take_debug_flag(argv: list[str]) -> tuple[list[str], bool]:
    """``argv`` without ``--debug`` (accepted anywhere on the line) and whether it was there."""
    if DEBUG_FLAG not in argv:
        return argv, False
    return [a for a in argv if a != DEBUG_FLAG], True
