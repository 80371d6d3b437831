"""AWS credit and funding programs (``credit_programs.json``): amounts, eligibility as data, provenance."""

from datetime import date
from decimal import Decimal
from functools import lru_cache
from typing import Literal, Self

from pydantic import Field, model_validator

from chipwise.catalog.loading import DataDocument, FrozenData, load_document

CompanyStage = Literal["bootstrapped", "pre_seed", "seed", "series_a", "series_b", "later"]
CreditProgramId = Literal["activate_founders", "activate_portfolio", "genai_poc_funding", "genai_accelerator", "map"]


class Eligibility(FrozenData):
    """Who a credit program is for, as data."""

    stages: tuple[CompanyStage, ...] = Field(min_length=1)
    requires_provider_org_id: bool
    requires_institutional_funding: bool
    self_funded_only: bool
    ai_first: bool = Field(description="Only for AI-first startups.")
    requires_existing_workload_migration: bool
    requires_partner: bool = Field(description="Filed or run by an AWS partner (not a blocker, a route).")
    invite_only: bool
    competitive: bool = Field(False, description="Awards are chosen among applicants (a cohort, a committee).")
    min_monthly_spend_usd: Decimal | None = Field(ge=0)
    max_company_age_years: int | None = Field(ge=1)
    notes: str | None = None

    def unmet(
        self,
        *,
        stage: CompanyStage | None,
        institutional_funding: bool | None,
        has_provider_org_id: bool,
        ai_first: bool | None,
        migrating_existing_workload: bool = False,
        monthly_spend_usd: Decimal | None = None,
    ) -> list[str]:
        """Why a company does not qualify (empty when it may). An unknown fact (None) never disqualifies."""
        reasons: list[str] = []
        if stage is not None and stage not in self.stages:
            reasons.append(f"open to {', '.join(self.stages)} companies, not {stage}")
        if self.requires_provider_org_id and not has_provider_org_id:
            reasons.append("needs an Org ID from an AWS Activate Provider (VC, accelerator, angel group)")
        if self.requires_institutional_funding and institutional_funding is False:
            reasons.append("needs institutional funding (VC, accelerator or angel group)")
        if self.self_funded_only and institutional_funding:
            reasons.append("for bootstrapped or self-funded companies only")
        if self.ai_first and ai_first is False:
            reasons.append("for AI-first startups only")
        if self.requires_existing_workload_migration and not migrating_existing_workload:
            reasons.append("only for migrating existing workloads, not new builds")
        if self.invite_only:
            reasons.append("by invitation only")
        minimum = self.min_monthly_spend_usd
        if minimum is not None and monthly_spend_usd is not None and monthly_spend_usd < minimum:
            reasons.append(f"needs at least ${self.min_monthly_spend_usd} a month of AWS spend")
        return reasons


class CreditProgram(FrozenData):
    """One AWS credit or funding program, with its amount, eligibility and provenance."""

    id: CreditProgramId
    name: str
    max_amount_usd: Decimal | None = Field(gt=0, description="None: no fixed cap (scaled to spend).")
    min_amount_usd: Decimal | None = Field(gt=0)
    typical_amount_usd: Decimal | None = Field(gt=0)
    amount_note: str
    eligibility: Eligibility
    how_to_apply: str
    url: str
    source: str
    as_of: date
    estimate: bool = Field(description="The amount rests on third-party pages only.")
    caveat: str | None = Field(None, description="What the sources disagree on, said wherever the program fits.")
    source_strength: Literal["aws_page", "third_party"] = Field(
        description="aws_page: the program and amount are on an AWS page (or an AWS-authored copy); third_party: "
        "only other sites describe it."
    )

    @model_validator(mode="after")
    def _amounts(self) -> Self:
        amounts = [a for a in (self.min_amount_usd, self.typical_amount_usd, self.max_amount_usd) if a is not None]
        if amounts != sorted(amounts):
            raise ValueError(f"{self.id}: amounts must satisfy min <= typical <= max")
        return self


class _CreditProgramsDocument(DataDocument):
    programs: tuple[CreditProgram, ...]

    @model_validator(mode="after")
    def _unique(self) -> Self:
        ids = [p.id for p in self.programs]
        if len(ids) != len(set(ids)):
            raise ValueError("credit program ids must be unique")
        return self


@lru_cache(maxsize=1)
def _credit_programs() -> tuple[CreditProgram, ...]:
    return load_document(_CreditProgramsDocument, "credit_programs.json").programs


def get_credit_programs() -> list[CreditProgram]:
    """The shipped ``credit_programs.json`` (read once), in file order."""
    return list(_credit_programs())


get_credit_programs.cache_clear = _credit_programs.cache_clear  # type: ignore[attr-defined]
