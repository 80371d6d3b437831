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
    model_config = ConfigDict(defer_build=True, extra="forbid")


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
    software_path: str | None = Field(
        None, description="A Neuron target: the stack it runs and its status (AWS Neuron documentation)."
    )
    conflicts: list[str] = Field(
        default_factory=list,
        description="Answers that cannot all be true (a model larger than the stated fleet's memory, traffic the "
        "stated fleet cannot serve): the plan asks the founder to check them, at low confidence.",
    )


class CreditLine(_Doc):
    program: str
    name: str
    eligible: bool = Field(description="No published criterion is known to be unmet (not a promise: see likelihood).")
    likelihood: Literal["likely", "possible", "unlikely"] = Field(
        description="likely: criteria met, on an AWS page, self-serve; possible: a selection, a partner, a "
        "third-party source or an unknown fact decides; unlikely: a criterion is not met today."
    )
    source_strength: Literal["aws_page", "third_party"]
    amount_is_estimate: bool = Field(description="The amount rests on third-party pages only.")
    max_amount_usd: MoneyStr | None = Field(description="Null when the program has no fixed cap (MAP).")
    amount: str = Field(description='The amount as the program states it ("$1,000–$5,000", "up to $200,000").')
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
    likely_credit_usd: MoneyStr | None = Field(
        description="The largest amount among the likely programs only (never a possible program's ceiling)."
    )


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
    referral_draft: dict[str, Any] = Field(
        default_factory=dict,
        description="The partner-referral draft (contact data included): offline plans only; a plan served or "
        "stored by the intake never carries it (see public()).",
    )

    def public(self) -> PlanDocument:
        """The plan as its page and the API show it: no contact data, no account id (the referral draft holds
        both and goes to the drafts table, for the advisory team, only when the founder asks for a referral)."""
        return self.model_copy(update={"referral_draft": {}})
