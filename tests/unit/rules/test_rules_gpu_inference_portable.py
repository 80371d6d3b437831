"""gpu_inference_portable: steady GPU serving of a supported model -> Inferentia sized by model memory and by the
GPUs kept busy (in A10G-equivalents by memory bandwidth, 2 per Inferentia2 chip, 4 Inferentia1 chips per
Inferentia2 chip), with headroom; saving = current - target monthly cost."""

from __future__ import annotations

from decimal import Decimal

from rules_factories import HOURS, ctx, flat, hourly, profile

from chipwise.rules.builtin.gpu_inference_portable import GpuInferencePortable, GpuInferencePortableParams

RULE = GpuInferencePortable(GpuInferencePortableParams())
SAGEMAKER_GPU = "/aws/sagemaker/Endpoints"


def test_steady_mistral_on_four_g5_endpoints_moves_to_two_inf2_xlarge() -> None:
    # Given 4 x ml.g5.2xlarge ($1.515/h) serving Mistral-7B at 22 requests/s all day, GPU at 60 %
    endpoint = profile(
        "chat",
        kind="sagemaker_endpoint",
        instance_type="ml.g5.2xlarge",
        count=4,
        rate="1.515",
        hints={"model_family": "mistral", "hf_model_id": "mistralai/Mistral-7B-Instruct-v0.3"},
        gpu_util=flat(60.0),
        gpu_source=SAGEMAKER_GPU,
        invocations=flat(79_200.0),
    )
    # When the rule runs
    draft = RULE.evaluate(endpoint, ctx())
    # Then 4 x 0.6 = 2.4 A10G-equivalents / 2 = 1.2 chips x 1.3 = 1.56 -> 2 x ml.inf2.xlarge (7B x 2 bytes = 13 GiB
    # x 1.2 fits 32 GiB): 4,423.80 - 1,445.40 = $2,978.40 a month; Mistral ports in days
    assert draft is not None
    assert draft.recommendation.target_platform == "inferentia"
    assert (draft.recommendation.target_instance_type, draft.recommendation.target_count) == ("ml.inf2.xlarge", 2)
    assert draft.monthly_cost_usd == Decimal("4423.80")
    assert draft.estimated_monthly_savings_usd == Decimal("2978.40")
    assert draft.effort == "days"
    assert draft.break_even_months == 1.4  # 4,000 / 2,978.40 = 1.343, rounded up to a tenth
    # cost per million requests: 79,200 x 730 = 57.816 M requests a month
    assert draft.evidence.current_cost_per_million_requests_usd == 76.5152
    assert draft.evidence.target_cost_per_million_requests_usd == 25.0


def test_a_ratio_based_saving_shows_its_range_from_the_data_file() -> None:
    # Given 6 x ml.g5.2xlarge ($1.515/h) serving Mistral-7B, GPU at 60 %
    endpoint = profile(
        "chat",
        kind="sagemaker_endpoint",
        instance_type="ml.g5.2xlarge",
        count=6,
        rate="1.515",
        hints={"model_family": "mistral", "hf_model_id": "mistralai/Mistral-7B-Instruct-v0.3"},
        gpu_util=flat(60.0),
        gpu_source=SAGEMAKER_GPU,
        invocations=flat(79_200.0),
    )
    # When the rule runs
    draft = RULE.evaluate(endpoint, ctx())
    # Then at the representative ratio (2.0, the range's low end) 6 x 0.6 = 3.6 A10G / 2 = 1.8 chips x 1.3 = 2.34
    # -> 3 x ml.inf2.xlarge ($722.70 a month each): 6,635.70 - 2,168.10 = $4,467.60; at the high end (3.0)
    # 3.6 / 3 = 1.2 x 1.3 = 1.56 -> 2 x ml.inf2.xlarge: 6,635.70 - 1,445.40 = $5,190.30
    assert draft is not None
    assert draft.recommendation.target_count == 3
    assert draft.estimated_monthly_savings_usd == Decimal("4467.60")
    assert (draft.evidence.savings_low_usd, draft.evidence.savings_high_usd) == (4467.6, 5190.3)
    assert (draft.evidence.throughput_ratio_low, draft.evidence.throughput_ratio_high) == (2.0, 3.0)
    assert draft.evidence.best_case_target_count == 2
    assert "(range $4,467.60-$5,190.30 if Inferentia2 reaches the high end" in draft.summary


def test_a_range_that_does_not_change_the_target_is_not_shown() -> None:
    # Given 4 x ml.g5.2xlarge at 60 %: 2.4 A10G -> 1.56 chips at the low ratio and 1.04 at the high: 2 chips both
    endpoint = profile(
        "chat",
        kind="sagemaker_endpoint",
        instance_type="ml.g5.2xlarge",
        count=4,
        rate="1.515",
        hints={"model_family": "mistral", "hf_model_id": "mistralai/Mistral-7B-Instruct-v0.3"},
        gpu_util=flat(60.0),
        gpu_source=SAGEMAKER_GPU,
        invocations=flat(79_200.0),
    )
    draft = RULE.evaluate(endpoint, ctx())
    # Then the saving is one number: $2,978.40 at both ends
    assert draft is not None
    assert draft.evidence.savings_low_usd == draft.evidence.savings_high_usd == 2978.4
    assert "range" not in draft.summary


def test_a_small_bert_model_on_l4s_goes_to_inferentia1() -> None:
    # Given 2 x ml.g6.xlarge ($1.006/h) serving BERT NER at 90 requests/s, GPU at 40 %
    endpoint = profile(
        "ner",
        kind="sagemaker_endpoint",
        instance_type="ml.g6.xlarge",
        count=2,
        rate="1.006",
        hints={"model_family": "bert", "hf_model_id": "dslim/bert-base-NER"},
        gpu_util=flat(40.0),
        gpu_source=SAGEMAKER_GPU,
        invocations=flat(324_000.0),
    )
    # When the rule runs
    draft = RULE.evaluate(endpoint, ctx())
    # Then a model this small belongs on Inferentia1, but ml.inf1 has no public price: the cheapest priced target
    # that fits is inf2: 0.8 L4 = 0.4 A10G = 0.2 inf2 chips x 1.3 = 0.26 -> 1 x ml.inf2.xlarge ($0.99/h, verified):
    # 2 x 1.006 x 730 = 1,468.76 - 722.70 = $746.06 a month, and inf1 is named as an option to ask a quote for
    assert draft is not None
    assert (draft.recommendation.target_instance_type, draft.recommendation.target_count) == ("ml.inf2.xlarge", 1)
    assert draft.estimated_monthly_savings_usd == Decimal("746.06")
    assert draft.recommendation.excluded_from_totals is None
    assert "Inferentia1" in draft.summary and "quote" in draft.summary


def test_a_model_of_unknown_size_is_never_sized_on_its_family_s_typical_size() -> None:
    # Given a g6.xlarge tagged inference, serving "Llama" with no model id, tag or name that states its size
    box = profile(
        "vllm",
        instance_type="g6.xlarge",
        rate="0.8048",
        hints={"workload": "inference", "model_family": "llama", "sources": {"model_family": "tag"}},
        gpu_util=flat(58.0),
        gpu_source="CWAgent",
    )
    # Then no target is sized and no saving claimed (Llama runs from 1B to 405B parameters)
    assert RULE.evaluate(box, ctx()) is None


def test_a_steady_llama_box_on_one_l4_moves_to_one_inf2_xlarge() -> None:
    # Given a g6.xlarge ($0.8048/h) tagged inference, serving Llama-3.1-8B (its model id), its GPU steady at 58 %
    box = profile(
        "vllm",
        instance_type="g6.xlarge",
        rate="0.8048",
        hints={
            "workload": "inference",
            "model_family": "llama",
            "hf_model_id": "meta-llama/Llama-3.1-8B-Instruct",
            "sources": {"model_family": "tag"},
        },
        gpu_util=flat(58.0),
        gpu_source="CWAgent",
    )
    # When the rule runs
    draft = RULE.evaluate(box, ctx())
    # Then one inf2.xlarge: 587.50 - 553.49 = $34.01 a month, a port that takes 118 months to pay back
    assert draft is not None
    assert draft.recommendation.target_instance_type == "inf2.xlarge"
    assert draft.estimated_monthly_savings_usd == Decimal("34.01")
    assert draft.break_even_months == 117.7
    # and an LLM moved to inf2 says which stack it lands on and that the go-forward one is trn2/trn3
    assert draft.recommendation.software_path is not None and "maintenance mode" in draft.recommendation.software_path
    assert "vLLM Neuron" in draft.summary and "trn2" in draft.summary
    assert draft.evidence.model_memory_basis == "model_id"


def test_h100s_count_for_more_a10g_equivalents() -> None:
    # Given a p5.48xlarge ($55.04/h) serving Llama-3.1-70B on 8 H100s, busiest GPU at 50 %
    node = profile(
        "llama-70b",
        instance_type="p5.48xlarge",
        rate="55.04",
        hints={"workload": "inference", "model_family": "llama", "hf_model_id": "meta-llama/Llama-3.1-70B-Instruct"},
        gpu_util=flat(50.0),
        gpu_source="CWAgent",
    )
    # When the rule runs
    draft = RULE.evaluate(node, ctx())
    # Then 8 x 0.5 = 4 H100 x (3350/600) = 22.33 A10G / 2 = 11.17 chips x 1.3 = 14.52 chips, 70B x 2 bytes
    # = 130.4 GiB x 1.2 = 156.5 GiB -> 3 x inf2.24xlarge (6 chips, 192 GiB): 40,179.20 - 14,214.48 = $25,964.72
    assert draft is not None
    assert (draft.recommendation.target_instance_type, draft.recommendation.target_count) == ("inf2.24xlarge", 3)
    assert draft.estimated_monthly_savings_usd == Decimal("25964.72")


def test_spiky_or_quiet_serving_is_not_steady() -> None:
    # Given an endpoint with requests in 2 hours a day only
    bursts = hourly([43_000.0 if i % 12 == 0 else None for i in range(HOURS)])
    spiky = profile(
        "bot",
        kind="sagemaker_endpoint",
        instance_type="ml.g5.12xlarge",
        rate="7.09",
        hints={"model_family": "llama"},
        gpu_util=flat(30.0),
        gpu_source=SAGEMAKER_GPU,
        invocations=bursts,
    )
    # Then it is not a steady-serving finding (spiky_inference_bedrock's case)
    assert RULE.evaluate(spiky, ctx()) is None


def test_unsupported_custom_or_unlabelled_work_is_left_alone() -> None:
    # Given a custom vision model, a Llama endpoint with custom CUDA, and a GPU instance not known to serve
    custom = profile(
        "vision",
        kind="sagemaker_endpoint",
        instance_type="ml.g5.xlarge",
        hints={"model_family": "custom"},
        gpu_util=flat(50.0),
        invocations=flat(3600.0),
    )
    cuda = profile(
        "cuda",
        kind="sagemaker_endpoint",
        instance_type="ml.g5.xlarge",
        hints={"model_family": "llama", "custom_cuda": True},
        gpu_util=flat(50.0),
        invocations=flat(3600.0),
    )
    unlabelled = profile("box", instance_type="g5.xlarge", hints={"model_family": "llama"}, gpu_util=flat(50.0))
    # Then none is a porting finding
    for resource in (custom, cuda, unlabelled):
        assert RULE.evaluate(resource, ctx()) is None


def test_without_gpu_telemetry_nothing_is_sized() -> None:
    # Given a steady endpoint whose GPU metric is missing
    endpoint = profile(
        "blind",
        kind="sagemaker_endpoint",
        instance_type="ml.g5.2xlarge",
        hints={"model_family": "mistral"},
        invocations=flat(79_200.0),
    )
    # Then no estimate is made
    assert RULE.evaluate(endpoint, ctx()) is None
