"""neuron-monitor input that no real monitor writes is bounded and rejected line by line: a gzip bomb, lines too
long or nested too deep, NaN/Infinity, utilisation outside 0-100 %, times outside the object's window."""

from __future__ import annotations

import gzip
import io
import json
import tracemalloc
import zlib
from datetime import UTC, datetime

import pytest

from chipwise.collect.neuron import (
    MAX_DECOMPRESSED_BYTES,
    MAX_LINE_CHARS,
    MAX_MALFORMED_KEPT,
    decode_object,
    parse_lines,
    stream_lines,
)

UPLOADED = datetime(2026, 11, 20, 12, tzinfo=UTC)


def _report(when: str = "2026-11-20T11:00:00Z", util: object = 12.5) -> str:
    return json.dumps(
        {
            "timestamp": when,
            "instance_info": {"instance_id": "i-0aaaaaaaaaaaaaaa1", "instance_type": "inf2.xlarge"},
            "neuron_runtime_data": [
                {
                    "pid": 1,
                    "neuron_runtime_tag": "bert",
                    "report": {"neuroncore_counters": {"neuroncores_in_use": {"0": {"neuroncore_utilization": util}}}},
                }
            ],
        }
    )


def _bomb(expanded: int) -> bytes:
    """A gzip of ``expanded`` zero bytes, built in constant memory (about 1/1000 of its expanded size)."""
    deflater = zlib.compressobj(9, zlib.DEFLATED, 31)
    chunk = bytes(1 << 20)
    parts = [deflater.compress(chunk) for _ in range(expanded >> 20)]
    return b"".join([*parts, deflater.flush()])


def test_a_gzip_bomb_is_refused_in_bounded_memory() -> None:
    # Given ~300 KB of gzip that expands to 300 MiB
    bomb = _bomb(300 << 20)
    assert len(bomb) < 400_000
    # When it is decoded, Then it is refused once past the limit, without ever holding the whole expansion
    tracemalloc.start()
    try:
        with pytest.raises(ValueError, match="decompresses to more than 64 MiB"):
            decode_object(bomb)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < MAX_DECOMPRESSED_BYTES * 1.5  # about one limit's worth, never 300 MiB


def test_impossible_values_are_rejected_with_their_line_numbers() -> None:
    lines = [
        _report(),  # 1: fine
        _report(util=-50),  # 2: negative
        _report(util=10_000),  # 3: over 100 %
        _report().replace("12.5", "NaN"),  # 4: NaN
        _report(when="2999-01-01T00:00:00Z"),  # 5: the future
        _report(when="1653-01-01T00:00:00Z"),  # 6: before any Inferentia
        _report(when="2026-09-01T00:00:00Z"),  # 7: older than the object can hold
        "[" * 5000 + "]" * 5000,  # 8: nested too deeply
        "9" * 5000,  # 9: a huge integer
        _report(),  # 10: fine again
    ]
    parsed = parse_lines(lines, default_time=UPLOADED)
    assert len(parsed.reports) == 2
    reasons = {m.line: m.reason for m in parsed.malformed}
    assert sorted(reasons) == [2, 3, 4, 5, 6, 7, 8, 9]
    assert "outside 0-100 %" in reasons[2] and "outside 0-100 %" in reasons[3]
    assert "NaN" in reasons[4]
    assert "not a time neuron-monitor reported at" in reasons[5] and "not a time" in reasons[6]
    assert "outside the object's window" in reasons[7]
    assert reasons[8] == "nested too deeply" or "not a JSON object" in reasons[8]


def test_a_gzip_bomb_read_as_a_stream_is_refused_in_bounded_memory() -> None:
    # Given ~300 KB of gzip that expands to 300 MiB of zero bytes (one line with no end)
    stream = io.BytesIO(_bomb(300 << 20))
    # When its lines are streamed, Then the first line is unreadable (too long, skipped unread) and the stream
    # stops past the decompressed limit, never holding more than a line
    tracemalloc.start()
    try:
        with pytest.raises(ValueError, match="decompresses to more than 64 MiB"):
            list(stream_lines(stream.read))
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 4 * MAX_LINE_CHARS


def test_streamed_lines_reject_a_long_or_binary_line_alone() -> None:
    # Given a report, a line one byte over the limit, a line that is not UTF-8 and a report, gzipped in two members
    body = (_report() + "\n" + "x" * (MAX_LINE_CHARS + 1) + "\n").encode()
    body = gzip.compress(body) + gzip.compress(b"\xff\xfe binary\n" + _report().encode())
    # When they are streamed and parsed
    parsed = parse_lines(stream_lines(io.BytesIO(body).read), default_time=UPLOADED)
    # Then the two reports are read and lines 2 and 3 are malformed with their reasons
    assert len(parsed.reports) == 2 and parsed.lines == 4
    assert [(m.line, m.reason) for m in parsed.malformed] == [
        (2, f"line longer than {MAX_LINE_CHARS:,} characters"),
        (3, "not UTF-8 text (byte 0)"),
    ]


def test_only_the_first_malformed_lines_are_kept_and_every_one_is_counted() -> None:
    # Given 250 lines that are not JSON, then a report
    lines = ["{oops"] * 250 + [_report()]
    # When parsed
    parsed = parse_lines(lines, default_time=UPLOADED)
    # Then 100 are kept (lines 1-100), 250 counted, and the report is read
    assert len(parsed.malformed) == MAX_MALFORMED_KEPT == 100
    assert parsed.malformed[-1].line == 100 and parsed.malformed_count == 250
    assert len(parsed.reports) == 1 and not parsed.truncated


def test_lines_past_the_cap_are_not_read() -> None:
    # Given 5 reports and a cap of 3 lines
    parsed = parse_lines([_report()] * 5, default_time=UPLOADED, max_lines=3)
    # Then 3 are read and the object is marked truncated
    assert (len(parsed.reports), parsed.lines, parsed.truncated) == (3, 3, True)


@pytest.mark.parametrize(
    ("field", "value"),
    [("completed", 2**70), ("completed", 2**63), ("neuron_device", 1e30), ("completed", -(2**63) - 1)],
)
def test_an_integer_outside_the_signed_64_bit_range_rejects_its_line(field: str, value: object) -> None:
    document = json.loads(_report())
    report = document["neuron_runtime_data"][0]["report"]
    if field == "completed":
        report["execution_stats"] = {"execution_summary": {"completed": value}}
    else:
        report["memory_used"] = {"neuron_runtime_used_bytes": {"neuron_device": value}}
    parsed = parse_lines([_report(), json.dumps(document), _report()], default_time=UPLOADED)
    assert len(parsed.reports) == 2
    assert [m.line for m in parsed.malformed] == [2]
    assert "outside the signed 64-bit range" in parsed.malformed[0].reason


def test_counters_that_fit_alone_but_not_summed_reject_their_line() -> None:
    # Given two processes each reporting 2^62 + 2^61 completed executions (together past 2^63 - 1)
    document = json.loads(_report())
    runtime = document["neuron_runtime_data"][0]
    runtime["report"]["execution_stats"] = {"execution_summary": {"completed": 2**62 + 2**61}}
    document["neuron_runtime_data"] = [runtime, {**runtime, "pid": 2, "neuron_runtime_tag": "other"}]
    parsed = parse_lines([json.dumps(document)], default_time=UPLOADED)
    assert not parsed.reports and "add up to more than the signed 64-bit range" in parsed.malformed[0].reason
