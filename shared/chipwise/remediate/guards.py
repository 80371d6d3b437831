"""The checks an apply makes just before it acts: the resource read again (gone is ``NotFound``), the protect tag,
and fresh evidence from its metrics since the scan.

**Protect tag.** A resource tagged ``chipwise:protect`` is never changed. The key is matched without regard to case
or surrounding spaces (``Chipwise:Protect``, ``CHIPWISE:PROTECT``, ``chipwise:protect `` all count), and so is the
value: ``true``, ``yes`` or ``1``.

**Fresh evidence or nothing.** Every metric a finding rests on must have datapoints since the scan (from the scan's
hour on), the newest at most :data:`STALE_AFTER` old: an agent that stopped publishing is not an idle machine. A
metric that contradicts the finding refuses too: an instance called idle on its accelerator while its CPU is busy
(:data:`BUSY_CPU_PCT`) is doing work the finding did not see. SageMaker publishes ``Invocations`` only for requests
(an hour without one has no datapoint), so an endpoint's or a component's requests count as zero when absent and
the freshness is read from its instance metric (CPU), which a live endpoint always publishes.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import datetime, timedelta
from typing import Any, TypeVar

from botocore.exceptions import ClientError

from chipwise.aws import AwsContext
from chipwise.collect.metric_specs import MetricTarget
from chipwise.collect.metrics import collect_metrics
from chipwise.errors import NotFound
from chipwise.models.records import HourlyRollup, SeriesCoverage
from chipwise.remediate.api_calls import GuardRefusal

PROTECT_TAG = "chipwise:protect"
PROTECT_VALUES = frozenset({"true", "yes", "1"})
STALE_AFTER = timedelta(hours=3)  # the newest datapoint older than this (the hourly rollups lag by up to one hour)
BUSY_CPU_PCT = 50.0  # an accelerator box whose CPU peaked at or above this since the scan is working

R = TypeVar("R")


def tags_of(items: Sequence[Any] | None) -> dict[str, str]:
    """AWS's ``[{"Key": …, "Value": …}]`` tag list as a dict."""
    return {str(t["Key"]): str(t.get("Value", "")) for t in items or []}


def is_protected(tags: dict[str, str]) -> bool:
    """Whether ``tags`` carry the protect tag: key and value compared without case or surrounding spaces, the value
    ``true``, ``yes`` or ``1``."""
    return any(
        key.strip().lower() == PROTECT_TAG and value.strip().lower() in PROTECT_VALUES for key, value in tags.items()
    )


def refuse_protected(tags: dict[str, str], resource: str) -> None:
    if is_protected(tags):
        raise GuardRefusal(f"{resource} is tagged {PROTECT_TAG}=true: Chipwise never changes it")


def read_again(what: str, read: Callable[[], R]) -> R:
    """A resource read again before acting: ``NotFound`` (``<what> no longer exists``) when AWS says it is gone."""
    try:
        return read()
    except ClientError as exc:
        if is_gone(exc):
            raise NotFound(f"{what} no longer exists") from exc
        raise


def is_gone(exc: ClientError) -> bool:
    error = exc.response.get("Error", {})
    code, message = str(error.get("Code", "")), str(error.get("Message", ""))
    return code in {"InvalidInstanceID.NotFound", "InvalidInstanceID.Malformed", "ResourceNotFound"} or (
        code == "ValidationException" and "Could not find" in message
    )


def hourly_since(
    aws: AwsContext, targets: Sequence[MetricTarget], since: datetime, now: datetime
) -> list[HourlyRollup]:
    """The hourly rows of ``targets`` from the scan's hour to now."""
    if not targets:
        return []
    start = since.replace(minute=0, second=0, microsecond=0)
    end = now.replace(minute=0, second=0, microsecond=0) + timedelta(hours=1)
    rows: list[HourlyRollup] = []

    def sink(rollups: list[HourlyRollup], _coverage: list[SeriesCoverage]) -> None:
        rows.extend(rollups)

    collect_metrics(aws, targets, start, end, sink)
    return rows


def fresh(
    aws: AwsContext, targets: Sequence[MetricTarget], since: datetime, now: datetime, *, resource: str, what: str
) -> list[HourlyRollup]:
    """The rows of ``targets`` since the scan, refusing when there are none (``no <what> datapoints since the
    scan``) or the newest is older than :data:`STALE_AFTER`."""
    rows = [row for row in hourly_since(aws, targets, since, now) if _has_value(row)]
    if not targets or not rows:
        raise GuardRefusal(
            f"{resource} has no {what} datapoints since the scan ({since:%Y-%m-%d %H:%M} UTC): without fresh "
            "evidence Chipwise does not act (is the agent still publishing?)"
        )
    newest = max(row.hour for row in rows)
    if newest + timedelta(hours=1) < now - STALE_AFTER:
        raise GuardRefusal(
            f"{resource}'s newest {what} datapoint is from {newest:%Y-%m-%d %H:00} UTC, more than "
            f"{STALE_AFTER.total_seconds() / 3600:g} hours ago: stale evidence, Chipwise does not act"
        )
    return rows


def peak(rows: Sequence[HourlyRollup], value: Callable[[HourlyRollup], float | None]) -> float | None:
    """The largest hourly value of ``rows`` (None: no datapoint)."""
    values = [v for row in rows if (v := value(row)) is not None]
    return max(values) if values else None


def maximum(row: HourlyRollup) -> float | None:
    return row.maximum


def total(row: HourlyRollup) -> float | None:
    return row.sum


def _has_value(row: HourlyRollup) -> bool:
    return any(v is not None for v in (row.maximum, row.average, row.sum))
