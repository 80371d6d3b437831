"""Powertools logger, tracer and metrics: built here only, lazily (no import-time side effects)."""

from __future__ import annotations

from functools import lru_cache

from aws_lambda_powertools import Logger, Metrics, Tracer

SERVICE = "chipwise"
NAMESPACE = "Chipwise"


@lru_cache(maxsize=1)
def logger() -> Logger:
    return Logger(service=SERVICE)


@lru_cache(maxsize=1)
def tracer() -> Tracer:
    return Tracer(service=SERVICE)


@lru_cache(maxsize=1)
def metrics() -> Metrics:
    return Metrics(namespace=NAMESPACE, service=SERVICE)
