"""The finding document: the contract of `chipwise findings --json` and the scan document's `findings`."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from pydantic import BaseModel, ConfigDict

from chipwise.models.common import Action, Confidence, Effort, FindingStatus, MoneyStr, TargetPlatform
from chipwise.store.tables import Finding


class RecommendationDoc(BaseModel):
    model_config = ConfigDict(extra="forbid")

    action: Action
    target_platform: TargetPlatform | None = None
    target_instance_type: str | None = None
    target_count: int | None = None


class FindingDocument(BaseModel):
    model_config = ConfigDict(extra="forbid")

    finding_id: str
    rule_id: str
    account_id: str
    region: str
    resource_id: str
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

    @classmethod
    def from_row(cls, row: Finding) -> FindingDocument:
        return cls(
            finding_id=row.id,
            rule_id=row.rule_id,
            account_id=row.account_id,
            region=row.region,
            resource_id=row.resource_arn,
            resource_kind=row.resource_kind,
            resource_name=row.resource_name,
            instance_type=row.instance_type,
            instance_count=row.instance_count,
            monthly_cost_usd=row.monthly_cost_usd,
            estimated_monthly_savings_usd=row.estimated_monthly_savings_usd,
            measured_monthly_savings_usd=row.measured_monthly_savings_usd,
            recommendation=RecommendationDoc.model_validate(row.recommendation),
            confidence=row.confidence,  # type: ignore[arg-type]
            signals_used=list(row.signals_used),
            signals_missing=list(row.signals_missing),
            effort=row.effort,  # type: ignore[arg-type]
            break_even_months=row.break_even_months,
            summary=row.summary,
            evidence=dict(row.evidence),
            status=row.status,  # type: ignore[arg-type]
            first_seen=row.first_seen,
            last_seen=row.last_seen,
        )
