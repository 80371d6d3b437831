"""Cost Explorer: one GetCostAndUsage query shape per account and scan, amounts as Decimal from the strings.

DAILY, metrics UnblendedCost + AmortizedCost + UsageQuantity, grouped by SERVICE and USAGE_TYPE, filtered to
EC2 compute and SageMaker. boto3 has no paginator for GetCostAndUsage, so :func:`fetch_cost_records` follows
``NextPageToken`` itself. Each page is a billed request ($0.01): :func:`days_to_fetch` asks only for days the
store lacks, plus the last few days Cost Explorer still revises.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from datetime import date, timedelta
from decimal import Decimal
from typing import Any

from chipwise.aws import AwsContext
from chipwise.catalog import classify_usage_type, get_regions
from chipwise.models.records import CostLine

EC2_COMPUTE_SERVICE = "Amazon Elastic Compute Cloud - Compute"
SAGEMAKER_SERVICE = "Amazon SageMaker"
SERVICES = (EC2_COMPUTE_SERVICE, SAGEMAKER_SERVICE)
METRICS = ("UnblendedCost", "AmortizedCost", "UsageQuantity")
REVISED_DAYS = 3  # Cost Explorer keeps revising the most recent days: fetch them again every scan


def days_to_fetch(start: date, end: date, stored: Iterable[date], today: date) -> tuple[date, date] | None:
    """The half-open day range to ask for: from the first day not stored yet, and always the last revised days.

    None when every day of ``[start, end)`` is stored and none is recent enough to be revised.
    """
    have = set(stored)
    firsts = [d for d in _days(start, end) if d not in have][:1]
    revise_from = max(start, today - timedelta(days=REVISED_DAYS))
    if revise_from < end:
        firsts.append(revise_from)
    return (min(firsts), end) if firsts else None


def _days(start: date, end: date) -> Iterator[date]:
    day = start
    while day < end:
        yield day
        day += timedelta(days=1)


def cost_query(start: date, end: date) -> dict[str, Any]:
    """The one GetCostAndUsage query shape Chipwise sends (only the time period changes)."""
    return {
        "TimePeriod": {"Start": start.isoformat(), "End": end.isoformat()},
        "Granularity": "DAILY",
        "Metrics": list(METRICS),
        "Filter": {"Dimensions": {"Key": "SERVICE", "Values": list(SERVICES)}},
        "GroupBy": [{"Type": "DIMENSION", "Key": "SERVICE"}, {"Type": "DIMENSION", "Key": "USAGE_TYPE"}],
    }


def fetch_cost_records(aws: AwsContext, start: date, end: date) -> list[CostLine]:
    """Every group of every day in ``[start, end)``, following NextPageToken to the last page."""
    ce = aws.client("ce")
    query = cost_query(start, end)
    records: list[CostLine] = []
    token: str | None = None
    while True:
        page = ce.get_cost_and_usage(**query, **({"NextPageToken": token} if token else {}))  # type: ignore[arg-type]
        records.extend(parse_results(page.get("ResultsByTime", [])))
        token = page.get("NextPageToken")
        if not token:
            return records


def parse_results(results: Iterable[Any]) -> Iterator[CostLine]:
    """Cost records from ``ResultsByTime`` (amounts parsed from their strings: never through float)."""
    for result in results:
        day = date.fromisoformat(result["TimePeriod"]["Start"])
        estimated = bool(result.get("Estimated", False))
        for group in result.get("Groups", []):
            keys = list(group.get("Keys", []))
            if len(keys) != 2:
                continue
            service, usage_type = keys
            metrics = group.get("Metrics", {})
            kind, instance_type, region = describe_usage_type(usage_type)
            yield CostLine(
                day=day,
                service=service,
                usage_type=usage_type,
                usage_kind=kind,
                instance_type=instance_type,
                region=region,
                unblended_cost=_amount(metrics, "UnblendedCost"),
                amortized_cost=_amount(metrics, "AmortizedCost"),
                usage_quantity=_amount(metrics, "UsageQuantity"),
                estimated=estimated,
            )


def _amount(metrics: Any, name: str) -> Decimal:
    value = (metrics.get(name) or {}).get("Amount")
    return Decimal(str(value)) if value not in (None, "") else Decimal(0)


def describe_usage_type(usage_type: str) -> tuple[str | None, str | None, str | None]:
    """(usage kind, instance type, region) of a usage type, as the catalog classifies it: every usage type gets a
    kind (``unknown`` for one the catalog does not know: kept and counted, never dropped); the instance type only
    for attributed kinds (instance hours, unused reservations); the region from the prefix (none: us-east-1)."""
    found = classify_usage_type(usage_type)
    region = found.region
    if region is None:
        prefix, sep, _rest = usage_type.partition("-")
        known = get_regions().by_prefix(prefix) if sep else None
        region = known.code if known is not None else None
    return found.kind, found.instance_type, region
