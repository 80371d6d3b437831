"""Workload hints from tags, images and environment: tags win, images and HF model ids fill the gaps."""

from __future__ import annotations

from chipwise.collect.hints import workload_hints

TGI_NEURONX = (
    "763104351884.dkr.ecr.us-east-1.amazonaws.com/huggingface-pytorch-tgi-inference:"
    "2.1.2-optimum0.0.27-neuronx-py310-ubuntu22.04"
)
HF_GPU_TRAINING = (
    "763104351884.dkr.ecr.us-east-1.amazonaws.com/huggingface-pytorch-training:"
    "2.1.0-transformers4.36.0-gpu-py310-cu121-ubuntu20.04"
)


def test_every_key_is_present_for_a_bare_instance() -> None:
    # Given an EC2 instance with no tags at all
    hints = workload_hints(tags={}, kind="ec2_instance")
    # Then every hint is there, unknown ones as None/False
    assert hints.model_dump(mode="json") == {
        "model_family": None,
        "workload": None,
        "custom_cuda": False,
        "owner": None,
        "image": None,
        "hf_model_id": None,
        "serving_stack": None,
        "neuron_image": False,
        "sources": {},
        "jumpstart_model_id": None,
        "model_artifact": None,
        "rejected_model_ids": {},
        "serving_engine": None,
    }


def test_chipwise_tags_are_the_owners_word() -> None:
    # Given the chipwise:* tags (in any case)
    tags = {
        "chipwise:model-family": "Llama",
        "chipwise:workload": "Training",
        "chipwise:custom-cuda": "true",
        "chipwise:owner": "alice@example.com",
    }
    # When hints are read for an endpoint whose image says otherwise
    hints = workload_hints(tags=tags, kind="sagemaker_endpoint", image=TGI_NEURONX)
    # Then the tags win
    assert hints.model_family == "llama"
    assert hints.workload == "training"
    assert hints.custom_cuda is True
    assert hints.owner == "alice@example.com"
    assert hints.sources == {"model_family": "tag", "workload": "tag", "custom_cuda": "tag"}


def test_an_hf_model_id_names_the_family_and_the_image_the_stack() -> None:
    # Given a TGI neuronx endpoint serving a Llama model
    hints = workload_hints(
        tags={},
        kind="sagemaker_endpoint",
        image=TGI_NEURONX,
        environment={"HF_MODEL_ID": "meta-llama/Meta-Llama-3-8B-Instruct"},
    )
    # Then the family comes from the model id, the stack and Neuron build from the image
    assert hints.model_family == "llama"
    assert hints.hf_model_id == "meta-llama/Meta-Llama-3-8B-Instruct"
    assert hints.serving_stack == "tgi"
    assert hints.neuron_image is True
    assert hints.workload == "inference"
    assert hints.sources["model_family"] == "hf_model_id"


def test_images_tell_training_from_inference_and_spot_custom_kernels() -> None:
    # Given images without any tag
    training = workload_hints(tags={}, kind="ec2_instance", image=HF_GPU_TRAINING)
    vllm = workload_hints(tags={}, kind="ec2_instance", image="vllm/vllm-openai:v0.6.3")
    kernels = workload_hints(tags={}, kind="sagemaker_training_job", image="123.dkr.ecr/moe-trainer:flash-attn3-custom")
    # Then the image decides
    assert training.workload == "training" and training.sources["workload"] == "image"
    assert vllm.workload == "inference" and vllm.serving_stack == "vllm"
    assert kernels.custom_cuda is True and kernels.sources["custom_cuda"] == "image"
    assert kernels.workload == "training"  # a training job is training whatever its image says


def test_a_false_custom_cuda_tag_overrides_the_image() -> None:
    hints = workload_hints(tags={"chipwise:custom-cuda": "false"}, kind="ec2_instance", image="x/flash-attn-build:1")
    assert hints.custom_cuda is False


def test_an_unknown_family_tag_is_kept_lowercase() -> None:
    hints = workload_hints(tags={"chipwise:model-family": "Zorblax"}, kind="ec2_instance")
    assert hints.model_family == "zorblax"
