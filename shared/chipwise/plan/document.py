"""The plan document: what ``POST /intake`` returns, what is stored, emailed and rendered.

Money is a Decimal, serialised as a decimal string ("4406.28"); a month is 730 hours unless the workload says
otherwise. Every figure the planner used is listed in ``sources`` with where it came from and when.
"""

from __future__ import annotations

from datetime import datetime
from decimal import Decimal
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, PlainSerializer

from chipwise.models.common import Confidence, Effort, MoneyStr

RecommendedPlatform = Literal["trainium", "inferentia", "bedrock", "gpu"]

# A unit cost (per million tokens can be a fraction of a cent): a Decimal serialised with 4 decimals.
RateStr = Annotated[Decimal, PlainSerializer(lambda v: f"{v.quantize(Decimal('0.0001'))}", return_type=str)]


class _Doc(BaseModel):
    model_config = ConfigDict(extra="forbid")


class FigureSource(_Doc):
    """One external figure the plan relied on (a price, a ratio, a credit amount)."""

    figure: str
    value: str
    source: str
    as_of: str | None = None


class WorkloadPlan(_Doc):
    name: str
    stage: Literal["training", "inference"]
    action: Literal["move", "keep"] = Field(description="move: change where or how it runs; keep: leave it as is.")
    recommended_platform: RecommendedPlatform
    recommended_instance_type: str | None = None
    recommended_count: int | None = None
    current_instance_type: str | None = None
    current_count: int | None = None
    current_monthly_cost_usd: MoneyStr
    projected_monthly_cost_usd: MoneyStr
    monthly_savings_usd: MoneyStr
    one_time_savings_usd: MoneyStr | None = Field(None, description="For one-off jobs: the saving on the one run.")
    current_cost_per_million_requests_usd: RateStr | None = None
    projected_cost_per_million_requests_usd: RateStr | None = None
    current_cost_per_million_tokens_usd: RateStr | None = None
    projected_cost_per_million_tokens_usd: RateStr | None = None
    current_cost_per_trained_model_usd: MoneyStr | None = None
    projected_cost_per_trained_model_usd: MoneyStr | None = None
    porting_effort: Effort
    porting_cost_usd: MoneyStr
    break_even_months: float | None = Field(None, description="Porting cost / monthly saving; null: never pays back.")
    confidence: Confidence
    rationale: str
    assumptions: list[str] = Field(default_factory=list)


class CreditLine(_Doc):
    program: str
    name: str
    eligible: bool
    max_amount_usd: MoneyStr | None = Field(description="Null when the program has no fixed cap (MAP).")
    reason: str
    how_to_apply: str
    source: str
    as_of: str | None = None


class PlanTotals(_Doc):
    current_monthly_cost_usd: MoneyStr
    projected_monthly_cost_usd: MoneyStr
    monthly_savings_usd: MoneyStr
    one_time_savings_usd: MoneyStr
    porting_cost_usd: MoneyStr
    payback_months: float | None
    largest_eligible_credit_usd: MoneyStr | None


class PlanDocument(_Doc):
    plan_id: str
    created_at: datetime
    company: str
    country: str
    region: str
    workloads: list[WorkloadPlan]
    credits: list[CreditLine]
    total_monthly_savings_usd: MoneyStr
    totals: PlanTotals
    steps: list[str]
    assumptions: list[str] = Field(default_factory=list)
    sources: list[FigureSource] = Field(default_factory=list)
    referral_draft: dict[str, Any] = Field(default_factory=dict)
