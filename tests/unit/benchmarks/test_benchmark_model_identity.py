"""Issue 13 for benchmarks: the runner follows the engine a DJL/LMI container really serves with, and a model named
only as a path inside the container is never benchmarked as if it were a model id."""

from __future__ import annotations

from typing import Any

from benchmark_factories import finding, resource

from chipwise.benchmarks.dispatch import plan_finding
from chipwise.benchmarks.workload import describe_workload
from chipwise.catalog import get_catalog
from chipwise.collect.hints import workload_hints
from chipwise.settings import BatchQueues, Settings

DJL_LMI = "763104351884.dkr.ecr.us-east-1.amazonaws.com/djl-inference:0.31.0-lmi13.0.0-cu124"
TGI_GPU = "763104351884.dkr.ecr.us-east-1.amazonaws.com/huggingface-pytorch-tgi-inference:2.4.0-tgi2.4.0-gpu-py311"


def _settings() -> Settings:
    return Settings(batch_queues=BatchQueues(inf2="chipwise-inf2", trn1="chipwise-trn1"))


def _planned_runner(image: str, environment: dict[str, str]) -> Any:
    hints = workload_hints(tags={}, kind="sagemaker_endpoint", image=image, environment=environment)
    f = finding()
    res = resource(hints=hints.model_dump(mode="json"), details={"variants": [{"variant_name": "AllTraffic"}]})
    workload = describe_workload(f, res)
    planned, skipped = plan_finding(f, workload, [], settings=_settings(), catalog=get_catalog())
    return workload, planned, skipped


def test_djl_lmi_rolling_with_vllm_gets_the_vllm_runner() -> None:
    # Given an LMI (DJL) endpoint with OPTION_ROLLING_BATCH=vllm serving Mistral
    env = {"OPTION_MODEL_ID": "mistralai/Mistral-7B-Instruct-v0.3", "OPTION_ROLLING_BATCH": "vllm"}
    workload, planned, _ = _planned_runner(DJL_LMI, env)
    # Then the engine is vLLM and the benchmark runs vLLM on Neuron, not Optimum Neuron
    assert workload.serving_stack == "vllm"
    assert workload.model_id == "mistralai/Mistral-7B-Instruct-v0.3"
    assert planned[0].parameters.runner == "vllm-neuron"


def test_djl_lmi_with_a_vllm_entrypoint_gets_the_vllm_runner() -> None:
    env = {
        "OPTION_MODEL_ID": "mistralai/Mistral-7B-Instruct-v0.3",
        "OPTION_ENTRYPOINT": "djl_python.lmi_vllm.vllm_async_service",
    }
    _, planned, _ = _planned_runner(DJL_LMI, env)
    assert planned[0].parameters.runner == "vllm-neuron"


def test_djl_lmi_with_another_engine_keeps_optimum_neuron() -> None:
    # Given LMI with lmi-dist (not vLLM), Then the default Neuron runner stays
    env = {"OPTION_MODEL_ID": "mistralai/Mistral-7B-Instruct-v0.3", "OPTION_ROLLING_BATCH": "lmi-dist"}
    workload, planned, _ = _planned_runner(DJL_LMI, env)
    assert workload.serving_stack == "djl"
    assert planned[0].parameters.runner == "optimum-neuron"


def test_a_model_named_only_by_a_container_path_is_not_benchmarked() -> None:
    # Given TGI with HF_MODEL_ID=/opt/ml/model (the model copied from S3) and no other model id
    workload, planned, skipped = _planned_runner(TGI_GPU, {"HF_MODEL_ID": "/opt/ml/model", "SM_NUM_GPUS": "1"})
    # Then the path is no model id, and the dispatch report says why nothing was submitted
    assert workload.model_id is None
    assert planned == []
    assert "no usable model id" in skipped[0].reason
    assert "env:HF_MODEL_ID='/opt/ml/model'" in skipped[0].reason


def test_a_path_left_in_old_evidence_is_not_a_model_id_either() -> None:
    # Given a finding whose stored evidence carries the path as hf_model_id (written before issue 13)
    f = finding(evidence={"hf_model_id": "/opt/ml/model", "peak_requests_per_hour": 3600})
    workload = describe_workload(f, resource(hints={"model_family": "mistral"}))
    # Then it is not used; the family (the owner's tag) stays the documented fallback
    assert workload.model_id is None and workload.model_family == "mistral"
