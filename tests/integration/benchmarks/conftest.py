"""Fixtures for the benchmark loop: the emulator with benchmark queues and the artifacts bucket, and the store."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from bench_harness import Bench
from chipwise.act.benchmarks.provision import provision_benchmark_queues
from chipwise.act.benchmarks.results import Clients
from chipwise.aws import aws_context
from chipwise.settings import get_settings

GPU_BASELINE_QUEUE = "chipwise-bench-gpu"


def _bench(use_db: str) -> Bench:
    settings = get_settings()
    ctx = aws_context(settings.region)
    provision_benchmark_queues(ctx, settings)
    ctx.client("s3").create_bucket(Bucket=settings.artifacts_bucket)
    return Bench(url=use_db, settings=settings, clients=Clients(ctx.client("batch"), ctx.client("s3")))


@pytest.fixture
def bench(aws: Any, use_db: str) -> Iterator[Bench]:
    """Queues for inf2, trn1 and trn2 in the emulator, the artifacts bucket, and the test store."""
    yield _bench(use_db)


@pytest.fixture
def bench_with_baseline(aws: Any, use_db: str, monkeypatch: pytest.MonkeyPatch) -> Iterator[Bench]:
    """The same, with a GPU baseline queue configured."""
    monkeypatch.setenv("CHIPWISE_BATCH_QUEUES__GPU_BASELINE", GPU_BASELINE_QUEUE)
    get_settings.cache_clear()
    yield _bench(use_db)
