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


def test_likely_programs_come_first_then_possible_then_unlikely_larger_first() -> None:
    matches = match_programs(CompanyProfile(stage="seed", institutional_funding=True, activate_provider_org_id="X1X"))
    order = {"likely": 0, "possible": 1, "unlikely": 2}
    ranks = [order[m.likelihood] for m in matches]
    assert ranks == sorted(ranks)
    for level in order:
        amounts = [m.max_amount_usd or Decimal(0) for m in matches if m.likelihood == level]
        assert amounts == sorted(amounts, reverse=True)


def test_an_ai_first_seed_company_is_likely_only_for_what_an_aws_page_states() -> None:
    # Given an AI-first, self-funded seed company (the case that used to headline "up to $1,000,000")
    matches = by_id(match_programs(CompanyProfile(stage="seed", institutional_funding=False)))
    # Then only Activate Founders (on AWS's own page, self-serve) is likely
    assert [m.program for m in matches.values() if m.likelihood == "likely"] == ["activate_founders"]
    assert matches["activate_founders"].source_strength == "aws_page"
    # and the accelerator's $1M and the PoC funding are only possible, each saying why and whose page says so
    accelerator, poc = matches["genai_accelerator"], matches["genai_poc_funding"]
    assert accelerator.likelihood == poc.likelihood == "possible"
    assert "chosen among applicants" in accelerator.reason and "third-party pages only" in accelerator.reason
    assert accelerator.source_strength == poc.source_strength == "third_party"
    assert "partner" in poc.reason
    # and Portfolio is unlikely without funding and an Org ID
    assert matches["activate_portfolio"].likelihood == "unlikely"


def test_unknown_company_facts_make_a_program_possible_never_likely_nor_unlikely() -> None:
    matches = by_id(match_programs(CompanyProfile(stage=None, institutional_funding=None, ai_first=None)))
    founders = matches["activate_founders"]
    assert founders.likelihood == "possible" and founders.eligible
    assert "funding stage" in founders.reason and "institutional funding" in founders.reason
    assert matches["genai_accelerator"].likelihood == "possible"
    assert "AI-first" in matches["genai_accelerator"].reason


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
        if match.likelihood != "unlikely":
            assert "never guaranteed" in match.reason


def test_where_aws_s_own_pages_disagree_the_reason_says_so() -> None:
    founders = by_id(match_programs(CompanyProfile(stage="series_a", institutional_funding=False)))["activate_founders"]
    assert founders.likelihood == "likely" and "pages disagree" in founders.reason and "Series A" in founders.reason
