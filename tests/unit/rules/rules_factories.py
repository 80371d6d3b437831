"""Profiles for rule tests, built as plain data (no store): a resource, its hourly series and its rate."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from typing import Any

from chipwise.analyse.metric_keys import INVOCATIONS, NEURON_CORE
from chipwise.analyse.profiles import CostFacts, Coverage, ResourceProfile, Signals
from chipwise.analyse.series import SeriesStats, summarise
from chipwise.models.resources import parse_hints
from chipwise.rules.base import RuleContext
from chipwise.rules.engine import default_context

NOW = datetime(2026, 11, 20, 12, tzinfo=UTC)
WINDOW_END = NOW
WINDOW_START = NOW - timedelta(days=14)
HOURS = 14 * 24
GIB = 2**30


def ctx() -> RuleContext:
    return default_context(NOW)


def hourly(values: Sequence[float | None], end: datetime = WINDOW_END) -> SeriesStats | None:
    """A series whose last value is the hour before ``end``; None entries are hours without a datapoint."""
    start = end - timedelta(hours=len(values))
    pairs = [(start + timedelta(hours=i), v) for i, v in enumerate(values) if v is not None]
    return summarise([h for h, _ in pairs], [float(v) for _, v in pairs])


def flat(value: float, hours: int = HOURS) -> SeriesStats:
    stats = hourly([value] * hours)
    assert stats is not None
    return stats


def profile(
    name: str = "res",
    *,
    kind: str = "ec2_instance",
    instance_type: str = "inf2.xlarge",
    count: int = 1,
    platform: str | None = None,
    state: str | None = None,
    rate: str | Decimal | None = "1.00",
    rate_source: str = "cost_explorer",
    commitment_discount: str = "0",
    hints: dict[str, Any] | None = None,
    coverage: dict[tuple[str, str], Coverage] | None = None,
    run_hours: float = HOURS,
    billed_instances: str | Decimal | None = None,
    component_name: str | None = None,
    endpoint_name: str | None = None,
    variant_name: str | None = None,
    **signals: Any,
) -> ResourceProfile:
    """A live resource over the 14-day window; ``signals`` are fields of :class:`Signals`."""
    family = instance_type.removeprefix("ml.").split(".")[0]
    platform = platform or (
        "inferentia" if family.startswith("inf") else "trainium" if family.startswith("trn") else "nvidia"
    )
    if state is None:
        state = {
            "sagemaker_endpoint": "InService",
            "sagemaker_inference_component": "InService",
            "sagemaker_training_job": "Completed",
        }.get(kind, "running")
    arn = f"arn:aws:test:us-east-1:123456789012:{kind}/{name}"
    return ResourceProfile(
        resource_id=1,
        arn=arn,
        kind=kind,
        name=name,
        account_id="123456789012",
        region="us-east-1",
        instance_type=instance_type,
        instance_count=count,
        platform=platform,
        state=state,
        window_start=WINDOW_START,
        window_end=WINDOW_END,
        active_since=WINDOW_END - timedelta(hours=run_hours),
        run_hours=run_hours,
        cost=CostFacts(
            Decimal(rate) if rate is not None else None,
            rate_source if rate is not None else None,  # type: ignore[arg-type]
            Decimal(rate) if rate is not None else None,
            Decimal(commitment_discount),
        ),
        hints=parse_hints(hints or {}),
        signals=Signals(**signals),
        coverage=coverage if coverage is not None else _default_coverage(kind, signals),
        billed_instances=Decimal(billed_instances) if billed_instances is not None else None,
        component_name=component_name,
        endpoint_name=endpoint_name,
        variant_name=variant_name,
    )


def _default_coverage(kind: str, signals: dict[str, Any]) -> dict[tuple[str, str], Coverage]:
    """Coverage rows as the collector writes them: invocations always exist on endpoints; Neuron metrics exist
    when the profile has a Neuron signal."""
    found: dict[tuple[str, str], Coverage] = {}
    if kind in ("sagemaker_endpoint", "sagemaker_inference_component"):
        invocations = signals.get("invocations")
        found[INVOCATIONS] = Coverage(True, invocations.hours if invocations else 0)
    neuron = signals.get("neuron_util")
    found[NEURON_CORE] = Coverage(neuron is not None, neuron.hours if neuron else 0)
    return found


def with_hints(p: ResourceProfile, **hints: Any) -> ResourceProfile:
    return replace(p, hints=parse_hints(hints))
