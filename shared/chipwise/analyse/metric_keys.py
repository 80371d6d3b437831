"""The CloudWatch metrics the rules read (namespace, metric), how each hour of them is rolled up, and which
source answers first when several publish the same signal."""

from __future__ import annotations

MetricKey = tuple[str, str]

# CloudWatch metrics the rules read, and which rollup column is the hour's value: sums for counters, the hour's
# maximum for gauges (conservative: an hour is idle only when even its busiest minute was).
INVOCATIONS: MetricKey = ("AWS/SageMaker", "Invocations")
MODEL_LATENCY: MetricKey = ("AWS/SageMaker", "ModelLatency")
SM_CPU: MetricKey = ("/aws/sagemaker/Endpoints", "CPUUtilization")
SM_GPU: MetricKey = ("/aws/sagemaker/Endpoints", "GPUUtilization")
SM_GPU_MEMORY: MetricKey = ("/aws/sagemaker/Endpoints", "GPUMemoryUtilization")
# Inference components: 0-100 % of what the component reserved, by InferenceComponentName.
IC_GPU: MetricKey = ("/aws/sagemaker/InferenceComponents", "GPUUtilizationNormalized")
IC_GPU_MEMORY: MetricKey = ("/aws/sagemaker/InferenceComponents", "GPUMemoryUtilizationNormalized")
IC_CPU: MetricKey = ("/aws/sagemaker/InferenceComponents", "CPUUtilizationNormalized")
EC2_CPU: MetricKey = ("AWS/EC2", "CPUUtilization")
CWAGENT_GPU: MetricKey = ("CWAgent", "nvidia_smi_utilization_gpu")
NEURON_CORE: MetricKey = ("Chipwise/Neuron", "NeuronCoreUtilization")
NEURON_CORE_AVG: MetricKey = ("Chipwise/Neuron", "NeuronCoreUtilizationAvg")
NEURON_MEMORY: MetricKey = ("Chipwise/Neuron", "NeuronDeviceMemoryUsed")
NEURON_EXECUTIONS: MetricKey = ("Chipwise/Neuron", "ExecutionsCompleted")
EKS_NEURONCORE: MetricKey = ("ContainerInsights", "node_neuroncore_utilization")
# NVIDIA GPUs of EKS nodes (Container Insights with enhanced observability): busiest GPU %, frame buffer used %,
# power in watts, and the GPUs the node's running pods hold (Kubernetes requests) out of the GPUs it has.
EKS_GPU: MetricKey = ("ContainerInsights", "node_gpu_utilization")
EKS_GPU_MEMORY: MetricKey = ("ContainerInsights", "node_gpu_memory_utilization")
EKS_GPU_POWER: MetricKey = ("ContainerInsights", "node_gpu_power_draw")
EKS_GPU_REQUESTED: MetricKey = ("ContainerInsights", "node_gpu_usage_total")
EKS_GPU_LIMIT: MetricKey = ("ContainerInsights", "node_gpu_limit")
# The same node signals from OTel Container Insights (DCGM exporter and neuron-monitor names, read with PromQL and
# stored under the classic names and units: chipwise.collect.otel_metrics).
OTEL_NAMESPACE = "ContainerInsights/OTel"
OTEL_NEURONCORE: MetricKey = (OTEL_NAMESPACE, "node_neuroncore_utilization")
OTEL_GPU: MetricKey = (OTEL_NAMESPACE, "node_gpu_utilization")
OTEL_GPU_MEMORY: MetricKey = (OTEL_NAMESPACE, "node_gpu_memory_utilization")
OTEL_GPU_POWER: MetricKey = (OTEL_NAMESPACE, "node_gpu_power_draw")
CONTAINER_INSIGHTS_SOURCES = frozenset({"ContainerInsights", OTEL_NAMESPACE})
TRAINING_CPU: MetricKey = ("/aws/sagemaker/TrainingJobs", "CPUUtilization")
TRAINING_GPU: MetricKey = ("/aws/sagemaker/TrainingJobs", "GPUUtilization")
NEURON_MONITOR: MetricKey = ("neuron-monitor", "neuroncore_utilization")  # coverage of the S3 reports
GENERATED_TOKENS: MetricKey = ("Chipwise/Serving", "GeneratedTokens")  # tokens generated per hour (serving)
BEDROCK_INVOCATIONS: MetricKey = ("AWS/Bedrock", "Invocations")  # Provisioned Throughput, by ModelId

SUM_METRICS: frozenset[MetricKey] = frozenset({INVOCATIONS, NEURON_EXECUTIONS, GENERATED_TOKENS, BEDROCK_INVOCATIONS})
AVERAGE_METRICS: frozenset[MetricKey] = frozenset({MODEL_LATENCY})
READ_METRICS: tuple[MetricKey, ...] = (
    INVOCATIONS,
    MODEL_LATENCY,
    SM_CPU,
    SM_GPU,
    SM_GPU_MEMORY,
    IC_GPU,
    IC_GPU_MEMORY,
    IC_CPU,
    EC2_CPU,
    CWAGENT_GPU,
    NEURON_CORE,
    NEURON_CORE_AVG,
    NEURON_MEMORY,
    NEURON_EXECUTIONS,
    EKS_NEURONCORE,
    EKS_GPU,
    EKS_GPU_MEMORY,
    EKS_GPU_POWER,
    EKS_GPU_REQUESTED,
    EKS_GPU_LIMIT,
    OTEL_NEURONCORE,
    OTEL_GPU,
    OTEL_GPU_MEMORY,
    OTEL_GPU_POWER,
    TRAINING_CPU,
    TRAINING_GPU,
    GENERATED_TOKENS,
    BEDROCK_INVOCATIONS,
)
# The activity series a weekly pattern is read from (accelerator_off_hours): their values are kept by hour of week.
WEEKLY_METRICS: frozenset[MetricKey] = frozenset(
    {INVOCATIONS, NEURON_CORE, EKS_NEURONCORE, OTEL_NEURONCORE, CWAGENT_GPU, EKS_GPU, OTEL_GPU, SM_GPU, IC_GPU}
)
# Where a signal comes from when several sources publish it: the first in this order that has data answers. One
# list for every signal (README "Metric sources"): Chipwise's own agent (neuron-monitor reports in S3, then
# ``chipwise neuron-agent`` in Chipwise/Neuron), the CloudWatch agent (CWAgent), Container Insights, then what
# SageMaker publishes itself; AWS/EC2 (CPU only) comes last.
METRIC_SOURCE_ORDER: tuple[str, ...] = (
    "neuron-monitor",
    "Chipwise/Neuron",
    "CWAgent",
    "ContainerInsights",
    OTEL_NAMESPACE,
    "/aws/sagemaker/Endpoints",
    "/aws/sagemaker/InferenceComponents",
    "/aws/sagemaker/TrainingJobs",
    "AWS/EC2",
)
NEURON_COVERAGE: frozenset[MetricKey] = frozenset({NEURON_CORE, EKS_NEURONCORE, OTEL_NEURONCORE, NEURON_MONITOR})


def source_rank(source: str) -> int:
    """Where ``source`` stands in :data:`METRIC_SOURCE_ORDER` (a source not in it comes after every listed one)."""
    return METRIC_SOURCE_ORDER.index(source) if source in METRIC_SOURCE_ORDER else len(METRIC_SOURCE_ORDER)
