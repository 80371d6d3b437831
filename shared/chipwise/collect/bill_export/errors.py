"""What goes wrong reading an export, as one line: the export itself (:class:`BillError`, naming file, row and
column) or AWS refusing a call (:class:`BillAccessDenied`, naming the IAM action)."""

from __future__ import annotations

from botocore.exceptions import ClientError

from chipwise.errors import ChipwiseError, InvalidInput, UpstreamError


class BillError(InvalidInput):
    """An export that cannot be read as it is: the message names the file (and row and column)."""


class BillAccessDenied(UpstreamError):
    """AWS refused a call: the message names the IAM action to grant."""


def denied(exc: ClientError, action: str, target: str) -> ChipwiseError:
    """An AWS error as one line: access denied names the IAM action; anything else its code."""
    code = str(exc.response.get("Error", {}).get("Code", ""))
    message = str(exc.response.get("Error", {}).get("Message", "")).strip()
    if code in {"AccessDenied", "AccessDeniedException", "403", "UnauthorizedOperation"} or "not authorized" in message:
        return BillAccessDenied(f"access denied: {action} on {target} (grant {action} to Chipwise's role)")
    if code in {"NoSuchKey", "404", "NoSuchBucket", "EntityNotFoundException"}:
        return BillError(f"{target}: not found ({code})")
    return UpstreamError(f"{action} on {target} failed: {code} {message}".strip())
