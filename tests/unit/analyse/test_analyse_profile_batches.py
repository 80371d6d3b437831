"""Profiles are built a batch of resources at a time (issue 37: the rules stage's memory flat in the number of
resources): any batch size gives the same profiles, in the same order, as one batch of everything; the values a
weekly pattern is read from are kept packed by hour of week and still answer every threshold exactly."""

from __future__ import annotations

import random
from datetime import UTC, datetime, timedelta

import pytest
from analyse_factories import NOW, write_estate
from sqlalchemy.orm import Session

from chipwise.analyse.profile_builder import build_profiles, profile_batches
from chipwise.analyse.profiles import ResourceProfile
from chipwise.analyse.series import HOURS_PER_WEEK, hour_of_week, summarise
from chipwise.catalog import get_catalog
from chipwise.collect.metrics import metric_window
from chipwise.store.repositories.profile_inputs import ProfileInputRepository

ACCOUNT, REGION, RESOURCES, DAYS = "123456789012", "us-east-1", 23, 9  # 23: not a multiple of any size below


def _batches(session: Session, size: int) -> list[list[ResourceProfile]]:
    start, end = metric_window(NOW, DAYS)
    source = ProfileInputRepository(session, account_id=ACCOUNT, region=REGION)
    return list(profile_batches(source, start=start, end=end, catalog=get_catalog(), size=size))


@pytest.mark.parametrize("size", [1, 5, 10, 22, 23])
def test_any_batch_size_gives_the_profiles_of_one_batch(session: Session, size: int) -> None:
    # Given an estate of every shape the rules read (neuron-monitor rollups, weekly series, coverage, costs)
    write_estate(session, ACCOUNT, RESOURCES, DAYS)
    # When it is profiled in batches of ``size`` and in one batch of everything
    batches = _batches(session, size)
    start, end = metric_window(NOW, DAYS)
    whole = build_profiles(
        ProfileInputRepository(session, account_id=ACCOUNT, region=REGION), start=start, end=end, catalog=get_catalog()
    )
    # Then the batches hold at most ``size`` resources each and add up to the same profiles in the same order
    assert len(batches) == -(-RESOURCES // size)
    assert all(0 < len(batch) <= size for batch in batches)
    assert [p for batch in batches for p in batch] == whole == _batches(session, 1_000)[0]
    assert any(p.signals.neuron_util is not None and p.signals.neuron_util.weekly is not None for p in whole)


def test_the_weekly_slots_count_every_threshold_as_the_values_themselves() -> None:
    # Given a series of random hours over five weeks: gaps, ties, zeros and repeated values
    rng = random.Random(37)
    first = datetime(2026, 10, 5, tzinfo=UTC)
    hours = [first + timedelta(hours=h) for h in range(5 * HOURS_PER_WEEK) if rng.random() > 0.3]
    values = [rng.choice([0.0, 5.0, 5.0, rng.uniform(0, 10), float(rng.randint(0, 3))]) for _ in hours]
    # When it is summarised with its values by hour of week
    stats = summarise(hours, values, weekly=True)
    assert stats is not None and stats.weekly is not None
    # Then each slot's count and its count at or above any threshold are those of the values in that slot
    by_slot: list[list[float]] = [[] for _ in range(HOURS_PER_WEEK)]
    for hour, value in zip(hours, values, strict=True):
        by_slot[hour_of_week(hour)].append(value)
    for threshold in (-1.0, 0.0, 0.5, 3.0, 5.0, 5.000001, 10.0, 11.0):
        for slot, kept in enumerate(by_slot):
            assert stats.weekly.seen(slot) == len(kept)
            assert stats.weekly.at_or_above(slot, threshold) == sum(1 for v in kept if v >= threshold)
