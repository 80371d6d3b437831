"""spiky_inference_bedrock: a self-managed accelerator endpoint that is idle most hours and bursts now and then,
serving a foundation-model family Amazon Bedrock offers.

An under-used endpoint pays for every idle hour; Bedrock on-demand pays per token. Fires when at least
``min_idle_hour_share`` of the hours had no request and the peak hour is more than ``min_peak_to_mean`` times the
mean hour. The Bedrock estimate: monthly requests (the window's mean hour x 730) x tokens per request (assumed, a
threshold of this rule) x the on-demand token price of the smallest Bedrock model of the family at least as large
as the served one (economics data file).
"""

from __future__ import annotations

from decimal import Decimal

from pydantic import Field

from chipwise.analyse.profiles import ResourceProfile
from chipwise.catalog import BedrockPrice, ModelFamily
from chipwise.economics import HOURS_PER_MONTH, MILLION
from chipwise.models.common import Confidence
from chipwise.rules.base import FindingDraft, Outcome, RuleContext, RuleMeta, SavingParams, Share, cost_evidence, money
from chipwise.rules.base import rounded as r
from chipwise.rules.migration import MigrationRule
from chipwise.rules.registry import register
from chipwise.rules.sizing import family_guessed, model_family, model_params, params_from_model_id, rate_confidence
from chipwise.rules.traffic import requests


class SpikyInferenceBedrockParams(SavingParams):
    min_idle_hour_share: Share = Field(0.75, description="Share of hours without a request.")
    min_peak_to_mean: float = Field(5, gt=1, description="Peak hour ÷ mean hour above which traffic is spiky.")
    input_tokens_per_request: int = Field(1000, ge=0, description="Assumed prompt tokens per request.")
    output_tokens_per_request: int = Field(250, ge=0, description="Assumed generated tokens per request.")


@register
class SpikyInferenceBedrock(MigrationRule[SpikyInferenceBedrockParams]):
    """A self-managed accelerator endpoint that idles most hours pays for capacity it rarely uses; for a foundation
    model Bedrock offers, pay-per-token on-demand costs a fraction."""

    meta = RuleMeta(
        title="Spiky inference better on Bedrock",
        severity="medium",
        applies_to="Live SageMaker endpoints on accelerators, serving a family Amazon Bedrock offers",
    )

    def evaluate(self, profile: ResourceProfile, ctx: RuleContext) -> FindingDraft | None:
        if profile.kind != "sagemaker_endpoint" or profile.platform == "cpu" or not profile.live:
            return None
        if profile.shares_instances:  # a variant its inference components share: not one workload to move
            return None
        family = model_family(profile, ctx.families)
        traffic = requests(profile)
        monthly = profile.monthly_cost
        if family is None or not family.bedrock_available or traffic is None or monthly is None:
            return None
        ratio = traffic.peak_to_mean
        if traffic.idle_share < self.params.min_idle_hour_share or ratio is None:
            return None
        if ratio <= self.params.min_peak_to_mean:
            return None
        price = self._bedrock_model(profile, ctx, family)
        if price is None:
            return None
        monthly_requests = Decimal(str(traffic.mean_per_hour)) * HOURS_PER_MONTH
        bedrock = monthly_requests * self._per_request(price)
        saving = monthly - bedrock
        if not self.worth_reporting(saving):
            return None
        one_time = ctx.assumptions.porting_cost_usd("days")
        return self.draft(
            profile,
            Outcome(
                monthly_cost=monthly,
                saving=saving,
                action="migrate",
                target_platform="bedrock",
                confidence=self._confidence(profile),
                summary=f"{profile.name} ({profile.instance_count} × {profile.instance_type}) had no request in "
                f"{traffic.idle_share:.0%} of hours and peaks at {ratio:.0f}× its mean: {price.name} on Bedrock "
                f"on-demand would cost about {money(bedrock)}/month for the same requests, "
                f"saving {money(saving)}/month.",
                evidence={
                    "model_family": family.id,
                    "idle_hour_share": r(traffic.idle_share, 3),
                    "peak_to_mean": r(ratio),
                    "mean_requests_per_hour": r(traffic.mean_per_hour),
                    "peak_requests_per_hour": r(traffic.peak_per_hour),
                    "monthly_requests": r(monthly_requests, 0),
                    "input_tokens_per_request": self.params.input_tokens_per_request,
                    "output_tokens_per_request": self.params.output_tokens_per_request,
                    "bedrock_model_id": price.model_id,
                    "bedrock_input_per_million_usd": r(price.input_per_million, 4),
                    "bedrock_output_per_million_usd": r(price.output_per_million, 4),
                    "bedrock_price_estimate": price.estimate,
                    "bedrock_monthly_usd": r(bedrock),
                    **cost_evidence(profile),
                },
                signals_used=("invocations", "model_family"),
                signals_missing=("tokens_per_request",),
                effort="days",
                one_time_cost=one_time,
            ),
        )

    def _per_request(self, price: BedrockPrice) -> Decimal:
        tokens_in = Decimal(self.params.input_tokens_per_request) * price.input_per_million
        tokens_out = Decimal(self.params.output_tokens_per_request) * (price.output_per_million or Decimal(0))
        return (tokens_in + tokens_out) / MILLION

    @staticmethod
    def _bedrock_model(profile: ResourceProfile, ctx: RuleContext, family: ModelFamily) -> BedrockPrice | None:
        """The cheapest Bedrock model of the family at least as large as the served one (the dearest when the
        served model's size is unknown: the estimate errs towards a smaller saving)."""
        prices = ctx.assumptions.bedrock_prices_for_family(family.id)
        if not prices:
            return None
        params, basis = model_params(profile, ctx.families)

        def cost(p: BedrockPrice) -> Decimal:
            return p.input_per_million + (p.output_per_million or Decimal(0))

        if params is None or basis == "model_family":  # a family's typical size is no statement about this model
            return max(prices, key=cost)
        large_enough = [p for p in prices if (params_from_model_id(p.model_id) or Decimal(0)) >= params]
        return min(large_enough, key=cost) if large_enough else max(prices, key=cost)

    @staticmethod
    def _confidence(profile: ResourceProfile) -> Confidence:
        """Medium at best: tokens per request are assumed."""
        confidence: Confidence = "low" if family_guessed(profile) else "medium"
        return rate_confidence(profile, confidence)
