"""neuron-monitor with several processes per device (the user guide's schema, an inf1.xlarge: one device, four
NeuronCores, four processes sharing one NEURON_PROCESS_TAG, each listing every core with 0 % for the cores it does
not own): per-core owner figures, the mean over cores in use, memory summed, errors once per report, running-total
counters as deltas, a failed driver as missing; the agent and the rollups agree report by report."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import pytest
from sqlalchemy.orm import Session, sessionmaker

from chipwise import neuron_agent
from chipwise.collect.neuron import (
    INSTANCE_TAG,
    aggregate_hourly,
    error_increments,
    is_running_total,
    parse_lines,
    report_figures,
)
from chipwise.models.neuron import merge_parts
from chipwise.store.repositories.accounts import AccountRepository
from chipwise.store.repositories.neuron import NeuronRepository

DATA = Path(__file__).parent / "data"
MB = 2**20
LINES = (DATA / "inf1_four_processes.jsonl").read_text().splitlines()
NOW = datetime(2026, 11, 20, 12, tzinfo=UTC)


def test_a_core_is_its_owning_process_and_the_mean_is_over_the_cores_in_use() -> None:
    # Given the first report: four processes, each owning one core and listing the other three at 0 %
    report = parse_lines(LINES).reports[0]
    assert len(report.runtimes) == 4 and {r.tag for r in report.runtimes} == {"bert-inf1"}
    figures = report_figures(report)
    # Then each core is its owner's figure, and the instance mean is (2.93 + 3.08 + 2.52 + 2.49) / 4 = 2.755 %
    # (averaging every process's list would say 11.02 / 16 = 0.69 %)
    assert figures.cores == {"0": 2.93, "1": 3.08, "2": 2.52, "3": 2.49}
    assert figures.utilization_mean == pytest.approx(2.755)
    assert figures.utilization_max == 3.08 and figures.state == "measured"
    # device memory is the four processes' 63 MB summed (252 MB), host memory 4 x 512 MB, executions 4 x 10
    assert figures.device_memory_bytes == 4 * 63 * MB == 264_241_152
    assert figures.host_memory_bytes == 4 * 512 * MB
    assert (figures.executions_completed, figures.latency_p50_s, figures.latency_p99_s) == (40, 0.013, 0.02)


def test_the_hour_of_the_four_processes() -> None:
    # Given the three reports of 10:00 and the 11:00 report whose driver was not loaded
    parts = aggregate_hourly(parse_lines(LINES).reports)
    by_hour = {p.hour.hour: merge_parts([p.as_json()]) for p in parts}
    assert {p.runtime_tag for p in parts} == {INSTANCE_TAG}
    ten = by_hour[10]
    # Then the mean is over the reports' instance means: (2.755 + 2.755 + 25) / 3 = 10.17 %
    assert ten["reports"] == 3
    assert ten["neuroncore_utilization_avg"] == pytest.approx(10.17)
    assert (ten["neuroncore_utilization_max"], ten["cores_in_use"]) == (40.0, 4)
    assert ten["device_memory_used_max"] == 264_241_152 and ten["executions_completed"] == 120
    # errors: one error string per process per report counted once per report (4 x 3 = 12), plus the counters:
    # pid 101's generic 2, 2, 3 is a running total (+1), pid 102's 0, 1, 0 a count per period (+1): 14, not 56
    assert ten["errors"] == 14
    # the driver-down hour is missing: one report, no utilisation, no cores, counted as missing
    eleven = by_hour[11]
    assert (eleven["reports"], eleven["reports_missing"], eleven["errors"]) == (1, 1, 1)
    assert eleven["neuroncore_utilization_avg"] is None and eleven["cores_in_use"] is None


@pytest.mark.parametrize(
    ("values", "running"),
    [
        ([2, 2, 3], True),  # never decreases, non-zero twice: a total
        ([5, 5, 5], True),  # a total that stopped growing: no new errors
        ([0, 1, 0], False),  # back to 0 after a burst: per period
        ([0, 0, 3], False),  # one burst: per period (as a total it would be the same 3)
        ([1, 1, 1, 0], False),
        ([4], False),  # one report: as documented, per period
    ],
)
def test_running_totals_are_told_from_counts_per_period(values: list[int], running: bool) -> None:
    assert is_running_total(values) is running


def test_running_totals_become_deltas_per_report() -> None:
    reports = parse_lines(LINES).reports
    # report by report: 0 (pid 101's first total is history), then pid 101 +0 and pid 102 +1, then pid 101 +1
    assert error_increments(reports) == [0, 1, 1, 0]


@pytest.mark.parametrize("line", range(len(LINES)))
def test_the_agent_and_the_rollups_agree_on_each_report(line: int) -> None:
    # Given one report, fed to the host agent and to the ingest path
    sample = neuron_agent.to_sample(json.loads(LINES[line]), NOW)
    [report] = parse_lines([LINES[line]]).reports
    figures = report_figures(report)
    [part] = aggregate_hourly([report])
    rollup = merge_parts([part.as_json()])
    # Then both give the same utilisation, memory and executions (None on both sides when the driver was down)
    assert sample.core_mean == figures.utilization_mean == rollup["neuroncore_utilization_avg"]
    assert sample.core_max == figures.utilization_max == rollup["neuroncore_utilization_max"]
    assert sample.device_memory == figures.device_memory_bytes == rollup["device_memory_used_max"]
    assert sample.executions == figures.executions_completed == rollup["executions_completed"]


def test_the_agent_publishes_no_utilisation_for_a_driver_down_minute() -> None:
    sent: list[dict[str, object]] = []
    publisher = neuron_agent.MetricsPublisher(lambda s: (("InstanceId", s.instance_id or "?"),), emit=sent.extend)
    stats = neuron_agent.run([LINES[3]], publisher, clock=lambda: NOW)
    assert stats.reports == 1
    # only the executions count: no 0 % utilisation for a driver that was not loaded, and no memory figure
    assert [d["MetricName"] for d in sent] == ["ExecutionsCompleted"]


def test_an_hour_of_driver_errors_is_not_telemetry(session_factory: sessionmaker[Session]) -> None:
    # Given the four reports stored
    with session_factory.begin() as session:
        AccountRepository(session).ensure("123456789012")
        NeuronRepository(session).merge(
            "123456789012", "s3://b/neuron/inf1.jsonl", aggregate_hourly(parse_lines(LINES).reports)
        )
    # Then only the measured hour counts as an hour with telemetry
    with session_factory() as session:
        hours = NeuronRepository(session).hours_by_instance(
            "123456789012", ["i-0ccccccccccccccc3"], datetime(2026, 11, 20, tzinfo=UTC), NOW
        )
        assert hours == {"i-0ccccccccccccccc3": 1}
        rows = NeuronRepository(session).rollups("i-0ccccccccccccccc3", datetime(2026, 11, 20, tzinfo=UTC), NOW)
        assert [(r.hour.hour, r.reports, r.reports_missing) for r in rows] == [(10, 3, 0), (11, 1, 1)]


def test_the_ingest_result_counts_the_missing_reports(session_factory: sessionmaker[Session]) -> None:
    from chipwise.pipeline.neuron_ingest import ingest_text

    result = ingest_text(
        session_factory, "\n".join(LINES), source="inf1.jsonl", account_id="123456789012", default_time=NOW
    )
    assert (result.reports, result.reports_missing, result.rollups) == (4, 1, 2)


def test_a_zero_between_bursts_keeps_a_counter_per_period() -> None:
    # Given one process whose generic errors are 2, then 0 (error_summary all zeros), then 2: counts per period
    def line(at: str, generic: int) -> str:
        document = json.loads(LINES[0])
        document["timestamp"] = at
        document["neuron_runtime_data"] = document["neuron_runtime_data"][:1]
        document["neuron_runtime_data"][0]["report"]["execution_stats"]["error_summary"]["generic"] = generic
        document["neuron_runtime_data"][0]["report"]["neuron_runtime_vcpu_usage"]["error"] = ""
        return json.dumps(document)

    reports = parse_lines(
        [line("2026-11-20T10:00:00Z", 2), line("2026-11-20T10:00:05Z", 0), line("2026-11-20T10:00:10Z", 2)]
    ).reports
    # Then the zero is part of the series and the errors add up to 4, not a running total's 0
    assert error_increments(reports) == [2, 0, 2]
