"""The benchmark boundaries: job parameters through Batch's string map, the result schema, the state event."""

from __future__ import annotations

import json
from decimal import Decimal
from typing import Any

import pytest
from benchmark_factories import parameters, result, sample_event
from pydantic import ValidationError

from chipwise.models.batch import BatchJobDetail
from chipwise.models.benchmark import (
    BenchmarkParameters,
    BenchmarkResult,
    InvalidResult,
    split_s3_uri,
)
from chipwise.models.events import BatchJobStateChangeEvent


def test_parameters_survive_batchs_string_map() -> None:
    # Given parameters with lists, an optional decimal and an ml. type
    params = parameters(batch_sizes=(16, 1, 4, 4), latency_target_ms=Decimal("84.5"))
    # When they go through Batch (strings only) and come back
    as_batch = params.to_batch()
    back = BenchmarkParameters.from_batch(as_batch)
    # Then nothing is lost; lists are sorted, unique and comma separated
    assert as_batch["batch_sizes"] == "1,4,16"
    assert all(isinstance(v, str) for v in as_batch.values())
    assert back == params.model_copy(update={"batch_sizes": (1, 4, 16)})


def test_an_empty_optional_parameter_is_none() -> None:
    # Given the job definition's "" defaults for the optional parameters
    raw = parameters().to_batch() | {"latency_target_ms": "", "model_family": " "}
    # When parsed
    back = BenchmarkParameters.from_batch(raw)
    # Then they are None
    assert back.latency_target_ms is None and back.model_family is None


def test_the_command_has_one_placeholder_per_parameter() -> None:
    # When the job definition's command is built
    command = BenchmarkParameters.command_arguments()
    # Then every parameter has its flag and Ref:: placeholder
    pairs = dict(zip(command[::2], command[1::2], strict=True))
    assert pairs["--run-id"] == "Ref::run_id"
    assert pairs["--batch-sizes"] == "Ref::batch_sizes"
    assert len(pairs) == len(BenchmarkParameters.model_fields)


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("result_uri", "https://example.com/result.json"),
        ("batch_sizes", "0,4"),
        ("batch_sizes", ""),
        ("runner", "tensorrt"),
        ("instance_type", "ml.inf2.xlarge"),
        ("iterations", "0"),
    ],
)
def test_bad_parameters_are_rejected(field: str, value: str) -> None:
    # When a parameter is out of its domain, Then validation names it
    with pytest.raises(ValidationError, match=field):
        BenchmarkParameters.from_batch(parameters().to_batch() | {field: value})


def test_a_valid_result_file_is_read() -> None:
    # Given a result serialised as the job writes it
    params = parameters()
    text = json.dumps(result(params).model_dump(mode="json"))
    # When it is read
    read = BenchmarkResult.from_text(text)
    # Then it matches the run and keeps Decimals
    read.check_matches(params)
    assert read.measurements[1].requests_per_second == Decimal("40.5")


def _result_document(**changes: Any) -> str:
    document = result(parameters()).model_dump(mode="json")
    document.update(changes)
    return json.dumps(document)


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ("{not json", "Invalid JSON"),
        ("[]", "(document)"),
        (_result_document(schema_version=2), "schema_version"),
        (_result_document(measurements=[]), "measurements"),
        (_result_document(surprise=True), "surprise"),
        (_result_document(compile_time_seconds=-1), "compile_time_seconds"),
        (_result_document(started_at="2026-11-22T07:00:00"), "started_at"),  # no time zone
    ],
)
def test_a_malformed_result_file_is_rejected_with_a_reason(text: str, says: str) -> None:
    # When a malformed file is read
    with pytest.raises(InvalidResult, match=None) as caught:
        BenchmarkResult.from_text(text)
    # Then the reason names what is wrong, on one line
    assert says in str(caught.value)
    assert "\n" not in str(caught.value)


def test_a_result_with_p95_below_p50_is_rejected() -> None:
    # Given a measurement whose p50 is above its p95
    document = result(parameters()).model_dump(mode="json")
    document["measurements"][0]["latency_p50_ms"] = "500"
    # When / Then it is rejected
    with pytest.raises(InvalidResult, match="latency_p95_ms is below latency_p50_ms"):
        BenchmarkResult.from_text(json.dumps(document))


def test_a_huge_result_file_is_rejected_before_parsing() -> None:
    # When a file over 1 MB is read, Then it is rejected without parsing it
    with pytest.raises(InvalidResult, match="more than"):
        BenchmarkResult.from_text(b" " * 1_000_001)


def test_a_result_for_another_run_is_rejected() -> None:
    # Given a valid result file for a different run
    other = result(parameters())
    # When it is checked against this run
    with pytest.raises(InvalidResult, match="run_id"):
        other.check_matches(parameters())


def test_s3_uris_split_into_bucket_and_key() -> None:
    # When / Then: a key is required after the bucket
    assert split_s3_uri("s3://b/benchmarks/r/result.json") == ("b", "benchmarks/r/result.json")
    with pytest.raises(ValueError, match="s3://"):
        split_s3_uri("s3://bucket-only")


# --- the state event --------------------------------------------------------------------------------------------


def test_the_sample_succeeded_event_parses() -> None:
    # When the SUCCEEDED sample event is parsed
    event = BatchJobStateChangeEvent.model_validate(sample_event("benchmark_result/succeeded"))
    # Then the run id, exit code, parameters and stop time are read from it
    detail = event.detail
    assert detail.status == "SUCCEEDED" and detail.terminal
    assert detail.run_id == "3f0c9a1e-6d2b-4b8a-9c7e-5a1d2e3f4b60"
    assert detail.exit_code == 0
    assert BenchmarkParameters.from_batch(detail.parameters).priced_as == "ml.inf2.xlarge"
    assert detail.stopped() is not None and detail.stopped().tzinfo is not None  # type: ignore[union-attr]


def test_the_failure_reason_names_the_most_specific_fields() -> None:
    # When the FAILED and timed-out samples are parsed, Then their reasons read well
    failed = BatchJobStateChangeEvent.model_validate(sample_event("benchmark_result/failed")).detail
    assert failed.failure_reason() == ("Essential container in task exited; no shape could be measured; exit code 3")
    timed_out = BatchJobStateChangeEvent.model_validate(sample_event("benchmark_result/timed_out")).detail
    assert timed_out.failure_reason() == "Job attempt duration exceeded timeout"


def test_job_details_are_parsed_leniently() -> None:
    # Given a detail with new AWS fields, numbers as strings, odd parameter values and missing optional parts
    detail = BatchJobDetail.model_validate(
        {
            "jobId": "j-1",
            "status": "failed",
            "someFutureField": {"x": 1},
            "createdAt": "1795331455000",
            "parameters": {"run_id": "abc", "retries": 3, "empty": None},
            "attempts": [{"container": {"exitCode": "137", "reason": "OutOfMemoryError: Container killed"}}],
        }
    )
    # Then it is usable
    assert detail.status == "FAILED"
    assert detail.created_at == 1795331455000
    assert detail.parameters == {"run_id": "abc", "retries": "3", "empty": ""}
    assert detail.run_id == "abc"
    assert detail.exit_code == 137
    assert "OutOfMemoryError" in detail.failure_reason()


def test_a_malformed_event_is_a_validation_error() -> None:
    # When the malformed sample is parsed
    with pytest.raises(ValidationError) as caught:
        BatchJobStateChangeEvent.model_validate(sample_event("benchmark_result/malformed"))
    # Then the error names the missing job id
    assert "jobId" in str(caught.value)


def test_another_services_event_is_not_a_batch_state_change() -> None:
    # Given an event from another source
    event = sample_event("benchmark_result/succeeded", source="aws.ecs")
    # When / Then it is not taken for a Batch state change
    with pytest.raises(ValidationError, match="source"):
        BatchJobStateChangeEvent.model_validate(event)
