"""Cost Explorer parsing: Decimal from the strings, usage types into instance types, which days to fetch."""

from __future__ import annotations

from datetime import date
from decimal import Decimal

import pytest

from chipwise.collect.costs import cost_query, days_to_fetch, describe_usage_type, parse_results


@pytest.mark.parametrize(
    ("usage_type", "expected"),
    [
        ("BoxUsage:inf2.xlarge", ("BoxUsage", "inf2.xlarge", "us-east-1")),
        ("USE1-BoxUsage:p5.48xlarge", ("BoxUsage", "p5.48xlarge", "us-east-1")),
        ("USW2-SpotUsage:g5.xlarge", ("SpotUsage", "g5.xlarge", "us-west-2")),
        ("USE1-Host:ml.inf2.xlarge", ("Host", "ml.inf2.xlarge", "us-east-1")),
        ("USE2-Train:ml.trn1.32xlarge", ("Train", "ml.trn1.32xlarge", "us-east-2")),
        ("USE1-AsyncInf:ml.g5.2xlarge", ("AsyncInf", "ml.g5.2xlarge", "us-east-1")),
        ("Notebk:ml.g5.xlarge", ("Notebk", "ml.g5.xlarge", "us-east-1")),
        ("USE1-Host:VolumeUsage.gp2", ("storage", None, "us-east-1")),
        ("EUC1-DataTransfer-Out-Bytes", ("unknown", None, "eu-central-1")),
        ("EU-BoxUsage:p4d.24xlarge", ("BoxUsage", "p4d.24xlarge", "eu-west-1")),
        ("USE1-UnusedBox:p4de.24xlarge", ("UnusedBox", "p4de.24xlarge", "us-east-1")),
        ("USW2-Processing:ml.g5.xlarge", ("Processing", "ml.g5.xlarge", "us-west-2")),
        ("USE1-Transform:ml.p3.2xlarge", ("Transform", "ml.p3.2xlarge", "us-east-1")),
        ("USE1-ServerlessInf:Mem-4GB", ("ServerlessInf", None, "us-east-1")),
        ("USE1-SomethingNew:ml.g6.xlarge", ("unknown", None, "us-east-1")),
        ("ZZZ9-BoxUsage:inf2.xlarge", ("unknown", None, None)),
    ],
)
def test_usage_types_name_kind_type_and_region(usage_type: str, expected: tuple[str | None, ...]) -> None:
    assert describe_usage_type(usage_type) == expected


def test_amounts_are_decimal_from_the_strings() -> None:
    # Given a day with an amount no float can hold exactly
    results = [
        {
            "TimePeriod": {"Start": "2026-11-01", "End": "2026-11-02"},
            "Estimated": True,
            "Groups": [
                {
                    "Keys": ["Amazon SageMaker", "USE1-Host:ml.inf2.xlarge"],
                    "Metrics": {
                        "UnblendedCost": {"Amount": "23.7523500001", "Unit": "USD"},
                        "AmortizedCost": {"Amount": "17.10169200007", "Unit": "USD"},
                        "UsageQuantity": {"Amount": "24", "Unit": "Hrs"},
                    },
                },
                {"Keys": ["only-one-key"], "Metrics": {}},
            ],
        }
    ]
    # When parsed
    [record] = list(parse_results(results))
    # Then nothing went through float, and the malformed group is skipped
    assert record.unblended_cost == Decimal("23.7523500001")
    assert record.amortized_cost == Decimal("17.10169200007")
    assert record.usage_quantity == Decimal(24)
    assert (record.day, record.usage_kind, record.instance_type, record.estimated) == (
        date(2026, 11, 1),
        "Host",
        "ml.inf2.xlarge",
        True,
    )


def test_one_query_shape_only_the_period_changes() -> None:
    a, b = cost_query(date(2026, 11, 1), date(2026, 11, 15)), cost_query(date(2026, 11, 12), date(2026, 11, 15))
    assert {k: v for k, v in a.items() if k != "TimePeriod"} == {k: v for k, v in b.items() if k != "TimePeriod"}
    assert a["Granularity"] == "DAILY"
    assert a["Metrics"] == ["UnblendedCost", "AmortizedCost", "UsageQuantity"]
    assert a["GroupBy"] == [{"Type": "DIMENSION", "Key": "SERVICE"}, {"Type": "DIMENSION", "Key": "USAGE_TYPE"}]


def _days(first: int, last: int) -> set[date]:
    return {date(2026, 11, d) for d in range(first, last + 1)}


@pytest.mark.parametrize(
    ("stored", "expected"),
    [
        (set(), (date(2026, 11, 1), date(2026, 11, 15))),  # nothing stored: the whole window
        (_days(1, 14), (date(2026, 11, 12), date(2026, 11, 15))),  # all stored: the last 3 days again
        (_days(1, 9), (date(2026, 11, 10), date(2026, 11, 15))),  # a gap before the revised days
        (_days(1, 14) - {date(2026, 11, 3)}, (date(2026, 11, 3), date(2026, 11, 15))),  # a hole
    ],
)
def test_days_to_fetch(stored: set[date], expected: tuple[date, date]) -> None:
    assert days_to_fetch(date(2026, 11, 1), date(2026, 11, 15), stored, today=date(2026, 11, 15)) == expected


def test_an_old_complete_window_needs_no_request() -> None:
    assert days_to_fetch(date(2026, 9, 1), date(2026, 9, 15), _days_in_sept(), today=date(2026, 11, 15)) is None


def _days_in_sept() -> set[date]:
    return {date(2026, 9, d) for d in range(1, 15)}
