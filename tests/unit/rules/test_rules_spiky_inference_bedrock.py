"""spiky_inference_bedrock: an endpoint idle most hours with a peak-to-mean above 5, serving a family Bedrock
offers -> Bedrock on-demand, estimated from the requests and the assumed tokens per request."""

from __future__ import annotations

from decimal import Decimal

from rules_factories import HOURS, ctx, flat, hourly, profile

from chipwise.rules.builtin.spiky_inference_bedrock import SpikyInferenceBedrock, SpikyInferenceBedrockParams

RULE = SpikyInferenceBedrock(SpikyInferenceBedrockParams())
TWICE_A_DAY = hourly([40_000.0 if i % 12 == 0 else None for i in range(HOURS)])  # 28 busy hours of 336
LLAMA_8B = {"model_family": "llama", "hf_model_id": "meta-llama/Llama-3.1-8B-Instruct"}


def test_a_support_bot_bursting_twice_a_day_moves_to_bedrock() -> None:
    # Given an ml.g5.12xlarge ($7.09/h) serving Llama-3.1-8B with 40,000 requests in 2 hours a day, none otherwise
    bot = profile(
        "support-bot",
        kind="sagemaker_endpoint",
        instance_type="ml.g5.12xlarge",
        rate="7.09",
        hints=LLAMA_8B,
        invocations=TWICE_A_DAY,
    )
    # When the rule runs
    draft = RULE.evaluate(bot, ctx())
    # Then 1,120,000 requests / 336 h x 730 = 2,433,333 a month x (1,000 + 250 tokens) x $0.22 per million
    # = $669.17 on Llama 3.1 8B Instruct; 5,175.70 - 669.17 = $4,506.53 a month
    assert draft is not None
    assert draft.recommendation.target_platform == "bedrock"
    assert draft.recommendation.action == "migrate"
    assert draft.monthly_cost_usd == Decimal("5175.70")
    assert draft.estimated_monthly_savings_usd == Decimal("4506.53")
    assert draft.evidence.bedrock_model_id == "meta.llama3-1-8b-instruct-v1:0"
    assert draft.evidence.idle_hour_share == 0.917
    assert draft.evidence.peak_to_mean == 12.0
    assert draft.confidence == "medium"
    assert "tokens_per_request" in draft.signals_missing


def test_a_model_of_unknown_size_is_priced_on_the_dearest_bedrock_model_of_its_family() -> None:
    # Given the same endpoint serving a Llama fine-tune whose id says no size
    bot = profile(
        "support-bot",
        kind="sagemaker_endpoint",
        instance_type="ml.g5.12xlarge",
        rate="7.09",
        hints={"model_family": "llama", "hf_model_id": "acme/support-llama"},
        invocations=TWICE_A_DAY,
    )
    # When the rule runs
    draft = RULE.evaluate(bot, ctx())
    # Then the 70B price ($0.72 in and out) is used: 2,433,333 x 1,250 x 0.72 / 1e6 = $2,190.00 -> $2,985.70
    assert draft is not None
    assert draft.evidence.bedrock_input_per_million_usd == 0.72
    assert draft.estimated_monthly_savings_usd == Decimal("2985.70")


def test_steady_traffic_or_families_bedrock_lacks_are_left_alone() -> None:
    # Given a steady Llama endpoint and a spiky BERT endpoint
    steady = profile(
        "chat",
        kind="sagemaker_endpoint",
        instance_type="ml.g5.2xlarge",
        rate="1.515",
        hints=LLAMA_8B,
        invocations=flat(3600.0),
    )
    bert = profile(
        "ner",
        kind="sagemaker_endpoint",
        instance_type="ml.g5.2xlarge",
        rate="1.515",
        hints={"model_family": "bert"},
        invocations=TWICE_A_DAY,
    )
    # Then neither moves to Bedrock
    assert RULE.evaluate(steady, ctx()) is None
    assert RULE.evaluate(bert, ctx()) is None


def test_an_endpoint_without_any_request_is_not_spiky() -> None:
    # Given an endpoint that got no request at all (an idle rule's case)
    idle = profile("idle", kind="sagemaker_endpoint", instance_type="ml.g5.2xlarge", hints=LLAMA_8B)
    # Then there is no traffic to move
    assert RULE.evaluate(idle, ctx()) is None


def test_thresholds_come_from_the_policy() -> None:
    # Given the bursting endpoint (92 % idle hours, peak 12x the mean)
    bot = profile(
        "support-bot",
        kind="sagemaker_endpoint",
        instance_type="ml.g5.12xlarge",
        rate="7.09",
        hints=LLAMA_8B,
        invocations=TWICE_A_DAY,
    )
    # When the policy asks for a peak above 15x the mean
    strict = SpikyInferenceBedrock(SpikyInferenceBedrockParams(min_peak_to_mean=15))
    # Then it no longer fires
    assert strict.evaluate(bot, ctx()) is None
