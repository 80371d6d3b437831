"""Traffic and activity read off a profile: hours without requests, duty cycle, peak-to-mean.

SageMaker publishes no Invocations datapoint for an hour without requests, so an absent hour is zero traffic, but
only when the metric exists for the endpoint (coverage); a missing metric is unknown, never zero.
"""

from __future__ import annotations

from dataclasses import dataclass

from chipwise.analyse.metric_keys import INVOCATIONS
from chipwise.analyse.profiles import ResourceProfile
from chipwise.analyse.series import SeriesStats

ANY_ACTIVITY = 1e-9  # an hour with any request or execution at all


def traffic_known(profile: ResourceProfile) -> bool:
    coverage = profile.coverage.get(INVOCATIONS)
    return profile.signals.invocations is not None or (coverage is not None and coverage.exists)


def hours_without_traffic(profile: ResourceProfile) -> float | None:
    """Hours before the end of the window since the last request (None when traffic is unknown)."""
    if not traffic_known(profile):
        return None
    invocations = profile.signals.invocations
    if invocations is None:
        return profile.run_hours
    return invocations.hours_below_since(ANY_ACTIVITY, profile.window_end, profile.active_since)


def idle_hours(profile: ResourceProfile, series: SeriesStats | None, threshold: float) -> float | None:
    """Hours before the end of the window during which ``series`` stayed below ``threshold`` (None: no data)."""
    if series is None:
        return None
    return series.hours_below_since(threshold, profile.window_end, profile.active_since)


@dataclass(frozen=True)
class Activity:
    """How a counter (requests or executions per hour) was spread over the hours the resource ran."""

    total: float
    active_hours: int
    run_hours: float
    peak_per_hour: float

    @property
    def mean_per_hour(self) -> float:
        return self.total / self.run_hours if self.run_hours > 0 else 0.0

    @property
    def active_share(self) -> float:
        """Share of the hours with any activity (the duty cycle)."""
        return min(1.0, self.active_hours / self.run_hours) if self.run_hours > 0 else 0.0

    @property
    def idle_share(self) -> float:
        return 1.0 - self.active_share

    @property
    def peak_to_mean(self) -> float | None:
        mean = self.mean_per_hour
        return self.peak_per_hour / mean if mean > 0 else None


def activity(profile: ResourceProfile, series: SeriesStats | None) -> Activity | None:
    """The activity of a counter series over the run (absent hours counted as zero)."""
    if series is None or profile.run_hours <= 0:
        return None
    return Activity(
        total=series.total, active_hours=series.nonzero_hours, run_hours=profile.run_hours, peak_per_hour=series.maximum
    )


def requests(profile: ResourceProfile) -> Activity | None:
    """Endpoint requests (zero traffic when the metric exists without datapoints)."""
    if profile.signals.invocations is None:
        if traffic_known(profile) and profile.run_hours > 0:
            return Activity(0.0, 0, profile.run_hours, 0.0)
        return None
    return activity(profile, profile.signals.invocations)
