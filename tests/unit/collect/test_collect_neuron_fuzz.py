"""Fuzzing neuron-monitor input (hypothesis): whatever a line holds, the parser and the host agent never crash,
a line is either a report or rejected with its number and reason, and the rest of the file goes on. Impossible
values (negative counts, utilisation outside 0-100 %, NaN, Infinity, times outside the epoch, nesting deeper than
the schema) are rejected."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from chipwise import neuron_agent
from chipwise.collect.neuron import aggregate_hourly, parse_lines, report_figures

UPLOADED = datetime(2026, 11, 20, 12, tzinfo=UTC)
GOOD = json.dumps(
    {
        "timestamp": "2026-11-20T11:00:00Z",
        "instance_info": {"instance_id": "i-0aaaaaaaaaaaaaaa1", "instance_type": "inf2.xlarge"},
        "neuron_runtime_data": [
            {
                "pid": 1,
                "neuron_runtime_tag": "bert",
                "report": {"neuroncore_counters": {"neuroncores_in_use": {"0": {"neuroncore_utilization": 12.5}}}},
            }
        ],
    }
)

# Values a hostile or broken shipper could put anywhere: the JSON constants Python's json writes, huge numbers,
# negatives, wrong types.
ODD_NUMBERS = st.one_of(
    st.floats(allow_nan=True, allow_infinity=True),
    st.integers(min_value=-(10**30), max_value=10**30),
    st.sampled_from([float("nan"), float("inf"), float("-inf"), -1, 1e308, -1e308, 10**400]),
)
ODD_VALUES = st.one_of(ODD_NUMBERS, st.text(max_size=20), st.booleans(), st.none(), st.lists(st.integers(), max_size=3))


def _document(value: Any, where: str) -> dict[str, Any]:
    """A report with ``value`` at one field the parser reads."""
    runtime: dict[str, Any] = {
        "pid": 1,
        "neuron_runtime_tag": "bert",
        "report": {
            "neuroncore_counters": {"neuroncores_in_use": {"0": {"neuroncore_utilization": 10.0, "flops": 1}}},
            "execution_stats": {
                "error_summary": {"generic": 0},
                "execution_summary": {"completed": 1},
                "latency_stats": {"total_latency": {"p50": 0.01, "p99": 0.02}},
            },
            "memory_used": {"neuron_runtime_used_bytes": {"host": 1, "neuron_device": 1}},
        },
    }
    document: dict[str, Any] = {
        "timestamp": "2026-11-20T11:00:00Z",
        "instance_info": {"instance_id": "i-0aaaaaaaaaaaaaaa1"},
        "neuron_runtime_data": [runtime],
        "neuron_hardware_info": {"neuron_device_count": 1, "error": ""},
    }
    report = runtime["report"]
    targets = {
        "timestamp": lambda: document.__setitem__("timestamp", value),
        "report_time": lambda: document["instance_info"].__setitem__("report_time", value),
        "utilization": lambda: report["neuroncore_counters"]["neuroncores_in_use"]["0"].__setitem__(
            "neuroncore_utilization", value
        ),
        "flops": lambda: report["neuroncore_counters"]["neuroncores_in_use"]["0"].__setitem__("flops", value),
        "completed": lambda: report["execution_stats"]["execution_summary"].__setitem__("completed", value),
        "errors": lambda: report["execution_stats"]["error_summary"].__setitem__("generic", value),
        "p99": lambda: report["execution_stats"]["latency_stats"]["total_latency"].__setitem__("p99", value),
        "memory": lambda: report["memory_used"]["neuron_runtime_used_bytes"].__setitem__("neuron_device", value),
        "pid": lambda: runtime.__setitem__("pid", value),
        "device_count": lambda: document["neuron_hardware_info"].__setitem__("neuron_device_count", value),
        "runtimes": lambda: document.__setitem__("neuron_runtime_data", value),
        "cores": lambda: report["neuroncore_counters"].__setitem__("neuroncores_in_use", value),
    }
    targets[where]()
    return document


WHERE = st.sampled_from(
    [
        "timestamp",
        "report_time",
        "utilization",
        "flops",
        "completed",
        "errors",
        "p99",
        "memory",
        "pid",
        "device_count",
        "runtimes",
        "cores",
    ]
)


def _line(value: Any, where: str) -> str:
    return json.dumps(_document(value, where))  # allow_nan: writes NaN / Infinity as a careless shipper would


def _check_both(lines: list[str]) -> None:
    parsed = parse_lines(lines, default_time=UPLOADED)
    # every non-blank line is accounted for: a report, or rejected with its number and a reason
    assert len(parsed.reports) + len(parsed.malformed) == sum(1 for line in lines if line.strip())
    assert all(m.reason and 1 <= m.line <= len(lines) for m in parsed.malformed)
    for report in parsed.reports:
        figures = report_figures(report)
        assert figures.utilization_mean is None or 0 <= figures.utilization_mean <= 100
        assert (figures.device_memory_bytes or 0) >= 0 and figures.executions_completed >= 0
    for part in aggregate_hourly(parsed.reports):
        assert part.errors >= 0 and part.executions_completed >= 0
    # the host agent never breaks its pipe either
    sent: list[dict[str, Any]] = []
    publisher = neuron_agent.MetricsPublisher(lambda s: (("InstanceId", s.instance_id or "?"),), emit=sent.extend)
    stats = neuron_agent.run(lines, publisher, clock=lambda: UPLOADED)
    assert stats.reports + len(stats.malformed) == sum(1 for line in lines if line.strip())
    for datum in sent:
        if datum["Unit"] == "Percent":
            values = datum["StatisticValues"]
            assert 0 <= values["Minimum"] <= values["Maximum"] <= 100


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(value=ODD_VALUES, where=WHERE)
def test_an_odd_value_anywhere_never_crashes_and_the_rest_goes_on(value: Any, where: str) -> None:
    # Given a good line, a line with an odd value in one field, and a good line again
    lines = [GOOD, _line(value, where), GOOD]
    # Then nothing crashes, and both good lines are reports
    _check_both(lines)
    parsed = parse_lines(lines, default_time=UPLOADED)
    assert {m.line for m in parsed.malformed} <= {2}


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=200))
def test_any_text_line_never_crashes(text: str) -> None:
    _check_both([GOOD, text, GOOD])


@settings(max_examples=50, deadline=None)
@given(depth=st.integers(min_value=1, max_value=20_000), bracket=st.sampled_from(["[", '{"a":']))
def test_deep_nesting_never_crashes(depth: int, bracket: str) -> None:
    closing = "]" if bracket == "[" else "}"
    _check_both([GOOD, bracket * depth + "1" + closing * depth, GOOD])


@pytest.mark.parametrize(
    ("value", "where", "reason"),
    [
        (float("inf"), "timestamp", "Infinity"),
        (float("nan"), "utilization", "NaN"),
        (-1, "memory", "negative"),
        (-3, "completed", "negative"),
        (-2, "errors", "negative"),
        (-0.5, "p99", "negative"),
        (101, "utilization", "outside 0-100 %"),
        (1e12, "timestamp", "not a time"),
        (-1e12, "timestamp", "not a time"),
    ],
)
def test_impossible_values_are_rejected_with_their_line_number(value: Any, where: str, reason: str) -> None:
    parsed = parse_lines([GOOD, _line(value, where), GOOD], default_time=UPLOADED)
    assert len(parsed.reports) == 2
    [bad] = parsed.malformed
    assert bad.line == 2 and reason in bad.reason
