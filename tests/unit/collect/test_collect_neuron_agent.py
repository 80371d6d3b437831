"""The standard-library agent: samples from reports, per-minute statistic sets, the PutMetricData form, SigV4."""

from __future__ import annotations

import ast
import json
import urllib.parse
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from botocore.auth import SigV4Auth
from botocore.awsrequest import AWSRequest
from botocore.credentials import Credentials as BotoCredentials

from chipwise import neuron_agent
from chipwise.neuron_agent import Credentials, MetricsPublisher, put_metric_data_body, run, sign_v4, to_sample

DATA = Path(__file__).parent / "data"
GIB = 2**30
NOW = datetime(2026, 11, 22, 12, tzinfo=UTC)


def test_the_agent_imports_only_the_standard_library() -> None:
    # Given the agent's source
    tree = ast.parse(Path(neuron_agent.__file__).read_text())
    imported = {
        (node.module or "").split(".")[0] if isinstance(node, ast.ImportFrom) else alias.name.split(".")[0]
        for node in ast.walk(tree)
        if isinstance(node, ast.Import | ast.ImportFrom)
        for alias in node.names
    }
    # Then every module it imports ships with Python
    import sys

    assert imported - {"__future__"} <= set(sys.stdlib_module_names)


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
    last = by_minute["2026-11-20T11:01:00Z"]
    assert last["NeuronCoreUtilization"]["StatisticValues"] == {
        "SampleCount": 2,
        "Sum": 0.0,
        "Minimum": 0.0,
        "Maximum": 0.0,
    }


def test_inside_sagemaker_the_dimensions_are_the_endpoint_and_variant() -> None:
    args = neuron_agent.build_parser().parse_args(["--endpoint-name", "chat", "--variant-name", "blue"])
    dims = neuron_agent._dimension_fn(args)(to_sample({}, NOW))
    assert tuple(dims) == (("EndpointName", "chat"), ("VariantName", "blue"))


def test_the_put_metric_data_form() -> None:
    datums = [
        {
            "MetricName": "NeuronCoreUtilization",
            "Dimensions": [{"Name": "InstanceId", "Value": "i-1"}],
            "Timestamp": "2026-11-20T10:58:00Z",
            "Unit": "Percent",
            "StatisticValues": {"SampleCount": 2.0, "Sum": 60.0, "Minimum": 20.0, "Maximum": 40.0},
        },
        {
            "MetricName": "ExecutionsCompleted",
            "Dimensions": [],
            "Timestamp": "2026-11-20T10:58:00Z",
            "Unit": "Count",
            "Value": 81,
        },
    ]
    form = dict(urllib.parse.parse_qsl(put_metric_data_body("Chipwise/Neuron", datums).decode()))
    assert form["Action"] == "PutMetricData" and form["Namespace"] == "Chipwise/Neuron"
    assert form["MetricData.member.1.Dimensions.member.1.Value"] == "i-1"
    assert form["MetricData.member.1.StatisticValues.Maximum"] == "40.0"
    assert form["MetricData.member.2.Value"] == "81.0"


@pytest.mark.parametrize("token", [None, "session-token"])
def test_sigv4_matches_botocore(token: str | None) -> None:
    # Given the same POST signed by the agent and by botocore at the same instant
    url = "https://monitoring.us-east-1.amazonaws.com/"
    body = b"Action=PutMetricData&Version=2010-08-01&Namespace=Chipwise%2FNeuron"
    headers = {"Content-Type": "application/x-www-form-urlencoded; charset=utf-8"}
    at = datetime(2026, 11, 20, 10, 58, 7, tzinfo=UTC)
    ours = sign_v4(
        "POST",
        url,
        headers,
        body,
        service="monitoring",
        region="us-east-1",
        credentials=Credentials("AKIDEXAMPLE", "secret", token),
        now=at,
    )
    request = AWSRequest(
        method="POST",
        url=url,
        data=body,
        headers={**headers, "X-Amz-Date": "20261120T105807Z", "X-Amz-Content-Sha256": ours["x-amz-content-sha256"]},
    )
    auth = SigV4Auth(BotoCredentials("AKIDEXAMPLE", "secret", token), "monitoring", "us-east-1")
    auth._modify_request_before_signing = lambda req: _keep_date(auth, req)  # type: ignore[method-assign]
    auth.add_auth(request)
    # Then the signatures agree
    assert ours["Authorization"] == request.headers["Authorization"]


def _keep_date(auth: SigV4Auth, request: AWSRequest) -> None:
    """botocore's own preparation, minus replacing X-Amz-Date with the current time."""
    if "Authorization" in request.headers:
        del request.headers["Authorization"]
    if "host" not in request.headers:
        request.headers["host"] = urllib.parse.urlsplit(request.url).netloc
    if auth.credentials.token:
        request.headers["X-Amz-Security-Token"] = auth.credentials.token
    request.context["timestamp"] = request.headers["X-Amz-Date"]


def test_credentials_come_from_the_environment_first() -> None:
    chain = neuron_agent.CredentialChain(
        {"AWS_ACCESS_KEY_ID": "a", "AWS_SECRET_ACCESS_KEY": "b", "AWS_SESSION_TOKEN": "c"}
    )
    assert chain.get() == Credentials("a", "b", "c")


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
