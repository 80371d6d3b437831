"""Which AWS credit programs fit a company, as likely / possible / unlikely, with the reason and how strong the
source is (pure logic over data).

The programs, their amounts and who they are for live in the catalog's ``credit_programs.json`` (with source,
date and source strength); this module compares a :class:`CompanyProfile` with each program's eligibility.
Credits are never promised:

* **likely**: the company meets the published criteria, the criteria are on an AWS page, the company can apply
  by itself and nobody else selects first;
* **possible**: the criteria seem met, but a selection (a cohort), a partner's decision, an amount quoted only by
  third parties, or a fact we do not know stands between the company and the credits;
* **unlikely**: a published criterion is not met today.

A fact the company has not told us (``None``) never disqualifies and never makes a program likely.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date
from decimal import Decimal
from typing import Literal, get_args

from chipwise.catalog import CompanyStage, CreditProgram, get_credit_programs
from chipwise.render import money

Likelihood = Literal["likely", "possible", "unlikely"]
SourceStrength = Literal["aws_page", "third_party"]
LIKELIHOOD_ORDER: dict[Likelihood, int] = {"likely": 0, "possible": 1, "unlikely": 2}
SOURCE_WORDS: dict[SourceStrength, str] = {
    "aws_page": "Source: an AWS page.",
    "third_party": "Source: third-party pages only (no AWS page states it): treat it as unconfirmed.",
}


@dataclass(frozen=True)
class CompanyProfile:
    """What credit eligibility depends on. Unknown facts (None) never disqualify and never make a fit likely."""

    stage: CompanyStage | None
    institutional_funding: bool | None
    activate_provider_org_id: str | None = None
    ai_first: bool | None = True
    country: str | None = None
    monthly_spend_usd: Decimal | None = None
    has_existing_workloads_to_migrate: bool = False


@dataclass(frozen=True)
class CreditMatch:
    """One program for one company. ``max_amount_usd`` is None when the program has no fixed cap (MAP)."""

    program: str
    name: str
    eligible: bool  # no published criterion is known to be unmet
    likelihood: Likelihood
    max_amount_usd: Decimal | None
    reason: str
    source: str
    source_strength: SourceStrength
    as_of: date
    how_to_apply: str
    url: str
    estimate: bool


def amount_text(program: CreditProgram) -> str:
    if program.max_amount_usd is None:
        return "no fixed amount (scaled to committed spend)"
    if program.min_amount_usd is not None:
        return f"{money(program.min_amount_usd, 0)}–{money(program.max_amount_usd, 0)}"
    text = f"up to {money(program.max_amount_usd, 0)}"
    if program.typical_amount_usd is not None:
        text += f" (typically {money(program.typical_amount_usd, 0)})"
    return text


def unknown_facts(program: CreditProgram, profile: CompanyProfile) -> list[str]:
    """The facts this program's criteria need that the company has not given."""
    rules = program.eligibility
    unknown = []
    if profile.stage is None and len(set(rules.stages)) < len(get_args(CompanyStage)):
        unknown.append("the funding stage")
    if profile.institutional_funding is None and (rules.requires_institutional_funding or rules.self_funded_only):
        unknown.append("whether the company has raised institutional funding")
    if profile.ai_first is None and rules.ai_first:
        unknown.append("whether the product is AI-first")
    return unknown


def _doubts(program: CreditProgram, profile: CompanyProfile) -> list[str]:
    """What keeps a program whose criteria seem met from being likely."""
    rules = program.eligibility
    doubts = []
    unknown = unknown_facts(program, profile)
    if unknown:
        doubts.append("it depends on facts we do not have: " + ", ".join(unknown))
    if rules.competitive:
        doubts.append("awards are chosen among applicants")
    if rules.invite_only:
        doubts.append("it is by invitation")
    if rules.requires_partner:
        doubts.append("an AWS partner has to take the project on and file it")
    if program.source_strength == "third_party":
        doubts.append("only third-party pages describe it")
    elif program.estimate:
        doubts.append("the amount is an estimate")
    return doubts


def _reason(program: CreditProgram, likelihood: Likelihood, unmet: list[str], doubts: list[str]) -> str:
    if likelihood == "unlikely":
        return "Unlikely now: " + "; ".join(unmet) + ". " + SOURCE_WORDS[program.source_strength]
    parts = [
        "Likely: you meet its published criteria."
        if likelihood == "likely"
        else "Possible: your answers fit its criteria, but " + "; ".join(doubts) + ".",
        f"Amount: {amount_text(program)}.",
    ]
    if program.eligibility.max_company_age_years is not None:
        parts.append(f"The company must be under {program.eligibility.max_company_age_years} years old.")
    if program.caveat:
        parts.append(program.caveat)
    parts.append(SOURCE_WORDS[program.source_strength])
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
    doubts = _doubts(program, profile)
    likelihood: Likelihood = "unlikely" if unmet else "possible" if doubts else "likely"
    return CreditMatch(
        program=program.id,
        name=program.name,
        eligible=not unmet,
        likelihood=likelihood,
        max_amount_usd=program.max_amount_usd,
        reason=_reason(program, likelihood, unmet, doubts),
        source=program.source,
        source_strength=program.source_strength,
        as_of=program.as_of,
        how_to_apply=program.how_to_apply,
        url=program.url,
        estimate=program.estimate,
    )


def match_programs(profile: CompanyProfile) -> list[CreditMatch]:
    """Every program in the data file: likely first, then possible, then unlikely; larger amounts first."""
    matches = [match_program(program, profile) for program in get_credit_programs()]
    return sorted(matches, key=lambda m: (LIKELIHOOD_ORDER[m.likelihood], -(m.max_amount_usd or Decimal(0))))
