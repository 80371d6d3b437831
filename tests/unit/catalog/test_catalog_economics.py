"""Assumptions figures and credit programs: typed, sourced, and consistent with the catalog."""

from __future__ import annotations

import math
from decimal import Decimal

import pytest

from chipwise.catalog import get_assumptions, get_catalog, get_credit_programs, get_model_families


def test_every_figure_has_a_source_and_date() -> None:
    economics = get_assumptions()
    figures = economics.figures()
    assert len(figures) >= 10
    for name, figure in figures.items():
        assert figure.source in economics.sources, name
        assert figure.unit, name


def test_representative_values() -> None:
    economics = get_assumptions()
    gain = economics.trainium_training_price_performance_gain
    assert (gain.value, gain.low, gain.high) == (Decimal("0.40"), Decimal("0.30"), Decimal("0.50"))
    assert economics.inferentia2_inference_throughput_ratio.value == Decimal("2.0")
    assert economics.hours_per_month.value == Decimal(730)
    assert economics.memory_headroom_factor.value == Decimal("1.2")
    assert economics.core_headroom_factor.value == Decimal("1.3")
    assert economics.engineer_week_cost_usd.value == Decimal(4000)


@pytest.mark.parametrize(("effort", "weeks"), [("none", 0), ("days", 1), ("weeks", 4), ("months", 12)])
def test_effort_to_engineer_weeks_and_cost(effort: str, weeks: int) -> None:
    economics = get_assumptions()
    assert economics.engineer_weeks(effort) == Decimal(weeks)  # type: ignore[arg-type]
    assert economics.porting_cost_usd(effort) == Decimal(weeks * 4000)  # type: ignore[arg-type]


def test_bedrock_prices_link_to_model_families() -> None:
    economics = get_assumptions()
    families = get_model_families()
    for price in economics.bedrock_on_demand.prices:
        assert price.source in economics.sources
        if price.model_family is not None:
            family = families.get(price.model_family)
            assert family is not None and family.bedrock_available, price.model_id
    assert economics.bedrock_price("meta.llama3-1-8b-instruct-v1:0") is not None
    assert economics.bedrock_price("nope") is None
    assert economics.bedrock_prices_for_family("llama")


def test_the_worked_inference_example_reproduces_from_the_catalog() -> None:
    # Given the seed's 10M requests/day example and the catalog's prices
    example = get_assumptions().worked_examples.inference_10m_requests_per_day
    hours = get_assumptions().hours_per_month.value
    catalog = get_catalog()
    per_second = example.requests_per_day / Decimal(86400)
    gpu_n = math.ceil(per_second / example.gpu_requests_per_second)
    neuron_n = math.ceil(per_second / example.neuron_requests_per_second)
    gpu_price, neuron_price = catalog.price(example.gpu_instance_type), catalog.price(example.neuron_instance_type)
    assert gpu_price is not None and neuron_price is not None
    gpu_month, neuron_month = gpu_n * gpu_price * hours, neuron_n * neuron_price * hours
    # Then the instance counts match and the money is within the stated tolerance
    assert (gpu_n, neuron_n) == (example.expected_gpu_instances, example.expected_neuron_instances)
    for got, expected in (
        (gpu_month, example.expected_gpu_monthly_usd),
        (neuron_month, example.expected_neuron_monthly_usd),
        (gpu_month - neuron_month, example.expected_monthly_saving_usd),
    ):
        assert abs(got - expected) / expected <= example.tolerance


def test_the_worked_training_example() -> None:
    example = get_assumptions().worked_examples.training_7b_100h_p4d
    price = get_catalog().price(example.instance_type)
    assert price is not None
    assert abs(price * example.hours - example.expected_cost_usd) / example.expected_cost_usd <= example.tolerance


def test_credit_programs() -> None:
    programs = {p.id: p for p in get_credit_programs()}
    assert set(programs) == {"activate_founders", "activate_portfolio", "genai_poc_funding", "genai_accelerator", "map"}
    assert programs["activate_founders"].max_amount_usd == Decimal(5000)
    assert programs["activate_portfolio"].max_amount_usd == Decimal(200000)
    assert programs["activate_portfolio"].eligibility.requires_provider_org_id
    assert programs["genai_accelerator"].max_amount_usd == Decimal(1000000)
    assert programs["genai_accelerator"].eligibility.ai_first
    assert programs["genai_poc_funding"].max_amount_usd == Decimal(50000)
    assert programs["map"].max_amount_usd is None
    assert programs["map"].eligibility.requires_existing_workload_migration
    for program in programs.values():
        assert program.url.startswith("https://") and program.source and program.as_of
    assert get_credit_programs() is not get_credit_programs()  # callers get their own list


def test_eligibility_rules() -> None:
    programs = {p.id: p for p in get_credit_programs()}
    founders = programs["activate_founders"].eligibility
    portfolio = programs["activate_portfolio"].eligibility
    bootstrapped = {"stage": "bootstrapped", "institutional_funding": False, "has_provider_org_id": False}
    assert founders.unmet(**bootstrapped, ai_first=True) == []  # type: ignore[arg-type]
    assert len(portfolio.unmet(**bootstrapped, ai_first=True)) == 3  # type: ignore[arg-type]
    vc_backed = {"stage": "seed", "institutional_funding": True, "has_provider_org_id": True, "ai_first": False}
    assert portfolio.unmet(**vc_backed) == []  # type: ignore[arg-type]
    assert founders.unmet(**vc_backed) == ["for bootstrapped or self-funded companies only"]  # type: ignore[arg-type]
    accelerator = programs["genai_accelerator"].eligibility
    assert accelerator.unmet(**vc_backed) == ["for AI-first startups only"]  # type: ignore[arg-type]
    migration = programs["map"].eligibility
    assert migration.unmet(**{**vc_backed, "migrating_existing_workload": True}) == []  # type: ignore[arg-type]
    assert migration.unmet(**{**vc_backed, "stage": "later"}) != []  # type: ignore[arg-type]
