"""Every list of findings follows one order: counted before set apart, by 12-month net value, measured before
estimated at equal value."""

from __future__ import annotations

from decimal import Decimal

from notify_factories import line

from chipwise.notify.digest import by_savings, waste_by_rule
from chipwise.render import render


def test_findings_rank_by_twelve_month_net_value_and_quotes_come_last() -> None:
    # Given migrations (1 engineer-week of porting, $4,000) saving an estimated $2,400.50 and $554.80, a measured
    # $310, an idle endpoint to delete ($600, no porting) and a quote-needed $9,000
    lines = [
        line("estimate-big", "2400.50"),
        line("measured-small", "310", measured=True),
        line("needs-quote", "9000", excluded_from_totals="quote_needed"),
        line("estimate-small", "554.80"),
        line("idle", "600", action="delete", effort="none", rule="gpu_idle"),
    ]
    # When ranked
    ranked = [item.resource_name for item in by_savings(lines)]
    # Then by saving × 12 − porting: 24,806.00; 7,200.00 (the quick win above the smaller project); 2,657.60;
    # −280.00; and the saving outside the totals closes the list
    assert ranked == ["estimate-big", "idle", "estimate-small", "measured-small", "needs-quote"]


def test_a_measurement_ranks_above_an_estimate_of_equal_value() -> None:
    lines = [line("estimated", "500"), line("measured", "500", measured=True)]
    assert [item.resource_name for item in by_savings(lines)] == ["measured", "estimated"]


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


def test_a_line_not_counted_shows_why_and_no_next_step_or_confidence() -> None:
    quote = line("needs-quote", "9000", excluded_from_totals="quote_needed")
    counted = line("counted", "900")
    assert (quote.apart_reason, counted.apart_reason) == ("needs a price quote", "")
    text = render("slack/finding.mrkdwn.j2", f=quote)
    assert "not counted: needs a price quote" in text and "confidence" not in text and "Migrate" not in text
    assert "high confidence" in render("slack/finding.mrkdwn.j2", f=counted)
