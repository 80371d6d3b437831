"""Issue 13, items 3 and 4, from SageMaker's documented Describe* shapes (DescribeEndpoint, DescribeEndpointConfig,
DescribeModel, DescribeInferenceComponent, DescribeTrainingJob in the SageMaker API reference): a multi-variant
endpoint is one resource per variant, inference components and training hyperparameters name the model."""

from __future__ import annotations

from datetime import UTC, datetime
from decimal import Decimal
from typing import Any

from chipwise.collect.inventory.inference_components import component_reservation, inference_component
from chipwise.collect.inventory.sources.sagemaker_endpoints import _model_container, _ModelCache, endpoint_resources
from chipwise.collect.inventory.sources.sagemaker_training_jobs import _training_resource
from chipwise.models.resources import (
    EndpointDetails,
    InferenceComponentDetails,
    TrainingJobDetails,
    parse_details,
)

CREATED = datetime(2026, 11, 1, tzinfo=UTC)
ARN = "arn:aws:sagemaker:us-east-1:123456789012:endpoint/chat-ab"
ECR = "763104351884.dkr.ecr.us-east-1.amazonaws.com"
TGI_NEURONX = f"{ECR}/huggingface-pytorch-tgi-inference:2.1.2-optimum0.0.27-neuronx-py310-ubuntu22.04"
TGI_GPU = f"{ECR}/huggingface-pytorch-tgi-inference:2.4.0-tgi2.4.0-gpu-py311-cu124-ubuntu22.04"
LMI = "763104351884.dkr.ecr.us-east-1.amazonaws.com/djl-inference:0.31.0-lmi13.0.0-cu124"

DESCRIBE_ENDPOINT = {
    "EndpointName": "chat-ab",
    "EndpointArn": ARN,
    "EndpointConfigName": "chat-ab-config",
    "ProductionVariants": [
        {
            "VariantName": "inf2-main",
            "DeployedImages": [{"SpecifiedImage": TGI_NEURONX, "ResolvedImage": TGI_NEURONX + "@sha256:ab"}],
            "CurrentWeight": 0.9,
            "DesiredWeight": 0.9,
            "CurrentInstanceCount": 3,
            "DesiredInstanceCount": 3,
        },
        {
            "VariantName": "g5-canary",
            "DeployedImages": [{"SpecifiedImage": TGI_GPU}],
            "CurrentWeight": 0.1,
            "DesiredWeight": 0.1,
            "CurrentInstanceCount": 1,
            "DesiredInstanceCount": 1,
        },
    ],
    "EndpointStatus": "InService",
    "CreationTime": CREATED,
    "LastModifiedTime": CREATED,
}
DESCRIBE_ENDPOINT_CONFIG = {
    "EndpointConfigName": "chat-ab-config",
    "EndpointConfigArn": "arn:aws:sagemaker:us-east-1:123456789012:endpoint-config/chat-ab-config",
    "ProductionVariants": [
        {
            "VariantName": "inf2-main",
            "ModelName": "llama-inf2",
            "InitialInstanceCount": 2,
            "InstanceType": "ml.inf2.xlarge",
            "InitialVariantWeight": 0.9,
        },
        {
            "VariantName": "g5-canary",
            "ModelName": "llama-g5",
            "InitialInstanceCount": 1,
            "InstanceType": "ml.g5.xlarge",
            "InitialVariantWeight": 0.1,
        },
    ],
    "CreationTime": CREATED,
}
MODELS: dict[str, dict[str, Any]] = {
    "llama-inf2": {
        "ModelName": "llama-inf2",
        "PrimaryContainer": {
            "Image": TGI_NEURONX,
            "Mode": "SingleModel",
            "Environment": {"HF_MODEL_ID": "meta-llama/Meta-Llama-3-8B-Instruct", "HF_NUM_CORES": "2"},
        },
    },
    "llama-g5": {
        "ModelName": "llama-g5",
        "PrimaryContainer": {
            "Image": TGI_GPU,
            "Mode": "SingleModel",
            "ModelDataUrl": "s3://models-bucket/llama/llama-3-8b/model.tar.gz",
            "Environment": {"HF_MODEL_ID": "/opt/ml/model", "SM_NUM_GPUS": "1"},
        },
    },
}


def _models() -> _ModelCache:
    def fetch(name: str) -> dict[str, Any]:
        return _model_container(MODELS[name])

    return _ModelCache(fetch)


def test_a_two_variant_endpoint_is_two_resources() -> None:
    # When the documented DescribeEndpoint / DescribeEndpointConfig / DescribeModel answers are read
    found = endpoint_resources(dict(DESCRIBE_ENDPOINT), dict(DESCRIBE_ENDPOINT_CONFIG), {"team": "chat"}, _models())
    # Then each variant is a resource: the endpoint's ARN (SageMaker gives a variant none) with the variant in its own
    # field, its own type, live count and model
    by_name = {r.name: r for r in found}
    assert sorted(by_name) == ["chat-ab/g5-canary", "chat-ab/inf2-main"]
    main, canary = by_name["chat-ab/inf2-main"], by_name["chat-ab/g5-canary"]
    assert (main.arn, main.variant, main.key, main.instance_type, main.instance_count, main.platform) == (
        ARN,
        "inf2-main",
        f"{ARN}#variant/inf2-main",
        "ml.inf2.xlarge",
        3,  # CurrentInstanceCount beats InitialInstanceCount
        "inferentia",
    )
    assert (canary.instance_type, canary.instance_count, canary.platform) == ("ml.g5.xlarge", 1, "nvidia")
    assert (canary.arn, canary.variant, canary.parent_arn) == (ARN, "g5-canary", ARN)
    details = canary.details
    assert isinstance(details, EndpointDetails)
    assert (details.endpoint_name, details.variant_name) == ("chat-ab", "g5-canary")
    assert [v.variant_name for v in details.variants] == ["g5-canary"]
    assert details.cost_basis is not None and "1 x ml.g5.xlarge" in details.cost_basis
    # And each variant's model identity is its own: the inf2 model's hub id; the canary's path is rejected and its
    # family read from the S3 model path
    assert (main.hints.hf_model_id, main.hints.sources["model_id"]) == (
        "meta-llama/Meta-Llama-3-8B-Instruct",
        "env:HF_MODEL_ID",
    )
    assert canary.hints.hf_model_id is None
    assert canary.hints.rejected_model_ids == {"env:HF_MODEL_ID": "/opt/ml/model"}
    assert (canary.hints.model_family, canary.hints.sources["model_family"]) == ("llama", "model_artifact")
    assert canary.tags == {"team": "chat"}


def test_a_single_variant_endpoint_stays_one_resource_under_its_own_arn() -> None:
    config = {**DESCRIBE_ENDPOINT_CONFIG, "ProductionVariants": DESCRIBE_ENDPOINT_CONFIG["ProductionVariants"][:1]}
    endpoint = {**DESCRIBE_ENDPOINT, "ProductionVariants": DESCRIBE_ENDPOINT["ProductionVariants"][:1]}
    (found,) = endpoint_resources(endpoint, config, {}, _models())
    assert (found.arn, found.name, found.instance_count) == (ARN, "chat-ab", 3)
    assert isinstance(found.details, EndpointDetails) and found.details.variant_name is None


DESCRIBE_INFERENCE_COMPONENT = {
    "InferenceComponentName": "mistral-ic",
    "InferenceComponentArn": "arn:aws:sagemaker:us-east-1:123456789012:inference-component/mistral-ic",
    "EndpointName": "shared-gpu",
    "EndpointArn": "arn:aws:sagemaker:us-east-1:123456789012:endpoint/shared-gpu",
    "VariantName": "AllTraffic",
    "Specification": {
        "Container": {
            "DeployedImage": {"SpecifiedImage": LMI, "ResolvedImage": LMI + "@sha256:cd"},
            "ArtifactUrl": "s3://models-bucket/mistral/",
            "Environment": {"OPTION_MODEL_ID": "mistralai/Mistral-7B-Instruct-v0.3", "OPTION_ROLLING_BATCH": "vllm"},
        },
        "ComputeResourceRequirements": {
            "NumberOfAcceleratorDevicesRequired": 1,
            "MinMemoryRequiredInMb": 16384,
        },
    },
    "RuntimeConfig": {"DesiredCopyCount": 2, "CurrentCopyCount": 2},
    "CreationTime": CREATED,
    "LastModifiedTime": CREATED,
    "InferenceComponentStatus": "InService",
}


def test_an_inference_component_endpoint_gets_its_model_from_the_component() -> None:
    # Given an endpoint whose variant names no model (inference components place the models)
    component = inference_component(DESCRIBE_INFERENCE_COMPONENT)
    assert (component.image, component.copies, component.accelerators_required) == (LMI, 2, 1)
    endpoint = {
        "EndpointName": "shared-gpu",
        "EndpointArn": "arn:aws:sagemaker:us-east-1:123456789012:endpoint/shared-gpu",
        "EndpointConfigName": "shared-gpu-config",
        "ProductionVariants": [{"VariantName": "AllTraffic", "CurrentInstanceCount": 2}],
        "EndpointStatus": "InService",
        "CreationTime": CREATED,
    }
    config = {
        "EndpointConfigName": "shared-gpu-config",
        "ProductionVariants": [
            {"VariantName": "AllTraffic", "InstanceType": "ml.g5.12xlarge", "InitialInstanceCount": 2}
        ],
    }
    found, as_resource = endpoint_resources(endpoint, config, {}, _models(), [component])
    # Then the component's container names the model, with the basis; the LMI engine is vLLM
    hints = found.hints
    assert (hints.hf_model_id, hints.model_family) == ("mistralai/Mistral-7B-Instruct-v0.3", "mistral")
    assert hints.sources["model_id"] == "inference_component:mistral-ic:env:OPTION_MODEL_ID"
    assert (hints.serving_stack, hints.serving_engine) == ("djl", "vllm")
    assert isinstance(found.details, EndpointDetails)
    assert [c.name for c in found.details.inference_components] == ["mistral-ic"]
    # And its reservation of the variant's instances is worked out from the documented shape, by hand:
    # 2 copies x 1 GPU each / 4 GPUs per ml.g5.12xlarge = 0.5 of an instance (of the variant's 2 instances)
    (placed,) = found.details.inference_components
    assert placed.instances_reserved == Decimal("0.5")
    assert placed.cost_basis == (
        "inference component mistral-ic: 2 copies x 1 GPU / 4 GPUs per ml.g5.12xlarge = 0.5 instances reserved"
    )
    # And the component is a resource of its own: its own ARN (as DescribeInferenceComponent says it), a child of the
    # endpoint, on the variant's instance type,
    # its copies as its count, its share as what it costs; the variant pays for the 1.5 instances nobody reserves
    assert as_resource.arn == "arn:aws:sagemaker:us-east-1:123456789012:inference-component/mistral-ic"
    assert (as_resource.key, as_resource.variant, as_resource.parent_arn) == (as_resource.arn, None, SHARED_ARN)
    assert (as_resource.kind, as_resource.name) == ("sagemaker_inference_component", "shared-gpu/mistral-ic")
    assert (as_resource.instance_type, as_resource.instance_count, as_resource.platform) == (
        "ml.g5.12xlarge",
        2,
        "nvidia",
    )
    assert (as_resource.state, as_resource.launched_at) == ("InService", CREATED)
    assert isinstance(as_resource.details, InferenceComponentDetails)
    assert as_resource.details.billed_instances == Decimal("0.5")
    assert (as_resource.details.endpoint_name, as_resource.details.variant_name) == ("shared-gpu", "AllTraffic")
    assert as_resource.hints.hf_model_id == "mistralai/Mistral-7B-Instruct-v0.3"
    assert as_resource.hints.workload == "inference"
    assert found.details.billed_instances == Decimal("1.5")
    assert found.details.cost_basis == (
        "inference components (mistral-ic) reserve 0.5 of 2 x ml.g5.12xlarge: this resource's cost is the 1.5 "
        "instances no component reserves"
    )
    # And the stored JSON reads back into the same details
    stored = as_resource.details.model_dump(mode="json")
    assert parse_details("sagemaker_inference_component", stored) == as_resource.details


SHARED_ARN = "arn:aws:sagemaker:us-east-1:123456789012:endpoint/shared-gpu"
SHARED_ENDPOINT = {
    "EndpointName": "shared-gpu",
    "EndpointArn": SHARED_ARN,
    "EndpointConfigName": "shared-gpu-config",
    "ProductionVariants": [{"VariantName": "AllTraffic", "CurrentInstanceCount": 2}],
    "EndpointStatus": "InService",
    "CreationTime": CREATED,
}


def _component(name: str, copies: int, gpus: int, variant: str = "AllTraffic") -> dict[str, Any]:
    return {
        **DESCRIBE_INFERENCE_COMPONENT,
        "InferenceComponentName": name,
        "InferenceComponentArn": f"arn:aws:sagemaker:us-east-1:123456789012:inference-component/{name}",
        "VariantName": variant,
        "Specification": {
            **DESCRIBE_INFERENCE_COMPONENT["Specification"],
            "ComputeResourceRequirements": {"NumberOfAcceleratorDevicesRequired": gpus},
        },
        "RuntimeConfig": {"DesiredCopyCount": copies, "CurrentCopyCount": copies},
    }


def _shared_config(instance_type: str, count: int = 2) -> dict[str, Any]:
    return {
        "EndpointConfigName": "shared-gpu-config",
        "ProductionVariants": [
            {"VariantName": "AllTraffic", "InstanceType": instance_type, "InitialInstanceCount": count}
        ],
    }


def test_components_and_their_variant_never_cost_more_than_the_variant() -> None:
    # Given 2 x ml.g5.12xlarge (4 GPUs each) shared by a 2-copy x 2-GPU component and a 1-copy x 1-GPU component
    components = [inference_component(_component("big", 2, 2)), inference_component(_component("small", 1, 1))]
    variant, big, small = endpoint_resources(
        SHARED_ENDPOINT, _shared_config("ml.g5.12xlarge"), {}, _models(), components
    )
    # Then, by hand: big reserves 2 x 2 / 4 = 1 instance, small 1 x 1 / 4 = 0.25, the variant keeps 0.75
    shares = [r.details.billed_instances for r in (variant, big, small)]  # type: ignore[union-attr]
    assert shares == [Decimal("0.75"), Decimal("1"), Decimal("0.25")]
    assert sum(shares, Decimal(0)) == 2  # exactly the variant's two instances: nothing counted twice
    # And the variant names no single model: each component names its own
    assert variant.hints.hf_model_id is None and big.hints.hf_model_id == "mistralai/Mistral-7B-Instruct-v0.3"
    assert "reserve 1.25 of 2 x ml.g5.12xlarge" in (variant.details.cost_basis or "")  # type: ignore[union-attr]


def test_a_component_whose_share_is_unknown_leaves_its_capacity_with_the_variant() -> None:
    # Neuron: the share is unknown, so the component has no cost and the variant keeps its whole cost
    neuron = [inference_component(_component("llama-neuron", 2, 1))]
    variant, component = endpoint_resources(SHARED_ENDPOINT, _shared_config("ml.inf2.48xlarge"), {}, _models(), neuron)
    assert isinstance(variant.details, EndpointDetails) and variant.details.billed_instances is None
    assert isinstance(component.details, InferenceComponentDetails) and component.details.billed_instances is None
    assert "NeuronCores" in (component.details.cost_basis or "")
    # Mixed on a GPU variant: one share known (1 instance), one not (no copy count yet): the unknown one's capacity
    # stays with the variant, which says so
    pending = {**_component("pending", 1, 1), "RuntimeConfig": {}}
    mixed = [inference_component(_component("big", 2, 2)), inference_component(pending)]
    variant, big, waiting = endpoint_resources(SHARED_ENDPOINT, _shared_config("ml.g5.12xlarge"), {}, _models(), mixed)
    assert isinstance(variant.details, EndpointDetails) and variant.details.billed_instances == Decimal("1")
    assert "the share of pending is unknown and stays with this resource" in (variant.details.cost_basis or "")
    assert isinstance(waiting.details, InferenceComponentDetails) and waiting.details.billed_instances is None
    assert isinstance(big.details, InferenceComponentDetails) and big.details.billed_instances == Decimal("1")


def test_components_reserving_more_than_the_variant_runs_have_no_share() -> None:
    # Copies waiting for capacity: 3 x 4 GPUs on 2 x 4-GPU instances would be 3 instances, more than bill: no
    # share can be told from the bill, so the components have no cost and the variant keeps its whole cost
    components = [inference_component(_component("greedy", 3, 4))]
    variant, greedy = endpoint_resources(SHARED_ENDPOINT, _shared_config("ml.g5.12xlarge"), {}, _models(), components)
    assert isinstance(variant.details, EndpointDetails) and variant.details.billed_instances is None
    assert isinstance(greedy.details, InferenceComponentDetails) and greedy.details.billed_instances is None
    assert "reserve 3 instances but the variant runs 2 x ml.g5.12xlarge" in (greedy.details.cost_basis or "")


def test_each_variant_of_an_ab_endpoint_gets_only_its_own_components() -> None:
    # Given an A/B endpoint whose two variants each host a component
    endpoint = {
        **SHARED_ENDPOINT,
        "ProductionVariants": [
            {"VariantName": "a", "CurrentInstanceCount": 1},
            {"VariantName": "b", "CurrentInstanceCount": 1},
        ],
    }
    config = {
        "EndpointConfigName": "shared-gpu-config",
        "ProductionVariants": [
            {"VariantName": "a", "InstanceType": "ml.g5.12xlarge", "InitialInstanceCount": 1},
            {"VariantName": "b", "InstanceType": "ml.g5.2xlarge", "InitialInstanceCount": 1},
        ],
    }
    components = [
        inference_component(_component("on-a", 1, 2, "a")),
        inference_component(_component("on-b", 1, 1, "b")),
    ]
    found = endpoint_resources(endpoint, config, {}, _models(), components)
    by_name = {r.name: r for r in found}
    assert list(by_name) == ["shared-gpu/a", "shared-gpu/on-a", "shared-gpu/b", "shared-gpu/on-b"]
    # on-a: 1 x 2 / 4 GPUs = 0.5 of the ml.g5.12xlarge; on-b: 1 x 1 / 1 GPU = the whole ml.g5.2xlarge
    assert by_name["shared-gpu/on-a"].details.billed_instances == Decimal("0.5")  # type: ignore[union-attr]
    assert by_name["shared-gpu/on-b"].instance_type == "ml.g5.2xlarge"
    assert by_name["shared-gpu/on-b"].details.billed_instances == Decimal("1")  # type: ignore[union-attr]
    assert by_name["shared-gpu/b"].details.billed_instances == 0  # type: ignore[union-attr]
    assert by_name["shared-gpu/on-b"].parent_arn == SHARED_ARN


def test_an_inference_component_reservation_is_unknown_where_the_field_is_ambiguous() -> None:
    component = inference_component(DESCRIBE_INFERENCE_COMPONENT)
    # Neuron: "accelerators" may be devices or NeuronCores -- left unknown with the reason, never guessed
    reserved, basis = component_reservation(component, "ml.inf2.48xlarge", "inferentia", 12)
    assert reserved is None and "unknown" in basis and "NeuronCores" in basis
    # No copy count (a component still being created): unknown
    empty = inference_component({**DESCRIBE_INFERENCE_COMPONENT, "RuntimeConfig": {}})
    reserved, basis = component_reservation(empty, "ml.g5.12xlarge", "nvidia", 4)
    assert reserved is None and "no copy count" in basis
    # A p4d (8 GPUs) with 3 copies x 2 GPUs: 6 / 8 = 0.75 of an instance
    bigger = inference_component(
        {
            **DESCRIBE_INFERENCE_COMPONENT,
            "Specification": {"ComputeResourceRequirements": {"NumberOfAcceleratorDevicesRequired": 2}},
            "RuntimeConfig": {"DesiredCopyCount": 3},
        }
    )
    reserved, _ = component_reservation(bigger, "ml.p4d.24xlarge", "nvidia", 8)
    assert reserved == Decimal("0.75")


DESCRIBE_TRAINING_JOB = {
    "TrainingJobName": "job-0001",
    "TrainingJobArn": "arn:aws:sagemaker:us-east-1:123456789012:training-job/job-0001",
    "TrainingJobStatus": "Completed",
    "SecondaryStatus": "Completed",
    "HyperParameters": {
        "epochs": "3",
        "model_name_or_path": '"mistralai/Mistral-7B-v0.1"',
        "per_device_train_batch_size": "2",
        "sagemaker_container_log_level": "20",
        "sagemaker_job_name": '"job-0001"',
        "sagemaker_program": '"run_clm.py"',
        "sagemaker_region": '"us-east-1"',
        "sagemaker_submit_directory": '"s3://bucket/job-0001/source/sourcedir.tar.gz"',
    },
    "AlgorithmSpecification": {
        "TrainingImage": "763104351884.dkr.ecr.us-east-1.amazonaws.com/huggingface-pytorch-training:"
        "2.1.0-transformers4.36.0-gpu-py310-cu121-ubuntu20.04",
        "TrainingInputMode": "File",
        "EnableSageMakerMetricsTimeSeries": True,
    },
    "RoleArn": "arn:aws:iam::123456789012:role/sagemaker",
    "InputDataConfig": [
        {
            "ChannelName": "train",
            "DataSource": {"S3DataSource": {"S3DataType": "S3Prefix", "S3Uri": "s3://bucket/data/train"}},
        }
    ],
    "OutputDataConfig": {"S3OutputPath": "s3://bucket/job-0001/"},
    "ResourceConfig": {"InstanceType": "ml.g5.12xlarge", "InstanceCount": 1, "VolumeSizeInGB": 100},
    "StoppingCondition": {"MaxRuntimeInSeconds": 86400},
    "CreationTime": CREATED,
    "TrainingStartTime": CREATED,
    "TrainingEndTime": datetime(2026, 11, 1, 6, tzinfo=UTC),
    "TrainingTimeInSeconds": 21600,
    "BillableTimeInSeconds": 21600,
}


def test_an_hf_estimator_fine_tune_named_job_0001_is_recognised_as_mistral() -> None:
    # When the HF estimator's DescribeTrainingJob answer is read (hyperparameters JSON-encoded by the SDK)
    job = _training_resource(dict(DESCRIBE_TRAINING_JOB), {})
    # Then the base model and family come from model_name_or_path, though the job name says nothing
    assert (job.hints.model_family, job.hints.hf_model_id) == ("mistral", "mistralai/Mistral-7B-v0.1")
    assert job.hints.sources["model_id"] == "hyperparameter:model_name_or_path"
    assert job.hints.workload == "training"
    assert isinstance(job.details, TrainingJobDetails)
    assert job.details.hyperparameters["model_name_or_path"] == '"mistralai/Mistral-7B-v0.1"'


def test_a_jumpstart_fine_tune_reads_the_model_channel() -> None:
    # Given a JumpStart fine-tune: the base model arrives on the "model" channel from the JumpStart bucket
    described = {
        **DESCRIBE_TRAINING_JOB,
        "TrainingJobName": "jumpstart-ft-0002",
        "HyperParameters": {"epoch": "5", "instruction_tuned": "True"},
        "InputDataConfig": [
            *DESCRIBE_TRAINING_JOB["InputDataConfig"],
            {
                "ChannelName": "model",
                "DataSource": {
                    "S3DataSource": {
                        "S3DataType": "S3Prefix",
                        "S3Uri": "s3://jumpstart-cache-prod-us-east-1/meta-training/train-meta-textgeneration-llama-3-8b/",
                    }
                },
            },
        ],
    }
    job = _training_resource(described, {"sagemaker-sdk:jumpstart-model-id": "meta-textgeneration-llama-3-8b"})
    assert (job.hints.model_family, job.hints.jumpstart_model_id) == ("llama", "meta-textgeneration-llama-3-8b")
    assert job.hints.hf_model_id is None


def test_a_variant_whose_components_could_not_be_read_has_no_figure() -> None:
    # ListInferenceComponents failed: what the variant pays for alone is unknown (its stored components keep theirs)
    config = {
        "EndpointConfigName": "shared-gpu-config",
        "ProductionVariants": [
            {"VariantName": "AllTraffic", "InstanceType": "ml.g5.12xlarge", "InitialInstanceCount": 2}
        ],
    }
    (variant,) = endpoint_resources(SHARED_ENDPOINT, config, {}, _models(), [], None, components_read=False)
    assert isinstance(variant.details, EndpointDetails)
    assert variant.details.billed_unknown and variant.details.billed_instances is None
    assert "could not be read this scan" in (variant.details.cost_basis or "")
