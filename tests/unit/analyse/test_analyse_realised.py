"""Realised savings from stored daily costs: before the change against after it, the days of the change left out."""

from __future__ import annotations

from datetime import date, timedelta
from decimal import Decimal

from chipwise.analyse.realised import realised_saving

START = date(2026, 11, 1)
WINDOW = {START + timedelta(days=n) for n in range(20)}  # 1-20 November stored
PER_INSTANCE_DAY = Decimal("18.2")  # ml.inf2.xlarge: $0.7583/h x 24 h, rounded for the example


def test_a_resource_removed_mid_window_realises_its_share_of_the_usage_type() -> None:
    # Given two ml.inf2.xlarge endpoints (one instance each) billed 1-9 November, one deleted on the 10th; the scan
    # of the 9th still saw the idle finding, the scan of the 11th resolved it (the 10th and 11th are left out)
    daily = {d: 2 * PER_INSTANCE_DAY if d < date(2026, 11, 10) else PER_INSTANCE_DAY for d in WINDOW}
    daily[date(2026, 11, 10)] = Decimal("27.30")  # the day it was deleted: half a day of it
    found = realised_saving(
        daily,
        WINDOW,
        last_seen=date(2026, 11, 9),
        resolved_on=date(2026, 11, 11),
        estimated_monthly_usd=Decimal("553.59"),  # the estimate: 0.7583 x 730
    )
    # Then before = 1-8 November (8 days at $36.40), after = 12-20 November (9 days at $18.20):
    # (36.40 - 18.20) x 730 / 24 = $553.58 a month realised, 553.58 / 553.59 = 1.000 of the estimate
    assert found is not None
    assert found.status == "measured"
    assert (found.before_days, found.after_days) == (8, 9)
    assert found.before_daily_usd == Decimal("36.40")
    assert found.after_daily_usd == Decimal("18.20")
    assert found.realised_monthly_usd == Decimal("553.58")
    assert found.accuracy == Decimal("1.000")


def test_a_missing_cost_day_is_unknown_but_a_stored_day_without_the_type_cost_nothing() -> None:
    # Given the only endpoint of its type deleted: after the change no record of the type at all (cost 0), and the
    # 15th not stored (Cost Explorer not fetched that day)
    daily = {d: PER_INSTANCE_DAY for d in WINDOW if d < date(2026, 11, 10)}
    stored = WINDOW - {date(2026, 11, 15)}
    found = realised_saving(
        daily, stored, last_seen=date(2026, 11, 9), resolved_on=date(2026, 11, 11), estimated_monthly_usd=Decimal(600)
    )
    # Then after = 8 stored days at $0; realised 18.20 x 730 / 24 = $553.58, 0.923 of the $600 estimate
    assert found is not None
    assert found.after_days == 8
    assert found.after_daily_usd == Decimal("0.00")
    assert found.realised_monthly_usd == Decimal("553.58")
    assert found.accuracy == Decimal("0.923")


def test_too_few_days_after_the_change_is_pending_without_a_figure() -> None:
    daily = dict.fromkeys(WINDOW, PER_INSTANCE_DAY)
    found = realised_saving(
        daily, WINDOW, last_seen=date(2026, 11, 17), resolved_on=date(2026, 11, 18), estimated_monthly_usd=Decimal(1)
    )
    assert found is not None
    assert found.status == "pending"
    assert found.after_days == 2
    assert found.realised_monthly_usd is None


def test_nothing_stored_before_the_change_gives_nothing() -> None:
    assert (
        realised_saving(
            {}, set(), last_seen=date(2026, 11, 9), resolved_on=date(2026, 11, 11), estimated_monthly_usd=Decimal(1)
        )
        is None
    )
