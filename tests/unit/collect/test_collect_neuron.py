"""neuron-monitor reports: the parser on recorded inf2, trn1 and trn2 (v3d) streams, malformed lines, errors,
hourly aggregation and how parts of one hour merge."""

from __future__ import annotations

import gzip
import json
from datetime import UTC, datetime
from pathlib import Path

import pytest

from chipwise.collect.neuron import (
    INSTANCE_TAG,
    aggregate_hourly,
    decode_object,
    ids_from_key,
    parse_lines,
    parse_report,
)
from chipwise.models.neuron import merge_parts

DATA = Path(__file__).parent / "data"
GIB = 2**30


def _parsed(name: str) -> list[str]:
    return (DATA / name).read_text().splitlines()


def test_inf2_stream_keeps_good_reports_and_numbers_the_malformed_lines() -> None:
    # Given a recorded inf2.xlarge stream with a cut-off line and a line that is not an object
    parsed = parse_lines(_parsed("inf2_xlarge.jsonl"))
    # Then the good reports are kept and the bad lines reported by number
    assert parsed.lines == 10
    assert len(parsed.reports) == 8
    assert [m.line for m in parsed.malformed] == [7, 10]
    assert parsed.malformed[0].reason.startswith("not JSON")
    assert parsed.malformed[1].reason == "not a JSON object"


def test_an_inf2_report_is_read_field_by_field() -> None:
    report = parse_lines(_parsed("inf2_xlarge.jsonl")).reports[2]
    assert report.timestamp == datetime(2026, 11, 20, 10, 59, tzinfo=UTC)
    assert (report.instance_id, report.instance_type, report.region) == (
        "i-0aaaaaaaaaaaaaaa1",
        "inf2.xlarge",
        "us-east-1",
    )
    assert report.hardware is not None and report.hardware.device_type == "inferentia2"
    assert report.hardware.cores_per_device == 2 and report.hardware.device_memory_bytes == 32 * GIB
    [runtime] = report.runtimes
    assert runtime.tag == "bert-endpoint" and runtime.pid == 4121
    assert runtime.core_utilization == {"0": 60.0, "1": 30.0}
    assert runtime.utilization_mean == 45.0 and runtime.utilization_max == 60.0
    assert runtime.executions_completed == 42 and runtime.executions_failed == 1
    assert runtime.latency_p50_s == pytest.approx(0.005) and runtime.latency_p99_s == pytest.approx(0.0075)
    assert runtime.device_memory_bytes == GIB + 2 * GIB // 4 and runtime.host_memory_bytes == 1610612736
    assert report.system_memory_total_bytes == 16474079232
    assert report.errors == []


def test_errors_in_a_report_are_collected_with_their_place() -> None:
    # Given the stream's report whose runtime could not be reached (its groups are missing)
    report = parse_lines(_parsed("inf2_xlarge.jsonl")).reports[-1]
    # Then it is kept, empty, with its error
    [runtime] = report.runtimes
    assert runtime.core_utilization == {} and runtime.executions_completed == 0
    assert [(e.location, e.message) for e in report.errors] == [
        ("neuron_runtime_data[bert-endpoint]", "failed to connect to the runtime: connection refused")
    ]


def test_every_error_location_is_checked() -> None:
    document = {
        "neuron_runtime_data": [
            {"pid": 1, "neuron_runtime_tag": "", "error": "", "report": {"memory_used": {"error": "mem gone"}}}
        ],
        "system_data": {"memory_info": {"error": "no meminfo"}, "neuron_hw_counters": {"error": "hw"}},
        "instance_info": {"error": "no IMDS"},
        "neuron_hardware_info": {"error": "driver not installed"},
    }
    report = parse_report(document)
    assert {e.location for e in report.errors} == {
        "instance_info",
        "neuron_hardware_info",
        "neuron_runtime_data[1].memory_used",
        "system_data.memory_info",
        "system_data.neuron_hw_counters",
    }
    assert report.runtimes[0].tag == "1"  # no tag: the PID names the application


def test_trn1_has_two_runtimes_and_no_system_data() -> None:
    reports = parse_lines(_parsed("trn1_32xlarge.jsonl")).reports
    assert len(reports) == 3
    train, evaluation = reports[1].runtimes
    assert (train.tag, len(train.core_utilization), evaluation.tag) == ("train-llama", 28, "eval")
    assert train.error_counts == {"numerical": 1}
    assert reports[1].system_memory_used_bytes is None and reports[1].hardware is not None
    assert reports[1].hardware.device_count == 16


def test_trn2_logical_cores_fall_back_to_their_v3d_halves() -> None:
    report = parse_lines(_parsed("trn2_48xlarge.jsonl")).reports[0]
    assert report.hardware is not None
    assert (report.hardware.core_version, report.hardware.logical_core_config) == ("v3d", 2)
    cores = report.runtimes[0].core_utilization
    assert len(cores) == 64
    assert cores["63"] == pytest.approx(30.0)  # mean of the physical cores 32.0 and 28.0
    assert cores["0"] == 30.0


def test_hourly_aggregation_of_the_inf2_stream() -> None:
    # Given the inf2 stream, which straddles 11:00 and ends with an idle report and an unreachable runtime
    parts = aggregate_hourly(parse_lines(_parsed("inf2_xlarge.jsonl")).reports)
    by_hour = {p.hour.hour: merge_parts([p.as_json()]) for p in parts}
    # Then there is one row per instance and hour
    assert {(p.runtime_tag, p.hour.hour) for p in parts} == {(INSTANCE_TAG, 10), (INSTANCE_TAG, 11)}
    ten = by_hour[10]
    assert ten["reports"] == 4
    assert ten["neuroncore_utilization_avg"] == pytest.approx((15 + 30 + 45 + 5) / 4)
    assert ten["neuroncore_utilization_max"] == 60.0
    assert (ten["executions_completed"], ten["executions_failed"], ten["cores_in_use"]) == (166, 1, 2)
    assert ten["device_memory_used_max"] == GIB + 3 * GIB // 4
    assert ten["latency_p50_s"] == pytest.approx(0.0045) and ten["latency_p99_s"] == pytest.approx(0.009)
    assert ten["instance_type"] == "inf2.xlarge" and (ten["errors"], ten["reports_missing"]) == (0, 0)
    # 11:00: two measured reports (means 20 and 50), one idle (0 %) and one whose runtime was unreachable:
    # missing, left out of the mean (never 0 %), counted
    eleven = by_hour[11]
    assert (eleven["reports"], eleven["reports_missing"], eleven["errors"]) == (4, 1, 1)
    assert eleven["neuroncore_utilization_avg"] == pytest.approx((20 + 50 + 0) / 3)


def test_an_hour_split_across_objects_merges_to_the_same_figures() -> None:
    # Given the trn2 stream (which crosses midnight) and trn1's, split line by line into separate "objects"
    lines = _parsed("trn1_32xlarge.jsonl")
    whole = aggregate_hourly(parse_lines(lines).reports)
    pieces = [aggregate_hourly(parse_lines([line]).reports) for line in lines]
    # When the pieces' parts are merged per hour
    for part in whole:
        same = [
            p.as_json() for piece in pieces for p in piece if (p.instance_id, p.hour) == (part.instance_id, part.hour)
        ]
        # Then they give what the whole file gives
        assert merge_parts(same) == pytest.approx(merge_parts([part.as_json()]))
    trn2 = aggregate_hourly(parse_lines(_parsed("trn2_48xlarge.jsonl")).reports)
    assert [p.hour.day for p in trn2] == [20, 21]


def test_reports_without_time_take_the_default_and_without_instance_the_keys() -> None:
    document = {"neuron_runtime_data": [], "instance_info": {}}
    at = datetime(2026, 11, 1, 3, 30, tzinfo=UTC)
    parsed = parse_lines([json.dumps(document)], default_time=at)
    assert aggregate_hourly(parsed.reports) == []  # no instance anywhere: nothing to aggregate
    [part] = aggregate_hourly(parsed.reports, default_instance_id="i-0123456789abcdef0")
    assert (part.instance_id, part.hour, part.runtime_tag) == (
        "i-0123456789abcdef0",
        at.replace(minute=0),
        INSTANCE_TAG,
    )


def test_epoch_and_top_level_timestamps_are_understood() -> None:
    assert parse_report({"timestamp": 1795000000}).timestamp == datetime.fromtimestamp(1795000000, UTC)
    assert parse_report({"timestamp": "2026-11-20T10:00:00"}).timestamp == datetime(2026, 11, 20, 10, tzinfo=UTC)
    with pytest.raises(ValueError, match="not a JSON object"):
        parse_report([1, 2])  # type: ignore[arg-type]


def test_objects_are_gzip_or_plain_text_whatever_their_name() -> None:
    text = "line one\nline two\n"
    assert decode_object(gzip.compress(text.encode())) == text
    assert decode_object(text.encode()) == text
    with pytest.raises(ValueError, match="corrupt gzip"):
        decode_object(b"\x1f\x8bnot really gzip")
    with pytest.raises(ValueError, match="not UTF-8"):
        decode_object(b"\xff\xfe\x00binary")


@pytest.mark.parametrize(
    ("key", "ids"),
    [
        ("neuron/i-0123456789abcdef0/2026-11-21.jsonl.gz", (None, "i-0123456789abcdef0")),
        ("neuron/111122223333/i-0123456789abcdef0/2026-11-21/10-0.jsonl.gz", ("111122223333", "i-0123456789abcdef0")),
        ("neuron/firehose/2026/11/21/part-0001.gz", (None, None)),
    ],
)
def test_keys_name_account_and_instance(key: str, ids: tuple[str | None, str | None]) -> None:
    assert ids_from_key(key) == ids
