"""Run by test_neuron_ingest_bounded in a child process: ingest S3 objects with at most 256 MiB of address space
beyond what Python and Chipwise's imports already hold. Arguments: database URL, bucket, keys; prints one JSON
line per object (its NeuronIngestResult)."""

from __future__ import annotations

import re
import resource
import sys
from pathlib import Path

from chipwise.aws import aws_context
from chipwise.pipeline.neuron_ingest import ObjectRef, ingest_object
from chipwise.store import get_session_factory

WORK_BYTES = 256 * 2**20


def _address_space() -> int:
    status = Path("/proc/self/status").read_text()
    match = re.search(r"^VmSize:\s+(\d+) kB", status, re.MULTILINE)
    assert match is not None
    return int(match.group(1)) * 1024


def main(database_url: str, bucket: str, keys: list[str]) -> None:
    aws = aws_context("us-east-1")
    factory = get_session_factory(database_url)
    aws.client("s3")  # the client and the database engine exist before the limit: the limit is for the work
    with factory() as session:
        session.connection()
    baseline = _address_space()
    resource.setrlimit(resource.RLIMIT_AS, (baseline + WORK_BYTES, baseline + WORK_BYTES))
    for key in keys:
        result = ingest_object(aws, factory, ObjectRef(bucket, key), account_id="123456789012")
        print(result.model_dump_json(), flush=True)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], sys.argv[3:])
