"""Which AWS credit programs a company can apply to, with the amount and the reason (pure logic over data).

The programs, their amounts and who they are for live in the catalog's ``credit_programs.json`` (with source
and date); this module only compares a :class:`CompanyProfile` with each program's eligibility. Credits are
never promised: an eligible match means "apply", and the reason says what the decision will rest on.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date
from decimal import Decimal

from chipwise.catalog import CompanyStage, CreditProgram, get_credit_programs
from chipwise.render import money


@dataclass(frozen=True)
class CompanyProfile:
    """What credit eligibility depends on. Unknown facts (None) never disqualify."""

    stage: CompanyStage
    institutional_funding: bool
    activate_provider_org_id: str | None = None
    ai_first: bool = True
    country: str | None = None
    monthly_spend_usd: Decimal | None = None
    has_existing_workloads_to_migrate: bool = False


@dataclass(frozen=True)
class CreditMatch:
    """One program for one company. ``max_amount_usd`` is None when the program has no fixed cap (MAP)."""

    program: str
    name: str
    eligible: bool
    max_amount_usd: Decimal | None
    reason: str
    source: str
    as_of: date
    how_to_apply: str
    url: str
    estimate: bool


def _amount_text(program: CreditProgram) -> str:
    if program.max_amount_usd is None:
        return "no fixed amount (scaled to committed spend)"
    if program.min_amount_usd is not None:
        return f"{money(program.min_amount_usd, 0)}–{money(program.max_amount_usd, 0)}"
    text = f"up to {money(program.max_amount_usd, 0)}"
    if program.typical_amount_usd is not None:
        text += f" (typically {money(program.typical_amount_usd, 0)})"
    return text


def _eligible_reason(program: CreditProgram) -> str:
    parts = [f"You match its published criteria: {_amount_text(program)}."]
    if program.eligibility.requires_partner:
        parts.append("It is filed by an AWS partner; the referral draft in this plan starts that.")
    if program.eligibility.max_company_age_years is not None:
        parts.append(f"The company must be under {program.eligibility.max_company_age_years} years old.")
    if program.estimate:
        parts.append("The amount comes from third-party pages only: confirm it before relying on it.")
    parts.append("AWS decides; credits are never guaranteed.")
    return " ".join(parts)


def match_program(program: CreditProgram, profile: CompanyProfile) -> CreditMatch:
    unmet = program.eligibility.unmet(
        stage=profile.stage,
        institutional_funding=profile.institutional_funding,
        has_provider_org_id=bool(profile.activate_provider_org_id),
        ai_first=profile.ai_first,
        migrating_existing_workload=profile.has_existing_workloads_to_migrate,
        monthly_spend_usd=profile.monthly_spend_usd,
    )
    reason = _eligible_reason(program) if not unmet else "Not now: " + "; ".join(unmet) + "."
    return CreditMatch(
        program=program.id,
        name=program.name,
        eligible=not unmet,
        max_amount_usd=program.max_amount_usd,
        reason=reason,
        source=program.source,
        as_of=program.as_of,
        how_to_apply=program.how_to_apply,
        url=program.url,
        estimate=program.estimate,
    )


def match_programs(profile: CompanyProfile) -> list[CreditMatch]:
    """Every program in the data file, eligible ones first (largest amount first), each with its reason."""
    matches = [match_program(program, profile) for program in get_credit_programs()]
    return sorted(matches, key=lambda m: (not m.eligible, -(m.max_amount_usd or Decimal(0))))
