"""The finding document: the contract of `chipwise findings --json` and the scan document's `findings`."""

from datetime import datetime
from decimal import Decimal
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from chipwise.models.common import Action, Confidence, Effort, FindingStatus, MoneyStr, TargetPlatform, TotalsExclusion
from chipwise.models.evidence import FindingEvidence
from chipwise.models.resources import resource_key

EvidenceValue = float | int | str | bool | None


class RecommendationDoc(BaseModel):
    model_config = ConfigDict(defer_build=True, extra="forbid")

    action: Action
    target_platform: TargetPlatform | None = None
    target_instance_type: str | None = None
    target_count: int | None = None
    excluded_from_totals: TotalsExclusion | None = None
    software_path: str | None = None  # the Neuron stack the move assumes, and its status


class FindingDocument(BaseModel):
    model_config = ConfigDict(defer_build=True, extra="forbid")

    finding_id: str
    rule_id: str
    account_id: str
    region: str
    resource_id: str  # Chipwise's id of the resource: its ARN, or the endpoint's then #variant/<name> for a variant
    resource_arn: str | None = None  # an ARN AWS accepts (the endpoint's, for a variant)
    variant: str | None = None  # the production variant, for one variant of a multi-variant endpoint
    resource_kind: str
    resource_name: str
    instance_type: str | None
    instance_count: int
    monthly_cost_usd: MoneyStr
    estimated_monthly_savings_usd: MoneyStr
    measured_monthly_savings_usd: MoneyStr | None = None
    recommendation: RecommendationDoc
    confidence: Confidence
    signals_used: list[str] = []
    signals_missing: list[str] = []
    effort: Effort
    break_even_months: float | None
    summary: str
    evidence: dict[str, Any]
    status: FindingStatus
    first_seen: datetime
    last_seen: datetime


class FindingDraft(BaseModel):
    """What a rule concluded about one resource, before the lifecycle (ids, first/last seen, status) is applied."""

    model_config = ConfigDict(defer_build=True, frozen=True, extra="forbid")

    rule_id: str
    account_id: str
    region: str
    resource_arn: str  # an ARN AWS accepts (the endpoint's, for one variant of a multi-variant endpoint)
    resource_variant: str | None = None
    resource_kind: str
    resource_name: str
    instance_type: str | None
    instance_count: int
    monthly_cost_usd: Decimal
    estimated_monthly_savings_usd: Decimal
    recommendation: RecommendationDoc
    confidence: Confidence
    signals_used: tuple[str, ...] = ()
    signals_missing: tuple[str, ...] = ()
    effort: Effort = "none"
    break_even_months: float | None = None
    summary: str
    evidence: FindingEvidence = Field(default_factory=FindingEvidence)

    @property
    def resource_key(self) -> str:
        """Chipwise's id of the resource (:func:`chipwise.models.resources.resource_key`)."""
        return resource_key(self.resource_arn, self.resource_variant)
