"""neuron-monitor ingest is bounded (issue 26 item 1): a small object that expands to millions of lines, and an
object of nothing but newlines, are read as a stream in a child process with 256 MiB of memory for the work and
finish (rejected or stored); an integer outside the signed 64-bit range rejects its line, not the object."""

from __future__ import annotations

import gzip
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import boto3
import pytest
from sqlalchemy import select
from sqlalchemy.orm import Session, sessionmaker

from chipwise.aws import aws_context
from chipwise.pipeline import neuron_ingest
from chipwise.pipeline.neuron_ingest import ObjectRef, ingest_object
from chipwise.store.tables import NeuronRollup
from chipwise_devkit.emulator import Emulator

CHILD = Path(__file__).with_name("neuron_ingest_child.py")
BUCKET = "chipwise-telemetry"
INSTANCE = "i-0aaaaaaaaaaaaaaa1"
OTHER = "i-0bbbbbbbbbbbbbbb2"
HANG_GUARD_S = 120  # not a measurement: only stops a hung child from hanging the suite


def _report(minute: int, completed: object = 10, device_memory: object = 2**30, instance: str = INSTANCE) -> str:
    return json.dumps(
        {
            "timestamp": f"2026-11-20T11:{minute:02d}:00Z",
            "instance_info": {"instance_id": instance, "instance_type": "inf2.xlarge"},
            "neuron_runtime_data": [
                {
                    "pid": 7,
                    "neuron_runtime_tag": "bert",
                    "report": {
                        "neuroncore_counters": {"neuroncores_in_use": {"0": {"neuroncore_utilization": 40.0}}},
                        "execution_stats": {"execution_summary": {"completed": completed}},
                        "memory_used": {"neuron_runtime_used_bytes": {"neuron_device": device_memory, "host": 1024}},
                    },
                }
            ],
        }
    )


def _put(key: str, body: bytes) -> None:
    s3 = boto3.client("s3")
    s3.put_object(Bucket=BUCKET, Key=key, Body=body)


def _child(db_url: str, keys: list[str], env: dict[str, str]) -> list[dict[str, Any]]:
    done = subprocess.run(
        [sys.executable, str(CHILD), db_url, BUCKET, *keys],
        capture_output=True,
        text=True,
        timeout=HANG_GUARD_S,
        env=env,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]


def test_small_objects_that_expand_to_millions_of_lines_finish_in_256_mib(
    aws: Emulator, db_url: str, session_factory: sessionmaker[Session]
) -> None:
    # Given a 16 KB gzip of 16 MiB of one-character lines and a 64 KB gzip of 64 MiB of newlines
    boto3.client("s3").create_bucket(Bucket=BUCKET)
    letters = gzip.compress(b"x\n" * (8 * 2**20), 9)
    newlines = gzip.compress(b"\n" * (64 * 2**20), 9)
    assert len(letters) < 20_000 and len(newlines) < 70_000
    _put("neuron/123456789012/i-0aaaaaaaaaaaaaaa1/letters.jsonl.gz", letters)
    _put("neuron/123456789012/i-0aaaaaaaaaaaaaaa1/newlines.jsonl.gz", newlines)
    # And a report object whose middle line counts 2^70 executions and 1e30 bytes of device memory
    lines = [_report(1), _report(2, completed=2**70), _report(3, device_memory=1e30), _report(4)]
    _put("neuron/123456789012/i-0aaaaaaaaaaaaaaa1/counters.jsonl.gz", gzip.compress("\n".join(lines).encode()))
    # And the most reports one object can hold: 50,000 lines of good reports (the most an object's reports keep)
    many = "\n".join(_report(1 + i % 59, instance=OTHER) for i in range(50_000)).encode()
    _put("neuron/123456789012/i-0aaaaaaaaaaaaaaa1/many.jsonl.gz", gzip.compress(many, 6))
    # When a child process with 256 MiB of memory for the work ingests all four
    env = {**os.environ, **aws.env()}
    letters_result, newlines_result, counters_result, many_result = _child(
        db_url,
        [
            "neuron/123456789012/i-0aaaaaaaaaaaaaaa1/letters.jsonl.gz",
            "neuron/123456789012/i-0aaaaaaaaaaaaaaa1/newlines.jsonl.gz",
            "neuron/123456789012/i-0aaaaaaaaaaaaaaa1/counters.jsonl.gz",
            "neuron/123456789012/i-0aaaaaaaaaaaaaaa1/many.jsonl.gz",
        ],
        env,
    )
    # Then both expanding objects are rejected (no reports in the lines the cap reads), with the reason
    assert letters_result["accepted"] is False
    assert "(50000 of 50000 lines malformed, more than 50,000 lines)" in letters_result["reason"]
    assert newlines_result["accepted"] is False
    assert "(0 of 50000 lines malformed, more than 50,000 lines)" in newlines_result["reason"]
    # And the report object stores its two good lines, the two others malformed with the 64-bit reason
    assert counters_result["accepted"] is True
    assert counters_result["reports"] == 2 and counters_result["malformed_count"] == 2
    assert [m["line"] for m in counters_result["malformed"]] == [2, 3]
    assert all("outside the signed 64-bit range" in m["reason"] for m in counters_result["malformed"])
    # And the many reports are stored up to the per-object cap (40,000 processes), the rest not read
    assert many_result["accepted"] is True and many_result["truncated"] is True
    assert (many_result["reports"], many_result["lines"]) == (40_000, 40_000)
    with session_factory() as session:
        rollups = {r.instance_id: r for r in session.scalars(select(NeuronRollup))}
    counters = rollups[INSTANCE]
    assert (counters.reports, counters.executions_completed, counters.device_memory_used_max) == (2, 20, 2**30)
    assert rollups[OTHER].reports == 40_000


def test_an_object_over_the_size_cap_is_rejected_before_its_body_is_read(
    aws: Emulator, session_factory: sessionmaker[Session], monkeypatch: pytest.MonkeyPatch
) -> None:
    # Given an object of 2,000 bytes and a size cap of 1,000 (the real cap is 64 MiB)
    boto3.client("s3").create_bucket(Bucket=BUCKET)
    _put("neuron/123456789012/big.jsonl", (_report(1) + "\n").encode() * 4)
    monkeypatch.setattr(neuron_ingest, "MAX_OBJECT_BYTES", 1000)
    # When it is ingested
    ref = ObjectRef(BUCKET, "neuron/123456789012/big.jsonl")
    result = ingest_object(aws_context("us-east-1"), session_factory, ref)
    # Then it is rejected, not retried, with its size
    assert not result.accepted and not result.retryable
    assert result.reason is not None and "bytes, more than 0 MiB" in result.reason
