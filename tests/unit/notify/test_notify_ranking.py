"""Every list of findings follows one order: counted before set apart, measured before estimated, largest first."""

from __future__ import annotations

from notify_factories import line

from chipwise.act.notify.digest import by_savings


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
