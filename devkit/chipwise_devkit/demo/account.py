"""The demo account: a realistic AI-accelerator estate seeded into the AWS emulator.

48 resources and 2 inference components — busy and idle Inferentia endpoints, Trainium capacity serving inference,
GPU training and inference on Llama/BERT-class models, a GPU endpoint shared by inference components, a
custom-CUDA training job, EKS Neuron nodes, EKS GPU nodes seen through Container Insights only, a GPU notebook
instance and Studio app, a HyperPod cluster, an unused capacity reservation and Capacity Block, a Batch warm pool,
a Bedrock Provisioned Throughput, and CPU noise — with
15 days of hourly CloudWatch metrics (daily cycles, quiet weekends, spikes), neuron-monitor reports in S3
and Cost Explorer results priced from the catalog, consistent with the inventory.

The ground truth (which resource should produce which finding) is ``ground_truth.json`` beside this file;
:func:`ground_truth` reads it and a test checks it names exactly the resources seeded here.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from decimal import Decimal
from importlib import resources
from typing import Literal

from chipwise_devkit.demo.series import Flat, OfficeHours, Series, Spiky, Steady

DEMO_ACCOUNT_ID = "123456789012"
HISTORY_HOURS = 15 * 24  # a day more than the default 14-day look-back
GIB = 2**30
EC2_SERVICE = "Amazon Elastic Compute Cloud - Compute"
SAGEMAKER_SERVICE = "Amazon SageMaker"
NEURON_REPORT_PERIOD_S = 900  # the demo's neuron-monitor config: one report every 15 minutes
SAVINGS_PLAN_RATE = Decimal("0.72")  # amortized ÷ on-demand for usage a Compute Savings Plan covers (demo)
# amortized ÷ on-demand for usage an EC2 Instance Savings Plan covers (demo): bound to one family and Region, it
# discounts more than a Compute plan
INSTANCE_SAVINGS_PLAN_RATE = Decimal("0.66")

ECR_DLC = "763104351884.dkr.ecr.us-east-1.amazonaws.com"
TGI_GPU = f"{ECR_DLC}/huggingface-pytorch-tgi-inference:2.4.0-tgi2.4.0-gpu-py311-cu124-ubuntu22.04"
TGI_NEURONX = f"{ECR_DLC}/huggingface-pytorch-tgi-inference:2.1.2-optimum0.0.27-neuronx-py310-ubuntu22.04"
DJL_NEURONX = f"{ECR_DLC}/djl-inference:0.29.0-neuronx-sdk2.19.1"
HF_GPU_INFERENCE = f"{ECR_DLC}/huggingface-pytorch-inference:2.1.0-transformers4.37.0-gpu-py310-cu118-ubuntu20.04"
HF_NEURON_INFERENCE = f"{ECR_DLC}/huggingface-pytorch-inference-neuron:1.13.1-transformers4.34.1-neuron-py310-sdk2.15.0"
HF_GPU_TRAINING = f"{ECR_DLC}/huggingface-pytorch-training:2.1.0-transformers4.36.0-gpu-py310-cu121-ubuntu20.04"
NEURONX_TRAINING = f"{ECR_DLC}/pytorch-training-neuronx:2.1.2-neuronx-py310-sdk2.20.0-ubuntu20.04"
CUSTOM_IMAGE = f"{DEMO_ACCOUNT_ID}.dkr.ecr.us-east-1.amazonaws.com"
LMI_GPU = f"{ECR_DLC}/djl-inference:0.31.0-lmi13.0.0-cu124"

Kind = Literal[
    "ec2_instance",
    "sagemaker_endpoint",
    "sagemaker_training_job",
    "batch_compute_environment",
    "sagemaker_notebook_instance",
    "sagemaker_hyperpod_cluster",
    "ec2_capacity_reservation",
    "bedrock_provisioned_throughput",
    "sagemaker_studio_app",
]


@dataclass(frozen=True)
class Traffic:
    """A SageMaker endpoint's load: requests per second (hours with zero requests publish no datapoint)."""

    requests_per_second: Series
    latency_ms: float = 60.0


@dataclass(frozen=True)
class Neuron:
    """Neuron telemetry: NeuronCore utilisation (max across cores, %), device memory, executions per second."""

    utilization: Series
    device_memory_gib: float
    executions_per_second: Series = field(default_factory=lambda: Flat(0.0))


@dataclass(frozen=True)
class DemoComponent:
    """An inference component on a demo endpoint: its copies, the GPUs each copy reserves, its model, its traffic
    and its GPU utilisation (GPUUtilizationNormalized: % of the GPUs it reserved)."""

    name: str
    copies: int
    gpus_per_copy: int
    image: str
    environment: dict[str, str]
    traffic: Traffic
    gpu: Series
    expected: tuple[str, ...] = ()
    note: str = ""


@dataclass(frozen=True)
class DemoResource:
    """One resource of the demo estate and what it should look like to Chipwise."""

    name: str
    kind: Kind
    instance_type: str
    expected: tuple[str, ...] = ()
    count: int = 1
    tags: dict[str, str] = field(default_factory=dict)
    image: str | None = None
    environment: dict[str, str] = field(default_factory=dict)
    cpu: Series = field(default_factory=lambda: Flat(4.0, 1.5))
    gpu: Series | None = None
    traffic: Traffic | None = None
    neuron: Neuron | None = None
    eks_cluster: str | None = None
    training_hours: int = 0
    ended_hours_ago: int = 0
    savings_plan: bool = False  # covered by the demo's Compute Savings Plan
    instance_savings_plan: bool = False  # covered by the demo's EC2 Instance Savings Plan on its family (issue 38)
    note: str = ""
    retired_hours_ago: int = 0  # deleted this long before now, between the demo's daily scans (billed until then)
    components: tuple[DemoComponent, ...] = ()  # an endpoint for inference components: its variant names no model
    # An EKS GPU node seen through Container Insights only (no CloudWatch agent): its frame buffer used (%) and the
    # GPUs its running pods hold, besides ``gpu`` (node_gpu_utilization).
    container_insights: bool = False
    gpu_memory_used: Series | None = None
    gpus_requested: Series | None = None
    min_vcpus: int = 0  # a Batch compute environment's minvCpus
    idle_days: int = 0  # a Studio app: days since its last user activity
    capacity_block: bool = False  # a capacity reservation bought as a Capacity Block


def amortized_share(res: DemoResource) -> Decimal:
    """Amortized ÷ on-demand cost of the resource's usage: the plan covering it, else 1."""
    if res.savings_plan:
        return SAVINGS_PLAN_RATE
    return INSTANCE_SAVINGS_PLAN_RATE if res.instance_savings_plan else Decimal(1)


def _endpoints() -> list[DemoResource]:
    return [
        DemoResource(
            "chat-llama3-8b-inf2",
            "sagemaker_endpoint",
            "ml.inf2.xlarge",
            count=2,
            tags={"chipwise:owner": "ml-platform@example.com", "team": "assistant"},
            image=TGI_NEURONX,
            environment={"HF_MODEL_ID": "meta-llama/Meta-Llama-3-8B-Instruct"},
            traffic=Traffic(Steady(28.0)),
            cpu=Steady(120.0, cap=400.0),
            neuron=Neuron(Steady(68.0), 21.0, Steady(28.0)),
            note="busy Inferentia2 endpoint: nothing to do",
        ),
        DemoResource(
            "embeddings-bert-inf1",
            "sagemaker_endpoint",
            "ml.inf1.xlarge",
            tags={"chipwise:model-family": "bert"},
            image=HF_NEURON_INFERENCE,
            environment={"HF_MODEL_ID": "sentence-transformers/all-mpnet-base-v2"},
            traffic=Traffic(Steady(150.0), latency_ms=8.0),
            cpu=Steady(90.0, cap=400.0),
            neuron=Neuron(Steady(55.0), 1.2, Steady(150.0)),
            note="busy Inferentia1 embeddings endpoint: nothing to do",
        ),
        DemoResource(
            "search-rerank-inf2-idle",
            "sagemaker_endpoint",
            "ml.inf2.xlarge",
            expected=("inferentia_idle",),
            tags={"chipwise:owner": "search@example.com"},
            image=TGI_NEURONX,
            environment={"HF_MODEL_ID": "BAAI/bge-reranker-large"},
            traffic=Traffic(Flat(0.0)),
            cpu=Flat(2.0, 0.5),
            neuron=Neuron(Flat(0.2, 0.2), 2.0),
            note="no invocations for the whole window, NeuronCores flat at 0 %",
        ),
        DemoResource(
            "contracts-qa-inf2-office",
            "sagemaker_endpoint",
            "ml.inf2.8xlarge",
            expected=("accelerator_off_hours",),
            tags={"chipwise:owner": "legal-ai@example.com", "chipwise:model-family": "llama"},
            image=TGI_NEURONX,
            environment={"HF_MODEL_ID": "meta-llama/Llama-3.1-8B-Instruct"},
            traffic=Traffic(OfficeHours(4.0), latency_ms=350.0),
            cpu=OfficeHours(110.0, off=3.0),
            neuron=Neuron(OfficeHours(46.0, off=0.3), 18.0, OfficeHours(4.0)),
            note="the legal team's assistant: busy weekdays 09:00-19:00 UTC, no request at night or at weekends",
        ),
        DemoResource(
            "translate-inf2-retired",
            "sagemaker_endpoint",
            "ml.inf2.xlarge",
            expected=("inferentia_idle",),
            tags={"chipwise:owner": "i18n@example.com"},
            image=TGI_NEURONX,
            environment={"HF_MODEL_ID": "facebook/nllb-200-distilled-600M"},
            traffic=Traffic(Flat(0.0)),
            cpu=Flat(2.0, 0.5),
            neuron=Neuron(Flat(0.2, 0.2), 2.0),
            retired_hours_ago=4 * 24 + 12,
            note="idle at the demo's first daily scan, deleted before the next: its saving is then realised",
        ),
        DemoResource(
            "summarizer-inf2-48xl",
            "sagemaker_endpoint",
            "ml.inf2.48xlarge",
            expected=("inferentia_underutilized",),
            tags={"chipwise:owner": "docs-ai@example.com", "chipwise:model-family": "llama"},
            image=DJL_NEURONX,
            environment={"HF_MODEL_ID": "meta-llama/Llama-3.1-8B-Instruct", "OPTION_TENSOR_PARALLEL_DEGREE": "24"},
            traffic=Traffic(Steady(3.0), latency_ms=450.0),
            cpu=Steady(300.0, cap=19200.0),
            neuron=Neuron(Steady(9.0), 40.0, Steady(3.0)),
            note="an 8B model on 24 NeuronCores: p95 utilisation ~12 %, 40 GiB of 384 GiB used",
        ),
        DemoResource(
            "classifier-inf2-no-telemetry",
            "sagemaker_endpoint",
            "ml.inf2.xlarge",
            expected=("neuron_telemetry_missing",),
            tags={"chipwise:model-family": "roberta"},
            image=HF_NEURON_INFERENCE,
            environment={"HF_MODEL_ID": "cardiffnlp/twitter-roberta-base-sentiment-latest"},
            traffic=Traffic(Steady(32.0), latency_ms=15.0),
            cpu=Steady(140.0, cap=400.0),
            note="busy, but publishes no Neuron metrics: install the agent (never 'idle')",
        ),
        DemoResource(
            "llama-70b-trn1-serving",
            "sagemaker_endpoint",
            "ml.trn1.32xlarge",
            expected=("trainium_serving_inference",),
            tags={"chipwise:owner": "assistant@example.com"},
            image=TGI_NEURONX,
            environment={"HF_MODEL_ID": "meta-llama/Llama-3.1-70B-Instruct", "HF_NUM_CORES": "32"},
            traffic=Traffic(Steady(6.0), latency_ms=900.0),
            cpu=Steady(400.0, cap=12800.0),
            neuron=Neuron(Steady(45.0), 150.0, Steady(6.0)),
            note="a training chip serving a 70B model around the clock: inf2.48xlarge is cheaper per token",
        ),
        DemoResource(
            "chat-mistral-g5",
            "sagemaker_endpoint",
            "ml.g5.2xlarge",
            expected=("gpu_inference_portable",),
            count=4,
            tags={"chipwise:owner": "support-ai@example.com"},
            image=TGI_GPU,
            environment={"HF_MODEL_ID": "mistralai/Mistral-7B-Instruct-v0.3", "SM_NUM_GPUS": "1"},
            traffic=Traffic(Steady(22.0), latency_ms=70.0),
            cpu=Steady(180.0, cap=800.0),
            gpu=Steady(62.0),
            note="steady Mistral-7B serving on 4 A10G GPUs",
        ),
        DemoResource(
            "bert-ner-g6",
            "sagemaker_endpoint",
            "ml.g6.xlarge",
            expected=("gpu_inference_portable",),
            count=2,
            tags={"chipwise:model-family": "bert"},
            image=HF_GPU_INFERENCE,
            environment={"HF_MODEL_ID": "dslim/bert-base-NER", "HF_TASK": "token-classification"},
            traffic=Traffic(Steady(90.0), latency_ms=12.0),
            cpu=Steady(110.0, cap=400.0),
            gpu=Steady(35.0),
            note="steady BERT NER on L4 GPUs: a small model, Inferentia1 territory",
        ),
        DemoResource(
            "support-bot-llama-g5-spiky",
            "sagemaker_endpoint",
            "ml.g5.12xlarge",
            expected=("spiky_inference_bedrock",),
            tags={"chipwise:owner": "cx@example.com"},
            image=TGI_GPU,
            environment={"HF_MODEL_ID": "meta-llama/Llama-3.1-8B-Instruct", "SM_NUM_GPUS": "4"},
            traffic=Traffic(Spiky(12.0, bursts_per_day=2), latency_ms=80.0),
            cpu=Spiky(250.0, floor=6.0),
            gpu=Spiky(300.0, floor=0.5),
            note="idle 22 hours a day, bursts twice a day: pay per token on Bedrock instead",
        ),
        DemoResource(
            "shared-llm-g5",
            "sagemaker_endpoint",
            "ml.g5.12xlarge",
            count=2,
            tags={"chipwise:owner": "platform-llm@example.com"},
            traffic=Traffic(Steady(10.0), latency_ms=420.0),
            cpu=Steady(160.0, cap=4800.0),
            gpu=Steady(110.0, cap=400.0),
            components=(
                DemoComponent(
                    "mistral-chat",
                    copies=2,
                    gpus_per_copy=2,
                    image=LMI_GPU,
                    environment={
                        "OPTION_MODEL_ID": "mistralai/Mistral-7B-Instruct-v0.3",
                        "OPTION_ROLLING_BATCH": "vllm",
                    },
                    traffic=Traffic(Steady(10.0), latency_ms=420.0),
                    gpu=Steady(55.0),
                    note="busy: two copies of Mistral-7B, each on 2 of an instance's 4 A10G GPUs",
                ),
                DemoComponent(
                    "summarise-v1",
                    copies=1,
                    gpus_per_copy=2,
                    image=LMI_GPU,
                    environment={"OPTION_MODEL_ID": "meta-llama/Llama-3.1-8B-Instruct", "OPTION_ROLLING_BATCH": "vllm"},
                    traffic=Traffic(Flat(0.0)),
                    gpu=Flat(0.3, 0.2),
                    expected=("gpu_idle",),
                    note="the old summariser nobody calls since v2 shipped: half an instance reserved for nothing",
                ),
            ),
            note="2 x ml.g5.12xlarge shared by inference components: 1.5 instances reserved, 0.5 unreserved",
        ),
        DemoResource(
            "vision-custom-g5-idle",
            "sagemaker_endpoint",
            "ml.g5.xlarge",
            expected=("gpu_idle",),
            tags={"chipwise:owner": "vision@example.com", "chipwise:model-family": "custom"},
            image=f"{CUSTOM_IMAGE}/vision-detector:1.4",
            traffic=Traffic(Flat(0.0)),
            cpu=Flat(3.0, 1.0),
            gpu=Flat(0.4, 0.3),
            note="a custom vision model nobody calls: GPU flat under 1 %",
        ),
    ]


def _neuron_instances() -> list[DemoResource]:
    return [
        DemoResource(
            "inf2-batch-embedder",
            "ec2_instance",
            "inf2.8xlarge",
            tags={"chipwise:model-family": "bert", "chipwise:workload": "inference"},
            cpu=Steady(45.0),
            neuron=Neuron(Steady(72.0), 6.0, Steady(400.0)),
            note="busy batch embedding box: nothing to do",
        ),
        DemoResource(
            "inf2-dev-box-idle",
            "ec2_instance",
            "inf2.xlarge",
            expected=("inferentia_idle",),
            tags={"chipwise:owner": "alice@example.com"},
            cpu=Flat(1.5, 0.5),
            neuron=Neuron(Flat(0.0), 0.0),
            note="neuron-monitor reports no NeuronCore activity for 15 days",
        ),
        DemoResource(
            "inf2-24xl-underused",
            "ec2_instance",
            "inf2.24xlarge",
            expected=("inferentia_underutilized",),
            tags={"chipwise:model-family": "llama", "chipwise:workload": "inference"},
            cpu=Steady(12.0),
            neuron=Neuron(Steady(11.0), 18.0, Steady(4.0)),
            note="12 NeuronCores for an 8B model at p95 ~14 %, 18 GiB used",
        ),
        DemoResource(
            "trn1-inference-fleet-a",
            "ec2_instance",
            "trn1.32xlarge",
            expected=("trainium_serving_inference",),
            tags={"chipwise:workload": "inference", "chipwise:model-family": "llama"},
            cpu=Steady(20.0),
            neuron=Neuron(Steady(40.0), 140.0, Steady(9.0)),
            note="tagged inference, steady executions around the clock",
        ),
        DemoResource(
            "trn1-inference-sp",
            "ec2_instance",
            "trn1.2xlarge",
            expected=("trainium_serving_inference",),
            tags={"chipwise:model-family": "llama"},
            cpu=Steady(18.0),
            neuron=Neuron(Steady(38.0), 16.0, Steady(5.0)),
            savings_plan=True,
            note="not tagged: steady executions and no training jobs say inference; a Savings Plan covers its hours",
        ),
        DemoResource(
            "trn1-training-node",
            "ec2_instance",
            "trn1.32xlarge",
            tags={"chipwise:workload": "training", "chipwise:model-family": "llama"},
            cpu=Steady(60.0),
            neuron=Neuron(Steady(88.0), 420.0, Steady(2.0)),
            note="Trainium doing what it is for: nothing to do",
        ),
        DemoResource(
            "eks-neuron-node-1",
            "ec2_instance",
            "inf2.xlarge",
            eks_cluster="inference-prod",
            tags={"chipwise:workload": "inference"},
            cpu=Steady(35.0),
            neuron=Neuron(Steady(64.0), 12.0),
            note="EKS node; Container Insights publishes node_neuroncore_utilization",
        ),
        DemoResource(
            "inf1-image-tagger",
            "ec2_instance",
            "inf1.2xlarge",
            tags={"chipwise:model-family": "resnet", "chipwise:workload": "inference"},
            cpu=Steady(30.0),
            neuron=Neuron(Steady(61.0), 2.0, Steady(220.0)),
            note="busy Inferentia1 image tagging: nothing to do",
        ),
        DemoResource(
            "inf1-legacy-no-agent",
            "ec2_instance",
            "inf1.xlarge",
            expected=("neuron_telemetry_missing",),
            tags={"chipwise:owner": "legacy@example.com"},
            cpu=Flat(3.0, 1.0),
            note="no neuron-monitor: low CPU alone must not be called idle",
        ),
    ]


def _gpu_and_cpu_instances() -> list[DemoResource]:
    cpu_noise: list[tuple[str, str, Series]] = [
        ("api-server-1", "m6i.xlarge", Steady(35.0)),
        ("api-server-2", "m6i.xlarge", Steady(33.0)),
        ("api-server-3", "m6i.xlarge", Steady(31.0)),
        ("etl-worker", "c6i.2xlarge", Spiky(90.0, bursts_per_day=4, floor=5.0)),
        ("bastion", "t3.medium", Flat(1.0, 0.5)),
        ("airflow-scheduler", "r5.large", Steady(22.0)),
    ]
    return [
        DemoResource(
            "gpu-notebook-g5-idle",
            "ec2_instance",
            "g5.xlarge",
            expected=("gpu_idle",),
            tags={"chipwise:owner": "bob@example.com"},
            cpu=Flat(2.0, 1.0),
            gpu=Flat(0.3, 0.3),
            note="a forgotten GPU notebook",
        ),
        DemoResource(
            "g6-llama-inference-box",
            "ec2_instance",
            "g6.12xlarge",
            expected=("gpu_inference_portable",),
            tags={
                "chipwise:workload": "inference",
                "chipwise:model-family": "llama",
                "chipwise:model": "meta-llama/Meta-Llama-3-8B-Instruct",
            },
            cpu=Steady(25.0),
            gpu=Steady(58.0),
            instance_savings_plan=True,
            note="vLLM serving Llama-3-8B steadily, tensor-parallel over four L4s; an EC2 Instance Savings Plan on "
            "g6 covers its hours (the move to Inferentia strands it)",
        ),
        DemoResource(
            "p4d-research-idle",
            "ec2_instance",
            "p4d.24xlarge",
            expected=("gpu_idle",),
            tags={"chipwise:owner": "research@example.com"},
            cpu=Flat(1.0, 0.5),
            gpu=Flat(0.5, 0.5),
            note="8 A100s doing nothing for 15 days",
        ),
        DemoResource(
            "p5-llama-pretrain-node",
            "ec2_instance",
            "p5.48xlarge",
            expected=("gpu_training_portable",),
            tags={"chipwise:workload": "training", "chipwise:model-family": "llama"},
            cpu=Steady(55.0),
            gpu=Steady(86.0),
            note="continued pre-training of Llama on H100s",
        ),
        DemoResource(
            "g5-cuda-kernels-dev",
            "ec2_instance",
            "g5.2xlarge",
            tags={"chipwise:workload": "training", "chipwise:custom-cuda": "true", "chipwise:model-family": "llama"},
            cpu=Steady(40.0),
            gpu=Steady(75.0),
            note="custom CUDA kernels: never recommended for porting",
        ),
        *(DemoResource(name, "ec2_instance", itype, cpu=cpu, note="CPU noise") for name, itype, cpu in cpu_noise),
    ]


def _training_jobs() -> list[DemoResource]:
    return [
        DemoResource(
            "llama3-8b-finetune",
            "sagemaker_training_job",
            "ml.p4d.24xlarge",
            expected=("gpu_training_portable",),
            count=2,
            tags={"chipwise:owner": "ml-platform@example.com", "chipwise:model-family": "llama"},
            image=HF_GPU_TRAINING,
            environment={"HF_MODEL_ID": "meta-llama/Meta-Llama-3-8B"},
            gpu=Steady(82.0),
            training_hours=36,
            ended_hours_ago=30,
            note="LoRA fine-tune of Llama-3-8B on 2 × p4d",
        ),
        DemoResource(
            "bert-large-pretrain",
            "sagemaker_training_job",
            "ml.p4de.24xlarge",
            expected=("gpu_training_portable",),
            tags={"chipwise:model-family": "bert"},
            image=HF_GPU_TRAINING,
            environment={"HF_MODEL_ID": "bert-large-uncased"},
            gpu=Steady(78.0),
            training_hours=48,
            ended_hours_ago=100,
            note="BERT-large pre-training",
        ),
        DemoResource(
            "moe-custom-kernels-train",
            "sagemaker_training_job",
            "ml.p5.48xlarge",
            count=2,
            tags={"chipwise:custom-cuda": "true", "chipwise:model-family": "mixtral"},
            image=f"{CUSTOM_IMAGE}/moe-trainer:flash-attn3-custom",
            gpu=Steady(91.0),
            training_hours=20,
            ended_hours_ago=10,
            note="hand-written CUDA kernels for the MoE router: must never be recommended for porting",
        ),
        DemoResource(
            "llama-trn1-finetune",
            "sagemaker_training_job",
            "ml.trn1.32xlarge",
            tags={"chipwise:model-family": "llama"},
            image=NEURONX_TRAINING,
            environment={"HF_MODEL_ID": "meta-llama/Llama-3.1-8B"},
            training_hours=24,
            ended_hours_ago=50,
            note="already on Trainium",
        ),
    ]


def _batch() -> list[DemoResource]:
    return [
        DemoResource("gpu-batch-ce", "batch_compute_environment", "g5.12xlarge", note="inventory only"),
        DemoResource("cpu-batch-ce", "batch_compute_environment", "c6i.4xlarge", note="inventory only"),
        DemoResource(
            "trn1-batch-warm-pool",
            "batch_compute_environment",
            "trn1.32xlarge",
            expected=("capacity_held_idle",),
            min_vcpus=128,
            note="minvCpus 128 keeps one trn1.32xlarge running; its queue ran no job in the window",
        ),
    ]


def _issue25_kinds() -> list[DemoResource]:
    """EKS GPU nodes seen only through Container Insights, and one resource of each kind issue 25 added."""
    return [
        DemoResource(
            "eks-g6-node-idle",
            "ec2_instance",
            "g6.xlarge",
            expected=("gpu_idle",),
            eks_cluster="inference-prod",
            container_insights=True,
            gpu=Flat(0.3, 0.2),
            gpu_memory_used=Flat(0.5, 0.3),
            gpus_requested=Flat(0.0),
            note="an EKS GPU node nothing is scheduled on: idle in Container Insights only, memory and pods agree",
        ),
        DemoResource(
            "eks-g6-node-busy-reads-zero",
            "ec2_instance",
            "g6.xlarge",
            expected=("cannot_judge",),
            eks_cluster="inference-prod",
            container_insights=True,
            gpu=Flat(0.0),
            gpu_memory_used=Steady(71.0),
            gpus_requested=Flat(1.0),
            note="GPU utilisation reads 0 while a pod holds the GPU and 71 % of its memory: not idle, cannot judge",
        ),
        DemoResource(
            "research-notebook-g5",
            "sagemaker_notebook_instance",
            "ml.g5.xlarge",
            expected=("cannot_judge",),
            note="a notebook instance on a GPU: SageMaker exposes no activity; the fix is an idle-shutdown script",
        ),
        DemoResource(
            "hyperpod-pretrain",
            "sagemaker_hyperpod_cluster",
            "ml.trn1.32xlarge",
            count=2,
            expected=("cannot_judge",),
            note="a HyperPod cluster of 2 x ml.trn1.32xlarge: no node utilisation read, cannot judge",
        ),
        DemoResource(
            "g6e-reservation-unused",
            "ec2_capacity_reservation",
            "g6e.12xlarge",
            count=2,
            expected=("capacity_held_idle",),
            note="an open On-Demand Capacity Reservation nothing runs in: billed at the on-demand rate",
        ),
        DemoResource(
            "p5-capacity-block",
            "ec2_capacity_reservation",
            "p5.48xlarge",
            expected=("capacity_held_idle",),
            capacity_block=True,
            note="a Capacity Block no instance was launched into: its fee is committed until the block ends",
        ),
        DemoResource(
            "d-demo/vision-lab/default",
            "sagemaker_studio_app",
            "ml.g5.2xlarge",
            expected=("capacity_held_idle",),
            idle_days=10,
            note="a JupyterLab app on a GPU nobody has opened for 10 days: delete it, turn on idle shutdown",
        ),
        DemoResource(
            "support-llama-70b-pt",
            "bedrock_provisioned_throughput",
            "meta.llama3-1-70b-instruct-v1:0",
            count=2,
            expected=("capacity_held_idle",),
            note="2 model units on a one-month commitment nobody invokes: idle; the term's end is named, the "
            "model-unit price is not in the verified data (a quote is asked)",
        ),
    ]


def demo_resources() -> list[DemoResource]:
    """Every resource of the demo account, in seeding order."""
    return [
        *_endpoints(),
        *_neuron_instances(),
        *_gpu_and_cpu_instances(),
        *_training_jobs(),
        *_batch(),
        *_issue25_kinds(),
    ]


def demo_subjects() -> dict[str, tuple[str, ...]]:
    """Every resource Chipwise should see, by the name it gives it (an inference component is
    ``<endpoint>/<component>``), with the rule ids that must fire on it."""
    found: dict[str, tuple[str, ...]] = {}
    for res in demo_resources():
        found[res.name] = res.expected
        found.update({f"{res.name}/{c.name}": c.expected for c in res.components})
    return found


def ground_truth() -> dict[str, list[str]]:
    """Resource name → the rule ids that must fire on it (and no others)."""
    raw = json.loads((resources.files("chipwise_devkit.demo") / "ground_truth.json").read_text(encoding="utf-8"))
    return {name: list(rules) for name, rules in raw["resources"].items()}
