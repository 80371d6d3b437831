"""Issue 13, item 3: model identity from every place AWS keeps it, with the basis; a path is never a model id."""

from __future__ import annotations

import pytest

from chipwise.collect.hints import (
    ModelPlace,
    jumpstart_id_from_path,
    model_identity,
    usable_model_id,
    workload_hints,
)


@pytest.mark.parametrize(
    ("environment", "model_id", "basis"),
    [
        ({"HF_MODEL_ID": "meta-llama/Llama-3.1-8B-Instruct"}, "meta-llama/Llama-3.1-8B-Instruct", "env:HF_MODEL_ID"),
        ({"OPTION_MODEL_ID": "mistralai/Mistral-7B-v0.1"}, "mistralai/Mistral-7B-v0.1", "env:OPTION_MODEL_ID"),
        ({"SM_VLLM_MODEL": "Qwen/Qwen2.5-7B-Instruct"}, "Qwen/Qwen2.5-7B-Instruct", "env:SM_VLLM_MODEL"),
        ({"MODEL_ID": "google/gemma-2-9b"}, "google/gemma-2-9b", "env:MODEL_ID"),
        # TGI with the model in S3: the path is skipped, the next variable answers
        ({"HF_MODEL_ID": "/opt/ml/model", "MODEL_ID": "gpt2"}, "gpt2", "env:MODEL_ID"),
    ],
)
def test_container_variables_name_the_model(environment: dict[str, str], model_id: str, basis: str) -> None:
    hints = workload_hints(tags={}, kind="sagemaker_endpoint", environment=environment)
    assert (hints.hf_model_id, hints.sources["model_id"]) == (model_id, basis)


@pytest.mark.parametrize(
    "value",
    [
        "/opt/ml/model",
        "./model",
        "../weights",
        "~/models/llama",
        "file:///opt/ml/model",
        "s3://bucket/models/llama-3-8b/",
        "https://huggingface.co/meta-llama/Llama-3.1-8B",
        "C:\\models\\llama",
        "model.tar.gz",
        "a/b/c",
        "",
        "   ",
    ],
)
def test_paths_and_uris_are_never_model_ids(value: str) -> None:
    assert usable_model_id(value) is None


def test_json_encoded_hyperparameters_are_decoded() -> None:
    assert usable_model_id('"mistralai/Mistral-7B-v0.1"') == "mistralai/Mistral-7B-v0.1"
    assert usable_model_id('"/opt/ml/input/data/model"') is None


def test_an_lmi_s3_model_id_is_the_artifact_and_names_the_family() -> None:
    # Given LMI loading from S3 (OPTION_MODEL_ID may be an S3 URI)
    hints = workload_hints(
        tags={}, kind="sagemaker_endpoint", environment={"OPTION_MODEL_ID": "s3://team-models/qwen2-7b-instruct/"}
    )
    # Then there is no hub id, the URI is the artifact (rejected as an id), the family comes from its key
    assert hints.hf_model_id is None
    assert hints.model_artifact == "s3://team-models/qwen2-7b-instruct/"
    assert hints.rejected_model_ids == {"env:OPTION_MODEL_ID": "s3://team-models/qwen2-7b-instruct/"}
    assert (hints.model_family, hints.sources["model_family"]) == ("qwen", "model_artifact")


def test_a_bucket_name_is_no_statement_about_the_model() -> None:
    # Given a bucket called llama-team holding an unnamed artifact, Then no family is read from the bucket
    hints = workload_hints(tags={}, kind="sagemaker_endpoint", model_data_url="s3://llama-team/artifacts/model.tar.gz")
    assert hints.model_family is None


@pytest.mark.parametrize(
    ("uri", "jumpstart_id"),
    [
        (
            "s3://jumpstart-private-cache-prod-us-east-1/meta-textgeneration/meta-textgeneration-llama-3-8b/"
            "artifacts/inference-prepack/v1.0.0/",
            "meta-textgeneration-llama-3-8b",
        ),
        (
            "s3://jumpstart-cache-prod-eu-west-1/huggingface-llm/huggingface-llm-mistral-7b-instruct/artifacts/"
            "inference-prepack/v1.0.0/",
            "huggingface-llm-mistral-7b-instruct",
        ),
        ("s3://my-bucket/meta-textgeneration/meta-textgeneration-llama-3-8b/", None),  # not a JumpStart bucket
        ("s3://jumpstart-cache-prod-us-east-1/some/other/layout.tar.gz", None),
    ],
)
def test_jumpstart_ids_from_the_jumpstart_s3_layout(uri: str, jumpstart_id: str | None) -> None:
    assert jumpstart_id_from_path(uri) == jumpstart_id


def test_the_jumpstart_tag_wins_over_the_path() -> None:
    identity = model_identity(
        [ModelPlace({}, "s3://jumpstart-cache-prod-us-east-1/meta-textgeneration/meta-textgeneration-llama-2-7b/")],
        {},
        {"sagemaker-sdk:jumpstart-model-id": "meta-textgeneration-llama-3-8b"},
    )
    assert (identity.jumpstart_model_id, identity.jumpstart_basis) == (
        "meta-textgeneration-llama-3-8b",
        "jumpstart_tag",
    )


@pytest.mark.parametrize("key", ["model_id", "model_name_or_path", "model-name-or-path"])
def test_training_hyperparameters_name_the_base_model(key: str) -> None:
    hints = workload_hints(
        tags={}, kind="sagemaker_training_job", hyperparameters={key: '"mistralai/Mistral-7B-v0.1"', "epochs": "3"}
    )
    assert (hints.model_family, hints.hf_model_id, hints.sources["model_id"]) == (
        "mistral",
        "mistralai/Mistral-7B-v0.1",
        f"hyperparameter:{key}",
    )


def test_the_owners_family_tag_still_wins() -> None:
    hints = workload_hints(
        tags={"chipwise:model-family": "qwen"}, kind="sagemaker_endpoint", environment={"HF_MODEL_ID": "gpt2"}
    )
    assert (hints.model_family, hints.sources["model_family"], hints.hf_model_id) == ("qwen", "tag", "gpt2")


@pytest.mark.parametrize(
    ("image", "environment", "engine"),
    [
        ("djl-inference:0.31.0-lmi13.0.0-cu124", {"OPTION_ROLLING_BATCH": "vllm"}, "vllm"),
        ("djl-inference:0.31.0-lmi13.0.0-cu124", {"OPTION_ROLLING_BATCH": "VLLM"}, "vllm"),
        (
            "djl-inference:0.31.0-lmi13.0.0-cu124",
            {"OPTION_ENTRYPOINT": "djl_python.lmi_vllm.vllm_async_service"},
            "vllm",
        ),
        ("djl-inference:0.31.0-lmi13.0.0-cu124", {"OPTION_ROLLING_BATCH": "lmi-dist"}, None),
        ("djl-inference:0.29.0-neuronx-sdk2.19.1", {"OPTION_ROLLING_BATCH": "auto"}, None),
        ("huggingface-pytorch-tgi-inference:2.4.0", {"OPTION_ROLLING_BATCH": "vllm"}, None),  # not DJL
    ],
)
def test_djl_lmi_engine(image: str, environment: dict[str, str], engine: str | None) -> None:
    hints = workload_hints(tags={}, kind="sagemaker_endpoint", image=image, environment=environment)
    assert hints.serving_engine == engine
