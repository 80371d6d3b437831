"""Series summaries: percentiles, and the peaks that answer "when was it last at or above t?" exactly."""

from __future__ import annotations

import random
from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import given
from hypothesis import strategies as st

from chipwise.analyse.series import summarise
from chipwise.economics import percentile

START = datetime(2026, 11, 1, tzinfo=UTC)


def _hours(n: int) -> list[datetime]:
    return [START + timedelta(hours=i) for i in range(n)]


def test_percentiles_interpolate_between_ranks() -> None:
    values = [float(v) for v in range(1, 11)]  # 1..10
    assert percentile(values, 50) == 5.5
    assert percentile(values, 95) == pytest.approx(9.55)
    assert percentile(values, 0) == 1.0 and percentile(values, 100) == 10.0
    with pytest.raises(ValueError):
        percentile([], 50)


def test_a_summary_has_the_figures_rules_read() -> None:
    # Given 4 hours: 0, 10, 0, 30
    stats = summarise(_hours(4), [0.0, 10.0, 0.0, 30.0])
    # Then
    assert stats is not None
    assert (stats.hours, stats.total, stats.mean, stats.maximum, stats.nonzero_hours) == (4, 40.0, 10.0, 30.0, 2)
    assert (stats.first_hour, stats.last_hour) == (START, START + timedelta(hours=3))
    assert stats.peak_to_mean() == 3.0
    assert stats.peak_to_mean(over_hours=8) == 6.0  # absent hours counted as zero
    assert summarise([], []) is None


def test_the_idle_streak_is_counted_from_the_last_hour_at_or_above_the_threshold() -> None:
    # Given a series busy (50) at hour 2, then low (0.5) for hours 3-9
    values = [10.0, 20.0, 50.0] + [0.5] * 7
    stats = summarise(_hours(10), values)
    end = START + timedelta(hours=10)
    assert stats is not None
    # Then below 1 it has been idle since hour 3 (7 hours); below 60 for the whole 10 hours
    assert stats.last_at_or_above(1.0) == START + timedelta(hours=2)
    assert stats.hours_below_since(1.0, end, since=START) == 7.0
    assert stats.last_at_or_above(60.0) is None
    assert stats.hours_below_since(60.0, end, since=START) == 10.0


@given(
    st.lists(st.floats(min_value=0, max_value=100, allow_nan=False), min_size=1, max_size=200),
    st.floats(min_value=0, max_value=100, allow_nan=False),
)
def test_peaks_give_the_same_answer_as_scanning_every_hour(values: list[float], threshold: float) -> None:
    stats = summarise(_hours(len(values)), values)
    assert stats is not None
    expected = max((i for i, v in enumerate(values) if v >= threshold), default=None)
    found = stats.last_at_or_above(threshold)
    assert found == (None if expected is None else START + timedelta(hours=expected))


def test_peaks_stay_few_for_noisy_series() -> None:
    rng = random.Random(7)
    stats = summarise(_hours(720), [rng.uniform(0, 100) for _ in range(720)])
    assert stats is not None and len(stats.peaks) < 30
