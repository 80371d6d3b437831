"""Credit programs matched to a company: eligibility from the data file, amounts and reasons."""

from __future__ import annotations

from decimal import Decimal

import pytest

from chipwise.catalog import get_credit_programs
from chipwise.plan.credits import CompanyProfile, CreditMatch, match_programs


def by_id(matches: list[CreditMatch]) -> dict[str, CreditMatch]:
    return {m.program: m for m in matches}


def test_every_program_in_the_data_file_is_answered_with_its_source() -> None:
    matches = match_programs(CompanyProfile(stage="seed", institutional_funding=False))
    assert {m.program for m in matches} == {p.id for p in get_credit_programs()}
    for match in matches:
        assert match.source and match.as_of and match.reason


def test_a_bootstrapped_company_gets_activate_founders_not_portfolio() -> None:
    matches = by_id(match_programs(CompanyProfile(stage="bootstrapped", institutional_funding=False)))
    assert matches["activate_founders"].eligible
    assert not matches["activate_portfolio"].eligible
    assert "Org ID" in matches["activate_portfolio"].reason


def test_a_funded_seed_company_with_a_provider_org_id_gets_portfolio() -> None:
    # Given a seed-stage, VC-backed company whose VC is an Activate Provider
    profile = CompanyProfile(stage="seed", institutional_funding=True, activate_provider_org_id="VC-42")
    matches = by_id(match_programs(profile))
    # Then Portfolio, with its amount from the data file; Founders is for self-funded companies
    portfolio = next(p for p in get_credit_programs() if p.id == "activate_portfolio")
    assert matches["activate_portfolio"].eligible
    assert matches["activate_portfolio"].max_amount_usd == portfolio.max_amount_usd
    assert not matches["activate_founders"].eligible


def test_eligible_programs_come_first_largest_first() -> None:
    matches = match_programs(CompanyProfile(stage="seed", institutional_funding=True, activate_provider_org_id="X1X"))
    flags = [m.eligible for m in matches]
    assert flags == sorted(flags, reverse=True)
    amounts = [m.max_amount_usd or Decimal(0) for m in matches if m.eligible]
    assert amounts == sorted(amounts, reverse=True)


@pytest.mark.parametrize("migrating, eligible", [(True, True), (False, False)])
def test_map_is_for_migrating_existing_workloads_only(migrating: bool, eligible: bool) -> None:
    profile = CompanyProfile(stage="series_a", institutional_funding=True, has_existing_workloads_to_migrate=migrating)
    assert by_id(match_programs(profile))["map"].eligible is eligible


def test_the_generative_ai_accelerator_needs_an_ai_first_company() -> None:
    profile = CompanyProfile(stage="seed", institutional_funding=True, ai_first=False)
    match = by_id(match_programs(profile))["genai_accelerator"]
    assert not match.eligible and "AI-first" in match.reason


def test_credits_are_never_presented_as_guaranteed() -> None:
    for match in match_programs(
        CompanyProfile(stage="seed", institutional_funding=True, activate_provider_org_id="X1X")
    ):
        if match.eligible:
            assert "never guaranteed" in match.reason
