"""The economics: 730-hour months to the cent, cost per million, instances for a demand, break-even; and the
sources' worked examples reproduced within their tolerance."""

from __future__ import annotations

from decimal import Decimal

import pytest

from chipwise.analyse.economics import (
    break_even_months,
    cents,
    cost_per_million,
    cost_per_million_observed,
    instances_needed,
    monthly_cost,
    per_month,
    porting_cost,
)
from chipwise.catalog import get_catalog, get_economics


def test_monthly_cost_is_730_hours_to_the_cent() -> None:
    assert monthly_cost(Decimal("0.7582")) == Decimal("553.49")  # 553.486
    assert monthly_cost(Decimal("21.50"), 2) == Decimal("31390.00")
    assert cents(Decimal("0.005")) == Decimal("0.01")  # half-up


def test_a_window_amount_scales_to_a_month() -> None:
    # $1,000 over 14 days (336 h) is 1000 x 730 / 336 = $2,172.62 a month
    assert per_month(Decimal(1000), 336) == Decimal("2172.62")
    with pytest.raises(ValueError):
        per_month(Decimal(1), 0)


def test_cost_per_million_follows_the_published_formula() -> None:
    # (1e6 / 40 req/s) x (0.7582 / 3600) = $5.2653 per million requests
    assert cost_per_million(Decimal("0.7582"), Decimal(40)).quantize(Decimal("0.0001")) == Decimal("5.2653")
    assert cost_per_million_observed(Decimal("722.70"), Decimal(0)) is None
    assert cost_per_million_observed(Decimal(100), Decimal(2_000_000)) == Decimal(50)


def test_instances_and_break_even() -> None:
    assert instances_needed(Decimal("115.74"), Decimal(20)) == 6
    assert instances_needed(Decimal(1), Decimal(20)) == 1
    assert break_even_months(Decimal(4000), Decimal("16071.68")) == 0.25
    assert break_even_months(Decimal(0), Decimal(10)) == 0.0
    assert break_even_months(Decimal(4000), Decimal(0)) is None


def test_porting_cost_comes_from_the_economics_file() -> None:
    economics = get_economics()
    assert (
        porting_cost(economics, "days") == economics.effort_engineer_weeks.days * economics.engineer_week_cost_usd.value
    )
    assert porting_cost(economics, "none") == 0


def test_the_sources_inference_example_is_reproduced() -> None:
    # Given 10 M requests a day: g5.xlarge at ~20 req/s vs inf2.xlarge at ~40 req/s (economics.json)
    example = get_economics().worked_examples.inference_10m_requests_per_day
    catalog = get_catalog()
    demand = example.requests_per_day / 86_400
    gpu_count = instances_needed(demand, example.gpu_requests_per_second)
    neuron_count = instances_needed(demand, example.neuron_requests_per_second)
    gpu = monthly_cost(catalog.price(example.gpu_instance_type) or Decimal(0), gpu_count)
    neuron = monthly_cost(catalog.price(example.neuron_instance_type) or Decimal(0), neuron_count)
    # Then the counts match and the money is within the stated tolerance
    assert (gpu_count, neuron_count) == (example.expected_gpu_instances, example.expected_neuron_instances)
    for got, want in (
        (gpu, example.expected_gpu_monthly_usd),
        (neuron, example.expected_neuron_monthly_usd),
        (gpu - neuron, example.expected_monthly_saving_usd),
    ):
        assert abs(got - want) / want <= example.tolerance


def test_the_sources_training_example_is_reproduced() -> None:
    example = get_economics().worked_examples.training_7b_100h_p4d
    cost = cents((get_catalog().price(example.instance_type) or Decimal(0)) * example.hours)
    assert abs(cost - example.expected_cost_usd) / example.expected_cost_usd <= example.tolerance
