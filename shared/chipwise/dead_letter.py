"""Malformed events go straight to the dead-letter queue, with the reason, instead of being retried.

A record or event that fails parsing will fail the same way every time: retrying it only burns invocations (SQS
would redeliver it up to ``maxReceiveCount`` times, Lambda retries an asynchronous event twice) before it reaches
the dead-letter queue anyway. So the function puts it there itself with SQS ``SendMessage`` (the queue URL is the
``dead_letter_queue_url`` setting: the scan function's is the scan queue's FIFO dead-letter queue, the
event-driven functions' the asynchronous dead-letter queue) and reports it handled: an SQS record is then not a
batch item failure (SQS deletes it), an asynchronous event is not retried. The message keeps the original body,
with the reason and the source as message attributes (never logged with its content).

When no queue is configured, or SendMessage fails, the caller falls back to failing as before (retries, then the
queue's redrive policy or Lambda's own dead-letter queue): nothing is lost.
"""

from __future__ import annotations

import hashlib

from botocore.exceptions import BotoCoreError, ClientError

from chipwise.aws import aws_context
from chipwise.observability import logger
from chipwise.settings import get_settings

MAX_BODY_CHARS = 200_000  # SQS takes 256 KiB a message; a malformed event is kept whole up to this
FIFO_GROUP = "malformed"


def dead_letter(body: str, reason: str, *, source: str, message_id: str | None = None) -> bool:
    """Put ``body`` on the dead-letter queue with ``reason``; True when it is there (the caller then does not fail).
    False when no queue is configured or SendMessage failed (the caller fails as before)."""
    settings = get_settings()
    url = settings.dead_letter_queue_url
    reason = reason.strip().splitlines()[0][:1000] if reason.strip() else "malformed"
    if not url:
        logger().error("malformed event: no dead_letter_queue_url, failing instead", extra={"source": source})
        return False
    text = body[:MAX_BODY_CHARS] or "(empty)"
    params: dict[str, object] = {
        "QueueUrl": url,
        "MessageBody": text,
        "MessageAttributes": {
            "reason": {"DataType": "String", "StringValue": reason},
            "source": {"DataType": "String", "StringValue": source[:256] or "unknown"},
        },
    }
    if url.endswith(".fifo"):
        params["MessageGroupId"] = FIFO_GROUP
        params["MessageDeduplicationId"] = message_id or hashlib.sha256(text.encode()).hexdigest()
    try:
        aws_context(settings.region).client("sqs").send_message(**params)  # type: ignore[arg-type]
    except (ClientError, BotoCoreError) as exc:
        logger().error(
            "malformed event could not be dead-lettered, failing instead",
            extra={"source": source, "error": type(exc).__name__},
        )
        return False
    logger().warning(
        "malformed event sent to the dead-letter queue, not retried",
        extra={"source": source, "reason": reason, "message_id": message_id},
    )
    return True
