"""Which metrics each resource needs, how queries pack into GetMetricData calls, how series combine."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest

from chipwise.collect import metrics
from chipwise.collect.metrics import Discovered, MetricTarget, combine_series, plan_targets
from chipwise.models.records import CollectedResource
from chipwise.models.resources import parse_details

H0 = datetime(2026, 11, 20, 10, tzinfo=UTC)
H1 = datetime(2026, 11, 20, 11, tzinfo=UTC)


def _resource(kind: Any, platform: Any, name: str = "r", **details: Any) -> CollectedResource:
    return CollectedResource(
        arn=f"arn:{name}",
        kind=kind,
        name=name,
        instance_type="x.large",
        instance_count=1,
        platform=platform,
        state=None,
        unknown_instance_type=False,
        details=parse_details(kind, details),
    )


def _names(targets: list[MetricTarget]) -> list[tuple[str, str, int]]:
    return [(t.spec.namespace, t.spec.metric, len(t.series)) for t in targets]


def test_an_inferentia_endpoint_reads_invocations_instance_and_neuron_metrics_per_variant() -> None:
    # Given an inf2 endpoint with two variants
    variants = [
        {"variant_name": "a", "instance_type": "ml.inf2.xlarge"},
        {"variant_name": "b", "instance_type": "ml.inf2.xlarge"},
    ]
    endpoint = _resource("sagemaker_endpoint", "inferentia", "ep", variants=variants)
    # When planned
    targets = plan_targets([endpoint], Discovered())
    # Then each metric is read per variant, by EndpointName + VariantName
    assert _names(targets) == [
        ("AWS/SageMaker", "Invocations", 2),
        ("AWS/SageMaker", "InvocationsPerInstance", 2),
        ("AWS/SageMaker", "ModelLatency", 2),
        ("Chipwise/Serving", "GeneratedTokens", 2),
        ("/aws/sagemaker/Endpoints", "CPUUtilization", 2),
        ("/aws/sagemaker/Endpoints", "MemoryUtilization", 2),
        ("Chipwise/Neuron", "NeuronCoreUtilization", 2),
        ("Chipwise/Neuron", "NeuronCoreUtilizationAvg", 2),
        ("Chipwise/Neuron", "NeuronDeviceMemoryUsed", 2),
        ("Chipwise/Neuron", "ExecutionsCompleted", 2),
    ]
    assert targets[0].series[1] == (("EndpointName", "ep"), ("VariantName", "b"))
    assert metrics.query_count(targets) == 2 * (1 + 1 + 2 + 1 + 3 + 3 + 3 + 1 + 1 + 1)


def test_an_inference_component_reads_its_own_series_by_inference_component_name() -> None:
    # Given a GPU inference component and a Neuron one (documented in "SageMaker AI inference component metrics")
    component = {"name": "mistral-ic", "variant_name": "AllTraffic"}
    gpu = _resource("sagemaker_inference_component", "nvidia", "ep/mistral-ic", component=component, endpoint_name="ep")
    neuron = _resource(
        "sagemaker_inference_component", "inferentia", "ep/llama-ic", component={"name": "llama-ic"}, endpoint_name="ep"
    )
    # When planned
    targets = plan_targets([gpu, neuron], Discovered())
    # Then invocations and latency come from AWS/SageMaker, utilisation from /aws/sagemaker/InferenceComponents
    # (0-100 % of what the component reserved), all by InferenceComponentName; GPU series only on GPUs
    mine = [t for t in targets if t.resource_key == gpu.key]
    assert _names(mine) == [
        ("AWS/SageMaker", "Invocations", 1),
        ("AWS/SageMaker", "ModelLatency", 1),
        ("/aws/sagemaker/InferenceComponents", "CPUUtilizationNormalized", 1),
        ("/aws/sagemaker/InferenceComponents", "GPUUtilizationNormalized", 1),
        ("/aws/sagemaker/InferenceComponents", "GPUMemoryUtilizationNormalized", 1),
    ]
    assert {t.series for t in mine} == {((("InferenceComponentName", "mistral-ic"),),)}
    assert [t.spec.metric for t in targets if t.resource_key == neuron.key] == [
        "Invocations",
        "ModelLatency",
        "CPUUtilizationNormalized",
    ]


def test_a_serverless_endpoint_has_no_instance_metrics() -> None:
    endpoint = _resource("sagemaker_endpoint", "cpu", "sls", variants=[{"variant_name": "v", "instance_type": None}])
    assert [t.spec.metric for t in plan_targets([endpoint], Discovered())] == [
        "Invocations",
        "InvocationsPerInstance",
        "ModelLatency",
        "GeneratedTokens",
    ]


def test_gpu_instances_use_the_gpus_listmetrics_found_and_eks_nodes_their_node_series() -> None:
    # Given a GPU instance whose agent publishes two GPUs, and an EKS Neuron node
    gpu = _resource("ec2_instance", "nvidia", "gpu", instance_id="i-1")
    node = _resource("ec2_instance", "trainium", "node", instance_id="i-2", eks_cluster="prod")
    gpu_series = [(("InstanceId", "i-1"), ("index", str(n)), ("name", "NVIDIA A10G")) for n in range(2)]
    eks_series = [(("ClusterName", "prod"), ("InstanceId", "i-2"), ("NodeName", "ip-10-0-0-1"))]
    discovered = Discovered(gpu_series={"i-1": gpu_series}, eks_series={"i-2": eks_series})
    # When planned
    targets = plan_targets([gpu, node], discovered)
    # Then GPU metrics come per GPU, the node's from Container Insights, and listed series count as existing
    assert _names(targets) == [
        ("AWS/EC2", "CPUUtilization", 1),
        ("CWAgent", "nvidia_smi_utilization_gpu", 2),
        ("CWAgent", "nvidia_smi_utilization_memory", 2),
        ("AWS/EC2", "CPUUtilization", 1),
        ("Chipwise/Neuron", "NeuronCoreUtilization", 1),
        ("Chipwise/Neuron", "NeuronCoreUtilizationAvg", 1),
        ("Chipwise/Neuron", "NeuronDeviceMemoryUsed", 1),
        ("Chipwise/Neuron", "ExecutionsCompleted", 1),
        ("ContainerInsights", "node_neuroncore_utilization", 1),
    ]
    assert targets[1].listed and targets[-1].listed


def test_a_gpu_instance_without_the_agent_gets_no_gpu_queries() -> None:
    targets = plan_targets([_resource("ec2_instance", "nvidia", "gpu", instance_id="i-1")], Discovered())
    gpu = [t for t in targets if t.spec.namespace == "CWAgent"]
    assert gpu and all(not t.series and not t.listed for t in gpu)
    assert metrics.query_count(targets) == 3


def test_training_jobs_read_every_host() -> None:
    job = _resource("sagemaker_training_job", "nvidia", "job", hosts=["job/algo-1", "job/algo-2"])
    assert _names(plan_targets([job], Discovered())) == [
        ("/aws/sagemaker/TrainingJobs", "CPUUtilization", 2),
        ("/aws/sagemaker/TrainingJobs", "GPUUtilization", 2),
    ]


@pytest.mark.parametrize(
    ("hours", "per_call"), [(1, 500), (24, 500), (201, 500), (202, 499), (336, 300), (14 * 24 * 4, 75)]
)
def test_queries_per_call_respects_both_limits(hours: int, per_call: int) -> None:
    assert metrics.queries_per_call(hours) == per_call
    assert per_call <= 500 and per_call * hours <= 100_800


def test_expected_calls_is_the_ceiling() -> None:
    assert metrics.expected_calls(0, 24) == 0
    assert metrics.expected_calls(1_200 * 9, 24) == 22
    assert metrics.expected_calls(1_200 * 9, 336) == 36


def test_series_combine_as_max_across_gpus() -> None:
    # Given two GPUs, the second busier in hour 1
    target = MetricTarget("arn:gpu", metrics.CWAGENT_GPU, ((("index", "0"),), (("index", "1"),)))
    series: dict[int, dict[Any, dict[datetime, float]]] = {
        0: {"Average": {H0: 50.0, H1: 10.0}, "Maximum": {H0: 70.0, H1: 20.0}, "SampleCount": {H0: 60.0, H1: 60.0}},
        1: {"Average": {H0: 5.0, H1: 90.0}, "Maximum": {H0: 8.0, H1: 99.0}, "SampleCount": {H0: 60.0, H1: 60.0}},
    }
    # When combined
    rows = combine_series(target, series)
    # Then each hour keeps the busiest GPU
    assert [(r.hour, r.average, r.maximum, r.sample_count, r.sum) for r in rows] == [
        (H0, 50.0, 70.0, 60.0, None),
        (H1, 90.0, 99.0, 60.0, None),
    ]


def test_series_spread_over_variants_sum_counts_and_average_gauges() -> None:
    invocations = MetricTarget("arn:ep", metrics.SM_INVOCATIONS, ((("v", "a"),), (("v", "b"),)))
    cpu = MetricTarget("arn:ep", metrics.SM_CPU, ((("v", "a"),), (("v", "b"),)))
    inv_rows = combine_series(invocations, {0: {"Sum": {H0: 100.0}}, 1: {"Sum": {H0: 50.0, H1: 7.0}}})
    cpu_rows = combine_series(
        cpu, {0: {"Average": {H0: 10.0}, "Maximum": {H0: 30.0}}, 1: {"Average": {H0: 30.0}, "Maximum": {H0: 35.0}}}
    )
    assert [(r.hour, r.sum) for r in inv_rows] == [(H0, 150.0), (H1, 7.0)]
    assert [(r.average, r.maximum) for r in cpu_rows] == [(20.0, 35.0)]


def test_the_metric_window_ends_at_the_last_whole_hour() -> None:
    start, end = metrics.metric_window(datetime(2026, 11, 20, 10, 42, 7, tzinfo=UTC), 14)
    assert end == H0 and (end - start).days == 14


def test_read_starts_group_targets_by_where_their_last_read_ended() -> None:
    from datetime import timedelta

    # Given three targets over a 14-day window: one never read, two last read up to yesterday noon
    end = datetime(2026, 11, 21, 12, tzinfo=UTC)
    start = end - timedelta(days=14)
    box = _resource("ec2_instance", "inferentia", "box", instance_id="i-0abc")
    targets = plan_targets([box], Discovered())[:3]
    last = {1: end - timedelta(days=1), 2: end - timedelta(days=1)}
    # When grouped with a 3-hour overlap
    groups = metrics.read_starts(targets, last, start, end, timedelta(hours=3))
    # Then the new one reads the whole window, the others from 27 hours before the end
    assert [(s, len(g)) for s, g in groups] == [(start, 1), (end - timedelta(hours=27), 2)]
    # And a target read up to the end still re-reads its last hour at least (overlap 0)
    (only,) = metrics.read_starts(targets[:1], {0: end}, start, end, timedelta(0))
    assert only[0] == end - timedelta(hours=1)


def test_an_eks_gpu_node_reads_container_insights_per_gpu_and_its_node_series() -> None:
    # Given an EKS GPU node whose Container Insights lists its node series and one series per GPU (the documented
    # dimension sets [ClusterName, InstanceId, NodeName] and [ClusterName, InstanceId, InstanceType, NodeName,
    # GpuDevice]), and a node of another instance
    node = (("ClusterName", "prod"), ("InstanceId", "i-9"), ("NodeName", "ip-10-0-0-9"))
    per_gpu = [
        (
            ("ClusterName", "prod"),
            ("GpuDevice", f"nvidia{n}"),
            ("InstanceId", "i-9"),
            ("InstanceType", "g5.12xlarge"),
            ("NodeName", "ip-10-0-0-9"),
        )
        for n in range(4)
    ]
    listed = {"i-9": sorted([node, *per_gpu]), "i-8": [node]}
    chosen = metrics.eks_gpu_series(listed)
    gpu = _resource("ec2_instance", "nvidia", "node", instance_id="i-9", eks_cluster="prod")
    # When planned
    targets = plan_targets([gpu], Discovered(eks_gpu_series=chosen))
    # Then utilisation, memory and power come per GPU (the busiest wins), the GPUs pods hold and the node's GPUs
    # per node, and only the listed utilisation counts as existing without datapoints
    assert chosen["i-8"] == [node]
    assert _names(targets) == [
        ("AWS/EC2", "CPUUtilization", 1),
        ("CWAgent", "nvidia_smi_utilization_gpu", 0),
        ("CWAgent", "nvidia_smi_utilization_memory", 0),
        ("ContainerInsights", "node_gpu_utilization", 4),
        ("ContainerInsights", "node_gpu_memory_utilization", 4),
        ("ContainerInsights", "node_gpu_power_draw", 4),
        ("ContainerInsights", "node_gpu_usage_total", 1),
        ("ContainerInsights", "node_gpu_limit", 1),
    ]
    assert [t.listed for t in targets[3:]] == [True, False, False, False, False]
    assert targets[-1].series == (node,)
    assert targets[3].spec.combine == "max"
    assert metrics.needs_eks_gpu_discovery([gpu]) and not metrics.needs_eks_gpu_discovery([])


@pytest.mark.parametrize("combine", ["spread", "max"])
def test_one_series_combines_as_it_would_beside_an_empty_one(combine: Any) -> None:
    # Given a target of one series with every statistic, hours where only some have a value, -0.0 among them
    spec = metrics.MetricSpec("AWS/EC2", "CPUUtilization", ("Average", "Maximum", "Sum", "SampleCount"), combine)
    target = MetricTarget("arn:aws:ec2:us-east-1:1:instance/i-1", spec, ((("InstanceId", "i-1"),),))
    h2 = datetime(2026, 11, 20, 12, tzinfo=UTC)
    stats: dict[Any, dict[Any, float]] = {
        "Average": {H0: -0.0, H1: 2.5, h2: 1e308},
        "Maximum": {H0: -0.0, h2: 3.0},
        "Sum": {H1: 0.1},
        "SampleCount": {H0: 60.0, H1: 59.0},
    }
    # When it is combined alone (the one-series path) and beside a series with no datapoints (the general one)
    alone = combine_series(target, {0: stats})
    beside = combine_series(target, {0: stats, 1: {}})
    # Then the rows are the same, to the sign of a zero
    assert alone == beside and len(alone) == 3
    assert [repr(r.average) for r in alone] == [repr(r.average) for r in beside]
    assert repr(alone[0].maximum) == "-0.0" and repr(alone[0].average) == ("-0.0" if combine == "max" else "0.0")


@pytest.mark.parametrize(
    "timestamps",
    [
        [1_763_640_000, 1_763_643_599, 1_763_643_600, 0, -1],  # epoch seconds, as the lean client leaves them
        [1_763_640_000.0, 1_763_643_599.9, 1_763_647_200.5],
        [True, 1_763_640_000],  # a bool is an int to hour_of too
        ["2026-11-20T12:00:00Z", "2026-11-20T12:59:59Z", datetime(2026, 11, 20, 13, 30, tzinfo=UTC)],
        [1_763_640_000, "2026-11-20T12:00:00Z"],  # mixed: each read as hour_of reads it
        [],
    ],
)
def test_hours_of_is_hour_of_per_timestamp(timestamps: list[Any]) -> None:
    hours = metrics.hours_of(timestamps)
    assert hours == [metrics.hour_of(t) for t in timestamps]
    assert all(type(h) is int for h in hours)
