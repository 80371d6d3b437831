"""Every list of findings follows one order: counted before set apart, measured before estimated, largest first."""

from __future__ import annotations

from decimal import Decimal

from notify_factories import line

from chipwise.act.notify.digest import by_savings, waste_by_rule


def test_a_measured_saving_ranks_above_a_larger_estimate_and_quotes_come_last() -> None:
    # Given an estimate of $2,400.50, a measurement of $310, a quote-needed $9,000 and an estimate of $554.80
    lines = [
        line("estimate-big", "2400.50"),
        line("measured-small", "310", measured=True),
        line("needs-quote", "9000", excluded_from_totals="quote_needed"),
        line("estimate-small", "554.80"),
    ]
    # When ranked
    ranked = [item.resource_name for item in by_savings(lines)]
    # Then the measurement leads, estimates follow by size, and the saving outside the totals closes the list
    assert ranked == ["measured-small", "estimate-big", "estimate-small", "needs-quote"]


def test_rule_bars_add_up_only_what_the_headline_counts() -> None:
    # Given two estimates of one rule ($2,400.50 + $554.80), a quote-needed $9,000 of the same rule and a
    # committed-hours $800 of another
    lines = [
        line("a", "2400.50"),
        line("b", "554.80"),
        line("quote", "9000", excluded_from_totals="quote_needed"),
        line("committed", "800", rule="trainium_serving_inference", excluded_from_totals="committed"),
    ]
    # When the chart's bars are built
    bars = waste_by_rule(lines)
    # Then one bar: 2,400.50 + 554.80 = $2,955.30 from 2 findings; the set-apart savings are in no bar
    assert [(bar.rule_id, bar.findings, bar.monthly_savings_usd) for bar in bars] == [
        ("gpu_inference_portable", 2, Decimal("2955.30"))
    ]
