"""The one economics module: money rounding and formatting, 730-hour months, cost per million, instances for a
demand, porting cost and break-even, percentiles, UTC parsing; the sources' worked examples reproduced within
their tolerance; and one workload priced by the planner and by the rules with the same figures."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta, timezone
from decimal import Decimal

import pytest

from chipwise.catalog import get_assumptions, get_catalog
from chipwise.economics import (
    break_even_months,
    cents,
    cost_per_million,
    cost_per_million_observed,
    instances_needed,
    monthly_cost,
    parse_day,
    parse_utc,
    per_month,
    percentile,
    porting_cost,
    round_money,
    usd,
    utc,
)


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
    # 4,000 / 16,071.68 = 0.2489 months: rounded up to a tenth, never a sooner payback than the real one
    assert break_even_months(Decimal(4000), Decimal("16071.68")) == 0.3
    assert break_even_months(Decimal(4000), Decimal(1000)) == 4.0  # exact tenths stay as they are
    assert break_even_months(Decimal(1), Decimal(3)) == 0.4  # 0.333...
    assert break_even_months(Decimal(0), Decimal(10)) == 0.0
    assert break_even_months(Decimal(4000), Decimal(0)) is None
    assert break_even_months(Decimal(4000), Decimal(-5)) is None


def test_porting_cost_comes_from_the_assumptions_file() -> None:
    economics = get_assumptions()
    weeks, weekly = economics.effort_engineer_weeks.days, economics.engineer_week_cost_usd.value
    assert porting_cost(weeks, weekly) == weeks * weekly
    assert economics.porting_cost_usd("days") == weeks * weekly
    assert economics.porting_cost_usd("none") == 0


@pytest.mark.parametrize(
    ("amount", "places", "rounded"),
    [
        ("0.005", 2, "0.01"),
        ("0.015", 2, "0.02"),
        ("-0.005", 2, "-0.01"),
        ("2.675", 2, "2.68"),
        ("5.26525", 4, "5.2653"),
    ],
)
def test_money_rounds_half_up(amount: str, places: int, rounded: str) -> None:
    # half-up, unlike Python's round() and format(), which round half to even (2.675 -> 2.67 in float)
    assert round_money(Decimal(amount), places) == Decimal(rounded)


def test_money_formatting() -> None:
    assert usd(Decimal("1234.565")) == "$1,234.57"
    assert usd(Decimal("-15141.5")) == "-$15,141.50"
    assert usd(16072, 0) == "$16,072"
    assert usd("0.0004", 4) == "$0.0004"


@pytest.mark.parametrize(
    ("values", "q", "expected"),
    [
        ([5.0], 95, 5.0),  # one value is every percentile
        ([1.0, 2.0], 50, 1.5),
        ([60.0, 65.0, 90.0], 95, 87.5),  # rank 1.9: 65 + 0.9 x 25
        ([1.0, 2.0, 3.0, 4.0], 0, 1.0),
        ([1.0, 2.0, 3.0, 4.0], 100, 4.0),
        ([1.0, 2.0, 3.0, 4.0], 25, 1.75),
    ],
)
def test_percentile_interpolates_between_ranks(values: list[float], q: float, expected: float) -> None:
    assert percentile(values, q) == pytest.approx(expected)


def test_percentile_of_decimals_stays_exact() -> None:
    assert percentile([Decimal(180), Decimal(200), Decimal(250)], 95) == Decimal(245)
    with pytest.raises(ValueError, match="empty"):
        percentile([], 50)
    with pytest.raises(ValueError, match="outside"):
        percentile([1.0], 101)


@pytest.mark.parametrize(
    "text",
    [
        "2026-11-20T10:00:00Z",
        "2026-11-20T10:00:00+00:00",
        "2026-11-20T11:00:00+01:00",
        "2026-11-20T10:00:00",
        " 2026-11-20T10:00:00z ",
    ],
)
def test_timestamps_parse_to_aware_utc(text: str) -> None:
    # a naive timestamp is taken as UTC (AWS APIs and the store write UTC)
    assert parse_utc(text) == datetime(2026, 11, 20, 10, tzinfo=UTC)


def test_dates_and_bad_timestamps() -> None:
    assert parse_utc("2026-11-20") == datetime(2026, 11, 20, tzinfo=UTC)
    assert parse_day("2026-11-20") == date(2026, 11, 20)
    assert parse_day(datetime(2026, 11, 20, 23, 30, tzinfo=timezone(timedelta(hours=-5)))) == date(2026, 11, 21)
    assert utc(datetime(2026, 11, 20, 10)) == datetime(2026, 11, 20, 10, tzinfo=UTC)
    for bad in ("", "yesterday", "2026-13-01T00:00:00Z"):
        with pytest.raises(ValueError):
            parse_utc(bad)


def test_the_sources_inference_example_is_reproduced() -> None:
    # Given 10 M requests a day: g5.xlarge at ~20 req/s vs inf2.xlarge at ~40 req/s (assumptions.json)
    example = get_assumptions().worked_examples.inference_10m_requests_per_day
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
    example = get_assumptions().worked_examples.training_7b_100h_p4d
    cost = cents((get_catalog().price(example.instance_type) or Decimal(0)) * example.hours)
    assert abs(cost - example.expected_cost_usd) / example.expected_cost_usd <= example.tolerance
