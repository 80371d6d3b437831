"""Cost per million generated tokens of what runs in production, where the serving endpoint publishes its tokens.

Two bases (both over the look-back window, at the resource's effective hourly rate):

- **allocation**: the whole bill of the run (every hour, idle ones included) ÷ the tokens generated;
- **usage**: the bill of the hours that generated tokens only ÷ the same tokens (what a fully used fleet would
  pay: the gap between the two is the price of idle capacity).

A migration target is compared at the same traffic: its monthly cost ÷ the tokens of a month at today's mean rate.
Without published token counts nothing is computed: the evidence says the figure is unknown.
"""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal

from chipwise.analyse.profiles import ResourceProfile
from chipwise.economics import HOURS_PER_MONTH, cost_per_million_observed
from chipwise.models.findings import EvidenceValue

NO_TOKEN_DATA = "not published: no generated-token counts for this resource, so its cost per token is unknown"
MEASURED = "measured: Chipwise/Serving GeneratedTokens"


@dataclass(frozen=True)
class TokenCosts:
    tokens: Decimal
    mean_per_hour: Decimal
    peak_per_hour: Decimal
    allocation_per_million: Decimal
    usage_per_million: Decimal

    def target_per_million(self, target_monthly_usd: Decimal) -> Decimal | None:
        """A target's $/1M tokens at today's traffic (its month ÷ a month of tokens at today's mean rate)."""
        return cost_per_million_observed(target_monthly_usd, self.mean_per_hour * HOURS_PER_MONTH)


def token_costs(profile: ResourceProfile) -> TokenCosts | None:
    """$/1M tokens on the allocation and usage bases (None without token data, a rate or any token)."""
    series = profile.signals.generated_tokens
    rate = profile.cost.hourly_rate
    count = profile.billed_count
    if series is None or rate is None or count is None or series.total <= 0 or profile.run_hours <= 0:
        return None
    tokens = Decimal(str(series.total))
    per_hour = rate * count
    allocation = cost_per_million_observed(per_hour * Decimal(str(profile.run_hours)), tokens)
    usage = cost_per_million_observed(per_hour * Decimal(series.nonzero_hours), tokens)
    if allocation is None or usage is None:
        return None
    return TokenCosts(
        tokens=tokens,
        mean_per_hour=tokens / Decimal(str(profile.run_hours)),
        peak_per_hour=Decimal(str(series.maximum)),
        allocation_per_million=allocation,
        usage_per_million=usage,
    )


def token_evidence(profile: ResourceProfile, target_monthly_usd: Decimal | None = None) -> dict[str, EvidenceValue]:
    """The evidence a serving finding records about tokens: the figures, or that they are unknown."""
    found = token_costs(profile)
    if found is None:
        return {"token_data": NO_TOKEN_DATA}
    target = found.target_per_million(target_monthly_usd) if target_monthly_usd is not None else None
    return {
        "token_data": MEASURED,
        "mean_tokens_per_hour": round(float(found.mean_per_hour), 1),
        "peak_tokens_per_hour": round(float(found.peak_per_hour), 1),
        "cost_per_million_tokens_allocation_usd": round(float(found.allocation_per_million), 4),
        "cost_per_million_tokens_usage_usd": round(float(found.usage_per_million), 4),
        "target_cost_per_million_tokens_usd": round(float(target), 4) if target is not None else None,
    }
