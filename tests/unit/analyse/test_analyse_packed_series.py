"""Packed series (``metric_series``) are exactly the hourly rollup rows: the same series, summaries and profiles
whether read packed or from ``metric_rollups``, with gaps, missing columns, late datapoints overwriting an hour,
rows stored before the packed form existed, and windows older than what a packed series keeps."""

from __future__ import annotations

import random
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from analyse_factories import (
    ACCOUNT,
    LOOKBACK_DAYS,
    NOW,
    REGION,
    WINDOW_END,
    WINDOW_START,
    add_account,
    add_resource,
)
from sqlalchemy import delete, func, insert, select
from sqlalchemy.orm import Session

from chipwise.analyse.metric_keys import AVERAGE_METRICS, READ_METRICS, SUM_METRICS, WEEKLY_METRICS
from chipwise.analyse.profile_builder import build_profiles
from chipwise.analyse.profiles import ResourceProfile
from chipwise.analyse.series import SeriesStats, summarise
from chipwise.catalog import get_catalog
from chipwise.economics import parse_utc
from chipwise.models.records import HourlyRollup
from chipwise.store.repositories.metric_series import KEEP_HOURS, epoch_hour, keep_hours
from chipwise.store.repositories.profile_inputs import ProfileInputRepository
from chipwise.store.repositories.usage import UsageRepository
from chipwise.store.tables import MetricRollup, MetricSeries, Resource

HOUR = timedelta(hours=1)
METRICS = (
    ("AWS/EC2", "CPUUtilization"),  # a gauge: maximum, else average
    ("AWS/SageMaker", "Invocations"),  # a counter: sum (weekly)
    ("AWS/SageMaker", "ModelLatency"),  # average, else maximum
    ("Chipwise/Neuron", "NeuronCoreUtilization"),  # weekly gauge
    ("AWS/EC2", "NetworkIn"),  # not read by the rules
)


def _value(rng: random.Random) -> float | None:
    return rng.choice([None, 0.0, 0.0, rng.uniform(0, 100), rng.uniform(0, 1e6), float(rng.randint(0, 5))])


def _rollups(arns: list[str], first: datetime, hours: int, seed: int, gaps: float = 0.2) -> list[HourlyRollup]:
    """Random hours: gaps, columns missing at random (some rows with no value at all), zeros, ties."""
    rng = random.Random(seed)
    rows = []
    for arn in arns:
        for namespace, metric in METRICS:
            for i in range(hours):
                if rng.random() < gaps:
                    continue
                average, maximum, total = _value(rng), _value(rng), _value(rng)
                rows.append(HourlyRollup(arn, namespace, metric, first + i * HOUR, average, maximum, total, 1.0))
    return rows


def _resources(session: Session, names: list[str]) -> dict[str, int]:
    add_account(session)
    for name in names:
        add_resource(session, name)
    session.flush()
    return {str(arn): int(rid) for rid, arn in session.execute(select(Resource.id, Resource.arn))}


def _series(session: Session, start: datetime = WINDOW_START, end: datetime = WINDOW_END) -> dict[Any, Any]:
    """Each series as (datetimes, values, its summary with the values by hour of week)."""
    repo = ProfileInputRepository(session, account_id=ACCOUNT, region=REGION)
    found = {}
    for rid, namespace, metric, hours, values in repo.metric_series(
        start,
        end,
        sorted({m for _, m in READ_METRICS} | {"NetworkIn"}),
        sorted({m for _, m in SUM_METRICS}),
        sorted({m for _, m in AVERAGE_METRICS}),
    ):
        times = [datetime.fromtimestamp(h * 3600, UTC) if isinstance(h, int) else parse_utc(str(h)) for h in hours]
        stats: SeriesStats | None = summarise(times, list(values), weekly=True)
        found[(rid, namespace, metric)] = (times, list(values), stats)
    return found


def _profiles(session: Session) -> list[ResourceProfile]:
    source = ProfileInputRepository(session, account_id=ACCOUNT, region=REGION)
    return build_profiles(source, start=WINDOW_START, end=WINDOW_END, catalog=get_catalog())


def _from_rows(session: Session, read: Any) -> Any:
    """What ``read`` finds with the packed series taken away (every resource read from its rollup rows)."""
    session.execute(delete(MetricSeries))
    return read(session)


def _counted(session: Session) -> dict[tuple[int, str, str], int]:
    stmt = (
        select(MetricRollup.resource_id, MetricRollup.namespace, MetricRollup.metric, func.count())
        .where(MetricRollup.hour >= WINDOW_START, MetricRollup.hour < WINDOW_END)
        .group_by(MetricRollup.resource_id, MetricRollup.namespace, MetricRollup.metric)
    )
    return {(rid, ns, m): n for rid, ns, m, n in session.execute(stmt)}


def test_packed_series_read_exactly_as_the_rows_with_late_datapoints_and_gaps(session: Session) -> None:
    # Given three resources whose rollups were written by a first scan over 15 days, then a next-day scan that
    # read the last 27 hours again (late datapoints overwrite those hours, some with no value at all now)
    ids = _resources(session, ["a", "b", "c"])
    arns = sorted(ids)
    UsageRepository(session).save_rollups(_rollups(arns, WINDOW_START - timedelta(days=1), 15 * 24, seed=1), ids)
    UsageRepository(session).save_rollups(_rollups(arns, WINDOW_END - 27 * HOUR, 27, seed=2, gaps=0.1), ids)
    UsageRepository(session).save_rollups(_rollups(arns[:1], WINDOW_END - 5 * HOUR, 5, seed=3, gaps=0.0), ids)
    assert session.scalar(select(func.count()).select_from(MetricSeries)) == len(arns) * len(METRICS)
    # When the series, their summaries, the profiles and the stored hours are read packed, then from the rows
    packed = _series(session)
    profiles = _profiles(session)
    hours = UsageRepository(session).stored_hours(ACCOUNT, REGION, WINDOW_START, WINDOW_END)
    counted = _counted(session)
    # Then they are the same, hour for hour, and the weekly metrics keep their hour-of-week slots
    assert packed == _from_rows(session, _series)
    assert profiles == _profiles(session)
    assert hours == counted == UsageRepository(session).stored_hours(ACCOUNT, REGION, WINDOW_START, WINDOW_END)
    weekly = [s for (_, ns, m), (_, _, s) in packed.items() if (ns, m) in WEEKLY_METRICS]
    assert weekly and all(s is not None and s.weekly is not None for s in weekly)
    assert any(p.signals.invocations is not None and p.signals.cpu_util is not None for p in profiles)


def test_rows_stored_before_the_packed_form_are_packed_with_the_resources_next_write(session: Session) -> None:
    # Given rollups stored row by row (before metric_series existed) for two resources
    ids = _resources(session, ["old", "other"])
    rows = _rollups(sorted(ids), WINDOW_START, 14 * 24, seed=4)
    session.execute(
        insert(MetricRollup),
        [
            {
                "resource_id": ids[r.resource_key],
                "namespace": r.namespace,
                "metric": r.metric,
                "hour": r.hour,
                "average": r.average,
                "maximum": r.maximum,
                "sum": r.sum,
                "sample_count": r.sample_count,
            }
            for r in rows
        ],
    )
    before = _series(session)
    # When a scan writes one new hour of one metric of one of them
    arn = min(ids)
    late = HourlyRollup(arn, "AWS/EC2", "CPUUtilization", WINDOW_END - HOUR, 99.0, 100.0, None, 1.0)
    UsageRepository(session).save_rollups([late], ids)
    # Then every series of that resource is packed from its rows (the other resource stays read from its rows)
    packed = {tuple(k) for k in session.execute(select(MetricSeries.resource_id, MetricSeries.metric))}
    assert packed == {(ids[arn], m) for _, m in METRICS}
    after = _series(session)
    assert after == _from_rows(session, _series)
    changed = {k for k in after if after[k] != before.get(k)}
    assert changed == {(ids[arn], "AWS/EC2", "CPUUtilization")}


def test_a_window_older_than_a_packed_series_keeps_is_read_from_the_rows(session: Session) -> None:
    # Given one series written over more hours than a packed series keeps
    ids = _resources(session, ["long"])
    first = WINDOW_END - (KEEP_HOURS + 200) * HOUR
    rows = _rollups(sorted(ids), first, KEEP_HOURS + 200, seed=5, gaps=0.3)
    for offset in range(0, len(rows), 5_000):  # several writes, as scans make them
        UsageRepository(session).save_rollups(rows[offset : offset + 5_000], ids)
    since = session.scalars(select(MetricSeries.since_hour)).all()
    assert since and all(s is not None and s > epoch_hour(first) for s in since)
    # and a late datapoint for an hour older than what it keeps
    arn = next(iter(ids))
    UsageRepository(session).save_rollups(
        [HourlyRollup(arn, "AWS/EC2", "CPUUtilization", first + HOUR, 1.0, 2.0, None, 1.0)], ids
    )
    # When windows inside and before what it keeps are read
    inside = _series(session)
    older = _series(session, first, WINDOW_END)
    # Then both are exactly what the rows give
    assert inside and older
    assert (inside, older) == _from_rows(session, lambda s: (_series(s), _series(s, first, WINDOW_END)))


def test_a_series_bounded_by_the_scans_window_stays_its_size_and_reads_as_the_rows(session: Session) -> None:
    # Given two resources scanned daily for 30 days (a first read of the window, then each day 24 hours and the
    # 3-hour overlap), the packed series bounded by the 14-day window a scan reads (keep_hours, as the scan passes)
    ids = _resources(session, ["daily", "other"])
    arns = sorted(ids)
    keep = keep_hours(LOOKBACK_DAYS)
    first_end = WINDOW_END - timedelta(days=29)
    UsageRepository(session).save_rollups(
        _rollups(arns, first_end - timedelta(days=LOOKBACK_DAYS), LOOKBACK_DAYS * 24, seed=6), ids, keep
    )
    lengths = set()
    for day in range(1, 30):
        end = first_end + timedelta(days=day)
        UsageRepository(session).save_rollups(_rollups(arns, end - 27 * HOUR, 27, seed=10 + day, gaps=0.0), ids, keep)
        if day >= 2:  # the first day's span starts where the first read's first row is (gaps at random)
            lengths |= {len(p) for p in session.scalars(select(MetricSeries.present))}
    # Then every packed series holds the window and a day from the second day on, whatever the days of history
    assert lengths == {keep} == {(LOOKBACK_DAYS + 1) * 24}
    # And the window's series, profiles and stored hours are exactly what the rows give; a longer window than the
    # series keep (30 days) is read from the rows, exactly
    longer = WINDOW_END - timedelta(days=30)
    packed = (
        _series(session),
        _series(session, longer, WINDOW_END),
        _profiles(session),
        UsageRepository(session).stored_hours(ACCOUNT, REGION, WINDOW_START, WINDOW_END),
    )
    assert packed[0] and len(packed[1]) == len(packed[0])
    assert packed[3] == _counted(session)
    assert packed == _from_rows(
        session,
        lambda s: (
            _series(s),
            _series(s, longer, WINDOW_END),
            _profiles(s),
            UsageRepository(s).stored_hours(ACCOUNT, REGION, WINDOW_START, WINDOW_END),
        ),
    )


def test_a_rollup_hour_is_a_whole_hour() -> None:
    assert epoch_hour(datetime(2026, 11, 20, 12, tzinfo=UTC)) == int(NOW.timestamp()) // 3600
    assert epoch_hour(datetime(2026, 11, 20, 12)) == epoch_hour(NOW)  # naive: UTC
    with pytest.raises(ValueError, match="whole hour"):
        epoch_hour(datetime(2026, 11, 20, 12, 30, tzinfo=UTC))
