"""Fixtures for the benchmark loop: the emulator with benchmark queues and the artifacts bucket, and the store."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from bench_harness import Bench

from chipwise.aws import aws_context
from chipwise.benchmarks.results import Clients
from chipwise.settings import get_settings
from chipwise_devkit.batch import provision_benchmark_queues

GPU_BASELINE_QUEUE = "chipwise-bench-gpu"


def _bench(url: str, monkeypatch: pytest.MonkeyPatch, **env: str) -> Bench:
    """Point the settings at ``url`` (and ``env``), provision the queues and the bucket in the emulator."""
    monkeypatch.setenv("CHIPWISE_DATABASE_URL", url)
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    get_settings.cache_clear()
    settings = get_settings()
    ctx = aws_context(settings.region)
    provision_benchmark_queues(ctx, settings)
    ctx.client("s3").create_bucket(Bucket=settings.artifacts_bucket)
    return Bench(url=url, settings=settings, clients=Clients(ctx.client("batch"), ctx.client("s3")))


@pytest.fixture
def bench(aws: Any, sqlite_url: str, monkeypatch: pytest.MonkeyPatch) -> Iterator[Bench]:
    """Queues for inf2, trn1 and trn2 in the emulator, the artifacts bucket, and a SQLite store."""
    yield _bench(sqlite_url, monkeypatch)


@pytest.fixture
def bench_db(aws: Any, db_url: str, monkeypatch: pytest.MonkeyPatch) -> Iterator[Bench]:
    """The same on every test database (PostgreSQL too when CHIPWISE_TEST_DATABASE_URL is set): for the flows
    whose subject is what the store keeps."""
    yield _bench(db_url, monkeypatch)


@pytest.fixture
def bench_with_baseline(aws: Any, sqlite_url: str, monkeypatch: pytest.MonkeyPatch) -> Iterator[Bench]:
    """Queues and bucket with a GPU baseline queue configured too."""
    yield _bench(sqlite_url, monkeypatch, CHIPWISE_BATCH_QUEUES__GPU_BASELINE=GPU_BASELINE_QUEUE)
