"""Cost per million generated tokens: allocation basis (the whole bill) and usage basis (busy hours only), the
target compared at today's traffic, and "unknown" without token data."""

from __future__ import annotations

from decimal import Decimal

from rules_factories import HOURS, hourly, profile

from chipwise.rules.tokens import NO_TOKEN_DATA, token_costs, token_evidence

# 100,000 tokens an hour in the first 10 hours of every day, none otherwise: 140 busy hours, 14,000,000 tokens
TOKENS = hourly([100_000.0 if i % 24 < 10 else 0.0 for i in range(HOURS)])


def test_allocation_and_usage_cost_per_million_tokens() -> None:
    # Given an endpoint at $7.09/h over 336 hours that generated 14 M tokens in 140 of them
    bot = profile(
        "chat", kind="sagemaker_endpoint", instance_type="ml.g5.12xlarge", rate="7.09", generated_tokens=TOKENS
    )
    costs = token_costs(bot)
    assert costs is not None
    # Then allocation = 7.09 x 336 / 14 = $170.16 per 1M, usage = 7.09 x 140 / 14 = $70.90 per 1M
    assert costs.tokens == Decimal(14_000_000)
    assert costs.allocation_per_million.quantize(Decimal("0.01")) == Decimal("170.16")
    assert costs.usage_per_million.quantize(Decimal("0.01")) == Decimal("70.90")
    # And a $722.70 target at today's 41,666.67 tokens an hour (30.4167 M a month): $23.76 per 1M
    evidence = token_evidence(bot, Decimal("722.70"))
    assert evidence["cost_per_million_tokens_allocation_usd"] == 170.16
    assert evidence["cost_per_million_tokens_usage_usd"] == 70.9
    assert evidence["target_cost_per_million_tokens_usd"] == 23.76
    assert evidence["mean_tokens_per_hour"] == 41666.7
    assert evidence["peak_tokens_per_hour"] == 100000.0


def test_without_token_data_the_cost_per_token_is_unknown() -> None:
    bot = profile("chat", kind="sagemaker_endpoint", instance_type="ml.g5.12xlarge", rate="7.09")
    assert token_costs(bot) is None
    assert token_evidence(bot, Decimal("722.70")) == {"token_data": NO_TOKEN_DATA}
