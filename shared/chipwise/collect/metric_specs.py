"""What Chipwise reads from CloudWatch: each metric (namespace, name, statistics, how a resource's series combine),
the dimension sets it is published with, and a target (one metric of one resource, the series to read)."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Literal

MAX_QUERIES_PER_CALL = 500
MAX_DATAPOINTS_PER_CALL = 100_800
PERIOD_SECONDS = 3600

Stat = Literal["Average", "Maximum", "Sum", "SampleCount"]
Combine = Literal["max", "spread"]
GAUGE: tuple[Stat, ...] = ("Average", "Maximum", "SampleCount")
_COLUMN: dict[str, str] = {"Average": "average", "Maximum": "maximum", "Sum": "sum", "SampleCount": "sample_count"}


@dataclass(frozen=True, slots=True)
class MetricSpec:
    """One CloudWatch metric Chipwise reads, the statistics it needs, and how a resource's series combine."""

    namespace: str
    metric: str
    stats: tuple[Stat, ...] = GAUGE
    combine: Combine = "spread"
    zero_when_absent: bool = False  # AWS omits the datapoint when the value is zero (SageMaker invocations)


# SageMaker endpoints, per EndpointName + VariantName.
SM_INVOCATIONS = MetricSpec("AWS/SageMaker", "Invocations", ("Sum",), zero_when_absent=True)
SM_INVOCATIONS_PER_INSTANCE = MetricSpec("AWS/SageMaker", "InvocationsPerInstance", ("Sum",), zero_when_absent=True)
SM_MODEL_LATENCY = MetricSpec("AWS/SageMaker", "ModelLatency", ("Average", "Maximum"), zero_when_absent=True)
SM_CPU = MetricSpec("/aws/sagemaker/Endpoints", "CPUUtilization")
SM_MEMORY = MetricSpec("/aws/sagemaker/Endpoints", "MemoryUtilization")
SM_GPU = MetricSpec("/aws/sagemaker/Endpoints", "GPUUtilization")
SM_GPU_MEMORY = MetricSpec("/aws/sagemaker/Endpoints", "GPUMemoryUtilization")
# Inference components, per InferenceComponentName: invocations in AWS/SageMaker (the specs above), utilisation in
# their own namespace, 0-100 % of what the component reserved (NumberOfAcceleratorDevicesRequired and so on).
IC_NAMESPACE = "/aws/sagemaker/InferenceComponents"
IC_GPU = MetricSpec(IC_NAMESPACE, "GPUUtilizationNormalized")
IC_GPU_MEMORY = MetricSpec(IC_NAMESPACE, "GPUMemoryUtilizationNormalized")
IC_CPU = MetricSpec(IC_NAMESPACE, "CPUUtilizationNormalized")
# EC2, per InstanceId; the CloudWatch agent's nvidia_gpu measurements per GPU index.
EC2_CPU = MetricSpec("AWS/EC2", "CPUUtilization")
CWAGENT_GPU = MetricSpec("CWAgent", "nvidia_smi_utilization_gpu", combine="max")
CWAGENT_GPU_MEMORY = MetricSpec("CWAgent", "nvidia_smi_utilization_memory", combine="max")
# Neuron: Chipwise's agent (by InstanceId, or EndpointName + VariantName inside SageMaker) and EKS Container Insights.
NEURON_NAMESPACE = "Chipwise/Neuron"
NEURON_CORE = MetricSpec(NEURON_NAMESPACE, "NeuronCoreUtilization")
NEURON_CORE_AVG = MetricSpec(NEURON_NAMESPACE, "NeuronCoreUtilizationAvg", ("Average",))
NEURON_DEVICE_MEMORY = MetricSpec(NEURON_NAMESPACE, "NeuronDeviceMemoryUsed", ("Maximum",))
NEURON_EXECUTIONS = MetricSpec(NEURON_NAMESPACE, "ExecutionsCompleted", ("Sum",))
EKS_NEURONCORE = MetricSpec("ContainerInsights", "node_neuroncore_utilization", combine="max")
# NVIDIA GPUs of EKS nodes: Container Insights with enhanced observability (CloudWatch agent >= 1.300034.0, the
# CloudWatch Observability EKS add-on >= v1.3.0-eksbuild.1). Documented dimension sets of the node_gpu_* metrics:
# [ClusterName], [ClusterName, InstanceId, NodeName] and, per GPU, [ClusterName, InstanceId, InstanceType, NodeName,
# GpuDevice]. The per-GPU series are read when listed (the busiest GPU, as for the CloudWatch agent), else the node's.
# pod_gpu_* / container_gpu_* carry no InstanceId or NodeName (their sets are ClusterName, Namespace, PodName,
# FullPodName, ContainerName, GpuDevice), so a pod's series cannot be attributed to one node from CloudWatch alone.
EKS_GPU = MetricSpec("ContainerInsights", "node_gpu_utilization", combine="max")
EKS_GPU_MEMORY = MetricSpec("ContainerInsights", "node_gpu_memory_utilization", combine="max")
EKS_GPU_POWER = MetricSpec("ContainerInsights", "node_gpu_power_draw", combine="max")
EKS_GPU_SPECS = (EKS_GPU, EKS_GPU_MEMORY, EKS_GPU_POWER)
# The node's GPUs its running pods hold (Kubernetes requests) and the GPUs it has, by [ClusterName, InstanceId,
# NodeName] only: the share of the node its workloads hold (the pod series name no node, see above).
EKS_GPU_REQUESTED = MetricSpec("ContainerInsights", "node_gpu_usage_total", ("Average", "Maximum"))
EKS_GPU_LIMIT = MetricSpec("ContainerInsights", "node_gpu_limit", ("Maximum",))
EKS_GPU_NODE_SPECS = (EKS_GPU_REQUESTED, EKS_GPU_LIMIT)
# Tokens a serving endpoint generated per hour, per EndpointName + VariantName: published by whatever reads the
# server's own counters (vLLM ``vllm:generation_tokens_total``, TGI ``tgi_request_generated_tokens``, LMI) into
# CloudWatch; absent hours are unknown (never zero), so cost per token is only stated where it is published.
SERVING_NAMESPACE = "Chipwise/Serving"
SERVING_TOKENS = MetricSpec(SERVING_NAMESPACE, "GeneratedTokens", ("Sum",))
# Bedrock Provisioned Throughput, per ModelId = the provisioned model's ARN (hours without invocations publish none).
BEDROCK_INVOCATIONS = MetricSpec("AWS/Bedrock", "Invocations", ("Sum",), zero_when_absent=True)
# SageMaker training jobs, per Host = <job>/algo-<n>.
TRAINING_CPU = MetricSpec("/aws/sagemaker/TrainingJobs", "CPUUtilization")
TRAINING_GPU = MetricSpec("/aws/sagemaker/TrainingJobs", "GPUUtilization")

NEURON_SPECS = (NEURON_CORE, NEURON_CORE_AVG, NEURON_DEVICE_MEMORY, NEURON_EXECUTIONS)
ENDPOINT_SPECS = (SM_INVOCATIONS, SM_INVOCATIONS_PER_INSTANCE, SM_MODEL_LATENCY, SERVING_TOKENS)
ENDPOINT_INSTANCE_SPECS = (SM_CPU, SM_MEMORY)
COMPONENT_SPECS = (SM_INVOCATIONS, SM_MODEL_LATENCY, IC_CPU)
COMPONENT_GPU_SPECS = (IC_GPU, IC_GPU_MEMORY)
EKS_NODE_DIMENSIONS = frozenset({"ClusterName", "InstanceId", "NodeName"})
EKS_GPU_DEVICE_DIMENSIONS = frozenset({"ClusterName", "InstanceId", "InstanceType", "NodeName", "GpuDevice"})

Dimensions = tuple[tuple[str, str], ...]
HourKey = int | datetime  # epoch seconds of the hour (as read), or the hour itself


def _dims(**values: str) -> Dimensions:
    return tuple(values.items())


@dataclass(frozen=True, slots=True)
class MetricTarget:
    """One metric of one resource: the series to read (one per variant, host or GPU) and how they combine."""

    resource_key: str
    spec: MetricSpec
    series: tuple[Dimensions, ...]
    listed: bool = False  # ListMetrics listed these series: the metric exists even without datapoints


@dataclass
class Discovered:
    """Series found with ListMetrics: by InstanceId, and GPU agent series without one by their ``host``."""

    gpu_series: dict[str, list[Dimensions]] = field(default_factory=dict)
    eks_series: dict[str, list[Dimensions]] = field(default_factory=dict)
    gpu_series_by_host: dict[str, list[Dimensions]] = field(default_factory=dict)
    eks_gpu_series: dict[str, list[Dimensions]] = field(default_factory=dict)  # Container Insights node_gpu_*
