"""The sources' worked example must come out right (domain.md, seed 004, issue 7)."""

from __future__ import annotations

from decimal import Decimal

import pytest
from plan_factories import only, plan_for, workload

from chipwise.catalog import get_assumptions, get_catalog


def within(actual: Decimal, expected: str, tolerance: str = "0.02") -> bool:
    return abs(actual - Decimal(expected)) <= Decimal(expected) * Decimal(tolerance)


def test_at_730_hours_six_g5_become_three_inf2() -> None:
    # Given 10 M requests/day at 20 req/s per g5.xlarge on six instances
    # When the plan is made (a month is 730 hours)
    plan = only(plan_for(workload()))
    # Then 3 × inf2.xlarge at about 40 req/s replace 6 × g5.xlarge: ≈ $4,406 vs ≈ $1,660
    assert (plan.recommended_platform, plan.recommended_instance_type) == ("inferentia", "inf2.xlarge")
    assert (plan.current_count, plan.recommended_count) == (6, 3)
    assert within(plan.current_monthly_cost_usd, "4406")
    assert within(plan.projected_monthly_cost_usd, "1660")
    # and the figures are exactly the catalog's prices x 730 h
    catalog = get_catalog()
    assert plan.current_monthly_cost_usd == (6 * catalog.require("g5.xlarge").price_usd_per_hour * 730).quantize(
        Decimal("0.01")
    )
    assert plan.monthly_savings_usd == plan.current_monthly_cost_usd - plan.projected_monthly_cost_usd


def test_at_30_day_months_the_sources_figures_hold_within_two_percent() -> None:
    # Given the same workload over a 30-day month (720 hours), as the sources count it
    plan = only(plan_for(workload(hours_per_month=720)))
    # Then $4,363 vs $1,643 and a saving of about $2,720, each within 2 %
    assert within(plan.current_monthly_cost_usd, "4363")
    assert within(plan.projected_monthly_cost_usd, "1643")
    assert within(plan.monthly_savings_usd, "2720")


def test_the_throughput_ratio_is_the_catalogs_data_value_with_a_source() -> None:
    # Given the catalog's inf2-vs-GPU throughput ratio (a data value, not a literal in the planner)
    ratio = get_assumptions().inferentia2_inference_throughput_ratio
    # When the plan is made
    plan = plan_for(workload())
    # Then the plan lists it among its sources, with where it comes from
    listed = [s for s in plan.sources if s.figure.lower().startswith("inferentia2 inference throughput ratio")]
    assert listed and listed[0].value.startswith(str(ratio.value))
    assert listed[0].source.startswith("Chipwise advisory assumption")  # stated as an assumption, never a local file
    assert "/" not in listed[0].source.split("http")[0]
    # and ~40 req/s per inf2.xlarge is the current 20 req/s x that ratio
    assert "40.0 requests/s each" in only(plan).rationale


@pytest.mark.parametrize("per_second, expected", [(Decimal(10), 6), (Decimal(40), 2)])
def test_instance_counts_follow_the_throughput(per_second: Decimal, expected: int) -> None:
    # Given a different measured throughput per GPU
    plan = only(plan_for(workload(current_throughput_per_instance=per_second, instance_count=None)))
    # Then the inf2 fleet is sized from it: ceil(115.7 req/s / (throughput x 2))
    assert plan.recommended_count == expected


def test_cost_per_million_requests_uses_the_actual_volume() -> None:
    plan = only(plan_for(workload(tokens_per_request=500)))
    requests = Decimal(10_000_000) * Decimal(730) / 24
    expected = (plan.current_monthly_cost_usd / requests * 1_000_000).quantize(Decimal("0.0001"))
    assert plan.current_cost_per_million_requests_usd is not None
    assert abs(plan.current_cost_per_million_requests_usd - expected) < Decimal("0.001")
    assert plan.projected_cost_per_million_tokens_usd is not None
    assert plan.projected_cost_per_million_tokens_usd < plan.current_cost_per_million_tokens_usd  # type: ignore[operator]
