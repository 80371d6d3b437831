"""neuron-monitor input that no real monitor writes is bounded and rejected line by line: a gzip bomb, lines too
long or nested too deep, NaN/Infinity, utilisation outside 0-100 %, times outside the object's window."""

from __future__ import annotations

import json
import tracemalloc
import zlib
from datetime import UTC, datetime

import pytest

from chipwise.collect.neuron import MAX_DECOMPRESSED_BYTES, decode_object, parse_lines

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
