"""Powertools logger, tracer and metrics: built here only, lazily (no import-time side effects). Powertools
itself is imported by the first of them that is built (it loads botocore: a CLI store read needs neither)."""

from __future__ import annotations

import logging
import os
import sys
from functools import lru_cache
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from aws_lambda_powertools import Logger, Metrics, Tracer

SERVICE = "chipwise"
NAMESPACE = "Chipwise"


class _StderrHandler(logging.StreamHandler):  # type: ignore[type-arg]
    """Writes to whatever ``sys.stderr`` is at the time of each record (tests swap it)."""

    def emit(self, record: logging.LogRecord) -> None:
        self.stream = sys.stderr
        super().emit(record)


# Libraries that log request URLs, headers or response bodies at INFO/DEBUG (httpx logs a Slack webhook URL at INFO,
# botocore a Secrets Manager response at DEBUG): held at WARNING whatever the root level, so no secret reaches a log.
CHATTY_LIBRARIES = ("botocore", "boto3", "s3transfer", "urllib3", "httpx", "httpcore")


def quiet_libraries() -> None:
    for name in CHATTY_LIBRARIES:
        library = logging.getLogger(name)
        if library.level == logging.NOTSET or library.level < logging.WARNING:
            library.setLevel(logging.WARNING)


@lru_cache(maxsize=1)
def logger() -> Logger:
    """In Lambda, Powertools' default (stdout, read by CloudWatch Logs, level from POWERTOOLS_LOG_LEVEL); elsewhere
    stderr at WARNING unless POWERTOOLS_LOG_LEVEL says otherwise, so a command's stdout (``--json``) carries only
    its output and its progress display is not drowned in JSON lines."""
    from aws_lambda_powertools import Logger

    quiet_libraries()
    if os.environ.get("AWS_LAMBDA_FUNCTION_NAME"):
        return Logger(service=SERVICE)
    level = os.environ.get("POWERTOOLS_LOG_LEVEL", "WARNING")
    return Logger(service=SERVICE, level=level, logger_handler=_StderrHandler())


@lru_cache(maxsize=1)
def tracer() -> Tracer:
    from aws_lambda_powertools import Tracer

    return Tracer(service=SERVICE)


@lru_cache(maxsize=1)
def metrics() -> Metrics:
    from aws_lambda_powertools import Metrics

    return Metrics(namespace=NAMESPACE, service=SERVICE)
