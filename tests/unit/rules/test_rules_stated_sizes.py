"""Sizes from every stated source: the parameter count in a JumpStart model id or a model artifact's path counts as
stated evidence, as a model id or a tag does. The real case: a JumpStart Llama 3 8B endpoint on the LMI image, whose
container says only HF_MODEL_ID=/opt/ml/model."""

from __future__ import annotations

from decimal import Decimal

from rules_factories import ctx, flat, profile

from chipwise.collect.hints import workload_hints
from chipwise.models.resources import WorkloadHints
from chipwise.pipeline.policy import load_policy
from chipwise.rules.engine import assess_profiles
from chipwise.rules.sizing import model_size, path_segments, stated_params

LMI_IMAGE = "763104351884.dkr.ecr.us-east-1.amazonaws.com/djl-inference:0.29.0-lmi11.0.0-cu124"
JUMPSTART_ARTIFACT = (
    "s3://jumpstart-cache-prod-us-east-1/meta-textgeneration/meta-textgeneration-llama-3-8b/"
    "artifacts/inference-prepack/v1.0.0/"
)


def _jumpstart_hints(**tags: str) -> WorkloadHints:
    return workload_hints(
        tags=tags,
        kind="sagemaker_endpoint",
        image=LMI_IMAGE,
        environment={"HF_MODEL_ID": "/opt/ml/model", "OPTION_ROLLING_BATCH": "vllm", "SM_NUM_GPUS": "1"},
        model_data_url=JUMPSTART_ARTIFACT,
    )


def test_the_jumpstart_llama_3_8b_endpoint_states_8b_in_its_jumpstart_id() -> None:
    hints = _jumpstart_hints()
    # The collector reads the family and the JumpStart id from the artifact path; the container names no model id
    assert (hints.model_family, hints.hf_model_id, hints.jumpstart_model_id) == (
        "llama",
        None,
        "meta-textgeneration-llama-3-8b",
    )
    endpoint = profile(
        "js-llama3-8b",
        kind="sagemaker_endpoint",
        instance_type="ml.g5.2xlarge",
        rate="1.515",
        hints=hints.model_dump(mode="json"),
    )
    # Then 8 billion parameters are stated (by the JumpStart id), and the model is sized: 8e9 × 2 bytes = 14.9 GiB
    assert stated_params(endpoint, ctx().families) == (Decimal(8), "jumpstart_model_id")
    size = model_size(endpoint, ctx().families, ctx().catalog, Decimal(2))
    assert size is not None and size.params_billion == Decimal(8)
    assert round(size.memory_gib, 2) == Decimal("14.90")


def test_an_artifact_path_alone_states_the_size() -> None:
    hints = workload_hints(
        tags={},
        kind="sagemaker_endpoint",
        image=LMI_IMAGE,
        environment={"HF_MODEL_ID": "/opt/ml/model"},
        model_data_url="s3://acme-models/llama-3-8b/model.tar.gz",
    )
    endpoint = profile(
        "chat", kind="sagemaker_endpoint", instance_type="ml.g5.2xlarge", hints=hints.model_dump(mode="json")
    )
    assert stated_params(endpoint, ctx().families) == (Decimal(8), "model_artifact")
    assert path_segments("s3://acme-models/llama-3-8b/model.tar.gz") == ["model", "llama-3-8b"]


def test_a_model_id_that_states_no_size_is_not_overridden_by_a_path() -> None:
    hints = WorkloadHints(hf_model_id="acme/chat-model", model_artifact="s3://b/llama-3-70b/model.tar.gz")
    endpoint = profile(
        "chat", kind="sagemaker_endpoint", instance_type="ml.g5.2xlarge", hints=hints.model_dump(mode="json")
    )
    assert stated_params(endpoint, ctx().families) == (None, None)


def test_the_steady_jumpstart_endpoint_is_no_longer_silently_unjudged() -> None:
    # Given the JumpStart endpoint serving steadily on a GPU (70 % busy, requests every hour)
    endpoint = profile(
        "js-llama3-8b",
        kind="sagemaker_endpoint",
        instance_type="ml.g5.2xlarge",
        rate="1.515",
        gpu_util=flat(70),
        invocations=flat(3600),
        hints=_jumpstart_hints().model_dump(mode="json"),
    )
    # When the rules run
    _, (verdict,) = assess_profiles([endpoint], load_policy().rules(), ctx())
    # Then the size is known: the portability rule is not blocked on "model size"
    portable = next(o for o in verdict.outcomes if o.rule_id == "gpu_inference_portable")
    assert portable.missing != "model size"
    assert verdict.verdict in ("waste", "efficient")
