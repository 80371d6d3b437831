"""Issue 34, item 6: OTel Container Insights' open-source GPU and Neuron metric names, read beside the classic ones.

Shapes as documented: CloudWatch's QueryMetrics (``POST /api/v1/query_range`` with ``query``, ``start``, ``end``,
``step``, ``limit`` form fields, SigV4 service ``monitoring``) answers with the Prometheus HTTP API's JSON
(``{"status": "success", "data": {"resultType": "matrix", "result": [{"metric": {...}, "values": [[t, "v"]]}]}}``,
or ``{"status": "error", "errorType": ..., "error": ...}``); OpenTelemetry resource attributes are ``@resource.*``
labels. The labels are the CloudWatch agent's OTel Container Insights pipelines' (amazon-cloudwatch-agent
``.../opentelemetry/containerinsights/dcgm.yaml``, ``neuron.yaml``): DCGM's ``gpu``, ``UUID``, ``device``,
``modelName`` with ``Hostname`` deleted, the node as resource attributes ``k8s.node.name`` and (EC2 detector)
``host.id``; neuron-monitor's ``instance_id`` kept, ``neuroncore`` renamed ``aws.neuron.core``, and
``neuroncore_utilization_ratio`` scaled to 0-100 by the ``awsneuron`` processor."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from typing import Any
from urllib.parse import parse_qs

import boto3
import httpx
import pytest

from chipwise.aws import AwsContext
from chipwise.collect.metric_specs import Discovered
from chipwise.collect.otel_metrics import (
    OTEL_NAMESPACE,
    CloudWatchPromQL,
    OTelNode,
    PromQLUnavailable,
    otel_nodes,
    parse_query_response,
    read_otel_metrics,
)
from chipwise.errors import UpstreamError
from chipwise.models.records import CollectedResource
from chipwise.models.resources import InstanceDetails

END = datetime(2026, 11, 20, 12, tzinfo=UTC)
START = END - timedelta(hours=2)
H1, H2 = int(START.timestamp()), int(START.timestamp()) + 3600  # the two hours of the window
HOST = "ip-10-0-1-5.ec2.internal"


def _matrix(*series: tuple[dict[str, str], list[tuple[int, str]]]) -> str:
    result = [{"metric": labels, "values": [[t, v] for t, v in values]} for labels, values in series]
    return json.dumps({"status": "success", "data": {"resultType": "matrix", "result": result}})


def _dcgm(metric: str, gpu: str, node: str = HOST) -> dict[str, str]:
    return {
        "__name__": metric,
        "gpu": gpu,
        "UUID": f"GPU-{gpu}0ac76c-d9cf-fef3-62e9-d92044ab6e52",
        "device": f"nvidia{gpu}",
        "modelName": "NVIDIA L4",
        "@resource.k8s.node.name": node,
        "@resource.k8s.cluster.name": "inference-prod",
    }


class FakePromQL:
    """Answers each (function, metric) with the series given; records the queries asked."""

    def __init__(self, answers: dict[tuple[str, str], list[tuple[dict[str, str], list[tuple[int, str]]]]]) -> None:
        self.answers = answers
        self.asked: list[tuple[str, datetime, datetime, int]] = []

    def query_range(self, query: str, start: datetime, end: datetime, step_seconds: int) -> list[dict[str, Any]]:
        self.asked.append((query, start, end, step_seconds))
        function, _, rest = query.partition("(")
        metric = rest.split('"')[1]
        payload = json.loads(_matrix(*self.answers.get((function, metric), [])))
        return list(payload["data"]["result"])


def _at_end_of(hour: int) -> int:
    return hour + 3600  # a range query's value at t covers (t - 1h, t]


def test_gpu_node_rows_under_the_classic_names_busiest_gpu_memory_percent_and_power() -> None:
    gpu0, gpu1 = _dcgm("DCGM_FI_DEV_GPU_UTIL", "0"), _dcgm("DCGM_FI_DEV_GPU_UTIL", "1")
    promql = FakePromQL(
        {
            ("avg_over_time", "DCGM_FI_DEV_GPU_UTIL"): [
                (gpu0, [(_at_end_of(H1), "10"), (_at_end_of(H2), "0")]),
                (gpu1, [(_at_end_of(H1), "70"), (_at_end_of(H2), "5")]),
            ],
            ("max_over_time", "DCGM_FI_DEV_GPU_UTIL"): [(gpu1, [(_at_end_of(H1), "95")])],
            ("count_over_time", "DCGM_FI_DEV_GPU_UTIL"): [(gpu0, [(_at_end_of(H1), "120")])],
            # frame buffer in MiB: 6,000 of 24,000 used on average, 12,000 at most
            ("avg_over_time", "DCGM_FI_DEV_FB_USED"): [(_dcgm("DCGM_FI_DEV_FB_USED", "0"), [(_at_end_of(H1), "6000")])],
            ("max_over_time", "DCGM_FI_DEV_FB_USED"): [
                (_dcgm("DCGM_FI_DEV_FB_USED", "0"), [(_at_end_of(H1), "12000")])
            ],
            ("avg_over_time", "DCGM_FI_DEV_FB_FREE"): [
                (_dcgm("DCGM_FI_DEV_FB_FREE", "0"), [(_at_end_of(H1), "18000")])
            ],
            ("avg_over_time", "DCGM_FI_DEV_POWER_USAGE"): [
                (_dcgm("DCGM_FI_DEV_POWER_USAGE", "0"), [(_at_end_of(H1), "16.5")])
            ],
        }
    )
    nodes = [OTelNode("node-a", "i-0abc", (HOST, "ip-10-0-1-5"), "gpu")]
    read = read_otel_metrics(promql, nodes, START, END)
    rows = {(r.metric, int(r.hour.timestamp())): r for r in read.rollups}
    assert {r.namespace for r in read.rollups} == {OTEL_NAMESPACE}
    util = rows[("node_gpu_utilization", H1)]
    assert (util.average, util.maximum, util.sample_count) == (70.0, 95.0, 120.0)  # the busiest GPU
    assert rows[("node_gpu_utilization", H2)].average == 5.0
    memory = rows[("node_gpu_memory_utilization", H1)]
    assert (memory.average, memory.maximum) == (25.0, 50.0)  # of FB_USED + FB_FREE
    assert rows[("node_gpu_power_draw", H1)].average == 16.5
    coverage = {(c.metric, c.exists, c.hours_with_data) for c in read.coverage}
    assert ("node_gpu_utilization", True, 2) in coverage and ("node_gpu_power_draw", True, 1) in coverage
    # the queries: by metric name, the batch's nodes by instance id or else node name, hourly steps
    query, start, end, step = promql.asked[0]
    names = "i-0abc|ip-10-0-1-5|ip-10-0-1-5\\\\.ec2\\\\.internal"  # "." escaped for the regex, "\\" for the string
    assert query == (
        'avg_over_time({"DCGM_FI_DEV_GPU_UTIL", "@resource.host.id"=~"i-0abc"}[1h]) or '
        'avg_over_time({"DCGM_FI_DEV_GPU_UTIL", "@resource.k8s.node.name"=~"' + names + '"}[1h])'
    )
    assert (start, end, step) == (START + timedelta(hours=1), END, 3600)


def test_neuron_utilisation_is_read_as_the_percent_the_agent_made_it_and_a_silent_node_has_no_telemetry() -> None:
    def core(n: str, instance: str) -> dict[str, str]:
        return {
            "__name__": "neuroncore_utilization_ratio",
            "aws.neuron.core": n,
            "aws.neuron.device": "0",
            "instance_id": instance,
            "@resource.aws.neuron.runtime.tag": "367",
        }

    promql = FakePromQL(
        {
            ("avg_over_time", "neuroncore_utilization_ratio"): [
                (core("0", "i-0aaa"), [(_at_end_of(H1), "25")]),
                (core("1", "i-0aaa"), [(_at_end_of(H1), "64")]),
                (core("0", "i-0ffffffffffffffff"), [(_at_end_of(H1), "90")]),  # not a node asked about
            ]
        }
    )
    nodes = [OTelNode("node-a", "i-0aaa", (), "neuron"), OTelNode("node-b", "i-0bbb", (), "neuron")]
    read = read_otel_metrics(promql, nodes, START, END)
    [row] = read.rollups
    assert (row.resource_key, row.metric, row.average) == ("node-a", "node_neuroncore_utilization", 64.0)
    coverage = {(c.resource_key, c.exists) for c in read.coverage}
    assert coverage == {("node-a", True), ("node-b", False)}  # node-b: no telemetry, never "idle"


def test_series_are_matched_by_instance_id_or_by_a_node_named_after_the_instance() -> None:
    by_id = {"__name__": "DCGM_FI_DEV_GPU_UTIL", "gpu": "0", "@resource.host.id": "i-0abc"}
    auto_mode = {"__name__": "DCGM_FI_DEV_GPU_UTIL", "gpu": "0", "@resource.k8s.node.name": "i-0def"}  # EKS Auto Mode
    promql = FakePromQL(
        {
            ("avg_over_time", "DCGM_FI_DEV_GPU_UTIL"): [
                (by_id, [(_at_end_of(H1), "42")]),
                (auto_mode, [(_at_end_of(H1), "7")]),
            ]
        }
    )
    nodes = [OTelNode("node-a", "i-0abc", ("ip-10-0-1-5",), "gpu"), OTelNode("node-b", "i-0def", (), "gpu")]
    read = read_otel_metrics(promql, nodes, START, END)
    assert [(r.resource_key, r.average) for r in read.rollups] == [("node-a", 42.0), ("node-b", 7.0)]


def test_batches_keep_each_answer_under_500_series() -> None:
    nodes = [OTelNode(f"n{i}", f"i-{i:04d}", (f"ip-10-0-0-{i}",), "gpu") for i in range(40)]
    promql = FakePromQL({})
    read_otel_metrics(promql, nodes, START, END)
    batches = {q.split('"@resource.host.id"=~"')[1].split('"')[0] for q, *_ in promql.asked}
    assert len(batches) == 2 and all(len(b.split("|")) * 16 <= 500 for b in batches)


@pytest.mark.parametrize(
    ("status", "body", "error"),
    [
        (404, "<UnknownOperationException/>", PromQLUnavailable),
        (200, "<html>not prometheus</html>", PromQLUnavailable),
        (403, '{"message": "User is not authorized to perform: cloudwatch:GetMetricData"}', UpstreamError),
        (400, '{"status": "error", "errorType": "bad_data", "error": "1:1: parse error"}', UpstreamError),
        (503, '{"status": "error", "errorType": "unavailable", "error": "throttled"}', UpstreamError),
        (200, '{"status": "success", "data": {"resultType": "vector", "result": []}}', UpstreamError),
    ],
)
def test_answers_that_are_not_a_matrix(status: int, body: str, error: type[Exception]) -> None:
    with pytest.raises(error) as raised:
        parse_query_response(status, body)
    assert "\n" not in str(raised.value)


def test_query_metrics_request_is_signed_for_monitoring_and_form_encoded() -> None:
    seen: list[httpx.Request] = []

    def answer(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return httpx.Response(200, text=_matrix((_dcgm("DCGM_FI_DEV_GPU_UTIL", "0"), [(_at_end_of(H1), "3")])))

    session = boto3.Session(aws_access_key_id="AKIDEXAMPLE", aws_secret_access_key="secret", region_name="us-east-1")
    aws = AwsContext(session, "us-east-1")
    promql = CloudWatchPromQL(aws, httpx.Client(transport=httpx.MockTransport(answer)))
    result = promql.query_range('{"DCGM_FI_DEV_GPU_UTIL"}', START, END, 3600)
    assert result[0]["metric"]["gpu"] == "0"
    [request] = seen
    assert (request.method, request.url.path) == ("POST", "/api/v1/query_range")
    assert request.url.host == "monitoring.us-east-1.amazonaws.com"
    form = {k: v[0] for k, v in parse_qs(request.content.decode()).items()}
    assert form == {
        "query": '{"DCGM_FI_DEV_GPU_UTIL"}',
        "start": str(int(START.timestamp())),
        "end": str(int(END.timestamp())),
        "step": "3600s",
        "limit": "500",
    }
    auth = request.headers["authorization"]
    assert auth.startswith("AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/") and "/us-east-1/monitoring/aws4_request" in auth
    assert aws.counter.snapshot() == {"cloudwatch.QueryMetrics": 1}


def _node(name: str, platform: str, instance: str, cluster: str | None) -> CollectedResource:
    details = InstanceDetails(
        instance_id=instance, eks_cluster=cluster, private_dns_name=f"ip-10-0-0-{instance[-1]}.ec2.internal"
    )
    return CollectedResource(
        arn=f"arn:aws:ec2:us-east-1:123456789012:instance/{instance}",
        kind="ec2_instance",
        name=name,
        instance_type="g6.xlarge" if platform == "nvidia" else "inf2.xlarge",
        instance_count=1,
        platform=platform,  # type: ignore[arg-type]
        state="running",
        unknown_instance_type=False,
        details=details,
    )


def test_only_eks_nodes_classic_container_insights_has_no_series_for() -> None:
    resources = [
        _node("classic-gpu", "nvidia", "i-1", "prod"),
        _node("otel-gpu", "nvidia", "i-2", "prod"),
        _node("otel-neuron", "inferentia", "i-3", "prod"),
        _node("not-eks", "nvidia", "i-4", None),
    ]
    discovered = Discovered(eks_gpu_series={"i-1": [(("ClusterName", "prod"), ("InstanceId", "i-1"))]})
    keys = {r.key: r.name for r in resources}
    assert [(keys[n.resource_key], n.kind) for n in otel_nodes(resources, discovered)] == [
        ("otel-gpu", "gpu"),
        ("otel-neuron", "neuron"),
    ]
