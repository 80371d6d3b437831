"""The agent: samples from reports, per-minute statistic sets, publishing through boto3 (retries, buffering)."""

from __future__ import annotations

import ast
import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import boto3
import pytest
from botocore.stub import Stubber

from chipwise import neuron_agent
from chipwise.neuron_agent import MetricsPublisher, run, to_sample

DATA = Path(__file__).parent / "data"
GIB = 2**30
NOW = datetime(2026, 11, 22, 12, tzinfo=UTC)


def test_the_agent_imports_only_the_standard_library_and_boto3() -> None:
    # Given the agent's source
    tree = ast.parse(Path(neuron_agent.__file__).read_text())
    imported = {
        (node.module or "").split(".")[0] if isinstance(node, ast.ImportFrom) else alias.name.split(".")[0]
        for node in ast.walk(tree)
        if isinstance(node, ast.Import | ast.ImportFrom)
        for alias in node.names
    }
    # Then every module it imports ships with Python, or is boto3 (on every DLAMI and Neuron container)
    import sys

    assert imported - {"__future__", "boto3", "botocore"} <= set(sys.stdlib_module_names)
    assert "chipwise" not in imported


def test_a_sample_is_the_busiest_core_the_mean_the_memory_and_the_executions() -> None:
    line = (DATA / "inf2_xlarge.jsonl").read_text().splitlines()[2]
    sample = to_sample(json.loads(line), NOW)
    assert sample.at == datetime(2026, 11, 20, 10, 59, tzinfo=UTC)
    assert (sample.core_max, sample.core_mean, sample.executions) == (60.0, 45.0, 42.0)
    assert sample.device_memory == GIB + 2 * GIB // 4
    assert sample.instance_id == "i-0aaaaaaaaaaaaaaa1"


def test_a_report_without_applications_is_an_idle_sample_at_arrival_time() -> None:
    sample = to_sample({"neuron_runtime_data": []}, NOW)
    assert (sample.at, sample.core_max, sample.core_mean, sample.executions) == (NOW, 0.0, 0.0, 0.0)


def test_a_recorded_stream_becomes_per_minute_statistic_sets() -> None:
    # Given the recorded inf2 stream and a publisher that collects what it would send
    sent: list[dict[str, Any]] = []
    publisher = MetricsPublisher(lambda s: (("InstanceId", s.instance_id or "?"),), emit=sent.extend)
    # When the agent runs over it
    stats = run((DATA / "inf2_xlarge.jsonl").read_text().splitlines(), publisher, clock=lambda: NOW)
    # Then malformed lines are counted and every minute is published once, oldest first
    assert (stats.lines, stats.reports, stats.malformed) == (10, 8, [7, 10])
    by_minute: dict[str, dict[str, Any]] = {}
    for datum in sent:
        by_minute.setdefault(datum["Timestamp"], {})[datum["MetricName"]] = datum
    assert list(by_minute) == [
        "2026-11-20T10:58:00Z",
        "2026-11-20T10:59:00Z",
        "2026-11-20T11:00:00Z",
        "2026-11-20T11:01:00Z",
    ]
    first = by_minute["2026-11-20T10:58:00Z"]
    assert first["NeuronCoreUtilization"]["StatisticValues"] == {
        "SampleCount": 2,
        "Sum": 60.0,
        "Minimum": 20.0,
        "Maximum": 40.0,
    }
    assert first["NeuronCoreUtilization"]["Unit"] == "Percent"
    assert first["NeuronCoreUtilizationAvg"]["StatisticValues"]["Sum"] == 45.0
    assert first["NeuronDeviceMemoryUsed"]["StatisticValues"]["Maximum"] == GIB + GIB // 4
    assert first["ExecutionsCompleted"] == {
        "MetricName": "ExecutionsCompleted",
        "Dimensions": [{"Name": "InstanceId", "Value": "i-0aaaaaaaaaaaaaaa1"}],
        "Timestamp": "2026-11-20T10:58:00Z",
        "Unit": "Count",
        "Value": 81.0,
    }
    # the last minute: the report whose runtime could not be reached is missing (not 0 %), the idle one is 0 %
    last = by_minute["2026-11-20T11:01:00Z"]
    assert last["NeuronCoreUtilization"]["StatisticValues"] == {
        "SampleCount": 1,
        "Sum": 0.0,
        "Minimum": 0.0,
        "Maximum": 0.0,
    }


def test_inside_sagemaker_the_dimensions_are_the_endpoint_and_variant() -> None:
    args = neuron_agent.build_parser().parse_args(["--endpoint-name", "chat", "--variant-name", "blue"])
    dims = neuron_agent._dimension_fn(args)(to_sample({}, NOW))
    assert tuple(dims) == (("EndpointName", "chat"), ("VariantName", "blue"))


DATUMS = [
    {
        "MetricName": "NeuronCoreUtilization",
        "Dimensions": [{"Name": "InstanceId", "Value": "i-1"}],
        "Timestamp": "2026-11-20T10:58:00Z",
        "Unit": "Percent",
        "StatisticValues": {"SampleCount": 2.0, "Sum": 60.0, "Minimum": 20.0, "Maximum": 40.0},
    }
]


def _cloudwatch() -> Any:
    return boto3.session.Session().client(
        "cloudwatch", region_name="us-east-1", aws_access_key_id="a", aws_secret_access_key="b"
    )


def test_a_failed_publish_keeps_the_datums_for_the_next_flush(capsys: pytest.CaptureFixture[str]) -> None:
    # Given CloudWatch throttling the first PutMetricData (after boto3's own retries) and accepting the next one
    client = _cloudwatch()
    publisher = MetricsPublisher(lambda _s: (("InstanceId", "i-1"),), client=client)
    publisher.pending = [dict(d) for d in DATUMS]
    with Stubber(client) as stub:
        stub.add_client_error("put_metric_data", service_error_code="Throttling", http_status_code=400)
        stub.add_response("put_metric_data", {}, {"Namespace": "Chipwise/Neuron", "MetricData": DATUMS})
        # When it flushes twice
        publisher.flush()
        assert publisher.pending and publisher.published == 0  # kept, the pipe not broken
        publisher.flush()
        stub.assert_no_pending_responses()
    # Then the datums went out once, on the second flush, and the failure was said on stderr
    assert publisher.pending == [] and publisher.published == 1
    assert "publish failed, 1 datums kept for the next flush" in capsys.readouterr().err


def test_the_agent_uses_botos_standard_retries_and_no_hand_written_signing() -> None:
    neuron_agent.aws_client.cache_clear()
    client = neuron_agent.aws_client("cloudwatch", "us-east-1")
    neuron_agent.aws_client.cache_clear()
    assert client.meta.config.retries["mode"] == "standard"
    assert client.meta.region_name == "us-east-1"
    source = Path(neuron_agent.__file__).read_text()
    assert "hmac" not in source and "sign_v4" not in source and "169.254" not in source


def test_s3_mode_without_a_bucket_is_a_clear_error() -> None:
    with pytest.raises(SystemExit, match="--to s3 needs --bucket"):
        neuron_agent.main(["--to", "s3", "--region", "us-east-1", "--input", str(DATA / "trn1_32xlarge.jsonl")])


def test_stdout_mode_prints_a_json_line_per_publish(capsys: pytest.CaptureFixture[str]) -> None:
    import io

    out = io.StringIO()
    assert neuron_agent.main(["--to", "stdout", "--input", str(DATA / "trn1_32xlarge.jsonl")], out=out) == 0
    published = [d for line in out.getvalue().splitlines() for d in json.loads(line)]
    assert {d["MetricName"] for d in published} == {
        "NeuronCoreUtilization",
        "NeuronCoreUtilizationAvg",
        "NeuronDeviceMemoryUsed",
        "ExecutionsCompleted",
    }
    assert "3 reports from 3 lines, 0 malformed" in capsys.readouterr().err
