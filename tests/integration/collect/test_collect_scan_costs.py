"""Every billing kind in the scan document: unused capacity reservations are visible money, GPU Processing and
Transform hours are attributed to their type, ignored kinds say why, unknown usage types are kept and counted; the
account's own rate per type comes from instance hours only (on SQLite and PostgreSQL)."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta
from decimal import Decimal

import pytest
from scan_account_fixture import ACCOUNT, LOOKBACK_DAYS, NOW, REGION
from sqlalchemy import select
from sqlalchemy.orm import Session, sessionmaker

from chipwise.aws import aws_context
from chipwise.pipeline.scan import run_scan
from chipwise.store.repositories.usage import UsageRepository
from chipwise.store.tables import CostRecord
from chipwise_devkit.emulator import Emulator

EC2 = "Amazon Elastic Compute Cloud - Compute"
SAGEMAKER = "Amazon SageMaker"
DAY = "2026-11-19"
# (service, usage type, unblended = amortized, hours): one day. p4de.24xlarge at 40.9657 $/h On-Demand.
ROWS = [
    (EC2, "BoxUsage:p4de.24xlarge", "819.314", "20"),  # 20 h x 40.9657
    (EC2, "USE1-UnusedBox:p4de.24xlarge", "163.8628", "4"),  # 4 h reserved, nobody ran: 4 x 40.9657
    (EC2, "USE1-UnusedBox:m5.large", "0.096", "1"),  # unused, but not an accelerator
    (SAGEMAKER, "USE1-Processing:ml.g5.xlarge", "1.41", "1"),
    (SAGEMAKER, "USE1-Transform:ml.g4dn.xlarge", "0.736", "1"),
    (SAGEMAKER, "USE1-ServerlessInf:Mem-4GB", "0.30", "60"),
    (SAGEMAKER, "USE1-Canvas:Session-Hrs", "1.90", "1"),  # a kind the catalog does not know
    (EC2, "USE1-SomethingNew:p5.48xlarge", "5.00", "1"),  # likewise
]


def _next(day: str) -> str:
    return (date.fromisoformat(day) + timedelta(days=1)).isoformat()


def _pages(day: str = DAY) -> list[dict[str, object]]:
    groups = [
        {
            "Keys": [service, usage_type],
            "Metrics": {
                "UnblendedCost": {"Amount": usd, "Unit": "USD"},
                "AmortizedCost": {"Amount": usd, "Unit": "USD"},
                "UsageQuantity": {"Amount": hours, "Unit": "Hrs"},
            },
        }
        for service, usage_type, usd, hours in ROWS
    ]
    return [
        {
            "ResultsByTime": [
                {"TimePeriod": {"Start": day, "End": _next(day)}, "Total": {}, "Groups": groups, "Estimated": False}
            ],
            "GroupDefinitions": [{"Type": "DIMENSION", "Key": "SERVICE"}, {"Type": "DIMENSION", "Key": "USAGE_TYPE"}],
            "DimensionValueAttributes": [],
        }
    ]


def test_every_kind_is_attributed_ignored_with_a_reason_or_counted(
    aws: Emulator, session_factory: sessionmaker[Session]
) -> None:
    # Given a day of Cost Explorer groups of every treatment
    aws.inject_cost_and_usage(_pages())
    # When the account is scanned
    document = run_scan(aws_context(REGION), session_factory, region=REGION, now=NOW, lookback_days=LOOKBACK_DAYS)
    costs = document.costs
    # Then nothing is dropped: the total is every row (hand-added: 992.6188)
    assert costs.total_usd == Decimal("992.6188")
    # instance hours by type, GPU Processing and Transform included, unused reservations not
    assert costs.by_instance_type == {
        "ml.g4dn.xlarge": Decimal("0.736"),
        "ml.g5.xlarge": Decimal("1.41"),
        "p4de.24xlarge": Decimal("819.314"),
    }
    # the reserved-but-unused capacity is its own money, accelerators first
    unused = [(u.instance_type, u.accelerator, u.hours, u.usd, u.label) for u in costs.unused_reservations]
    assert unused == [
        ("p4de.24xlarge", True, Decimal(4), Decimal("163.8628"), "reserved but unused"),
        ("m5.large", False, Decimal(1), Decimal("0.096"), "reserved but unused"),
    ]
    assert costs.unused_reservations[0].platform == "nvidia"
    # ignored kinds say why; unknown usage types are counted with their dollars, the largest first
    kinds = {k.kind: k for k in costs.kinds}
    assert kinds["ServerlessInf"].treatment == "ignored" and "GB-second" in (kinds["ServerlessInf"].reason or "")
    assert kinds["Processing"].treatment == "instance_hours" and kinds["UnusedBox"].usd == Decimal("163.9588")
    assert kinds["unknown"].usd == Decimal("6.90") and kinds["unknown"].usage_types == 2
    assert costs.unknown_usage_types_count == 2
    assert [(u.usage_type, u.usd) for u in costs.unknown_usage_types] == [
        ("USE1-SomethingNew:p5.48xlarge", Decimal("5.00")),
        ("USE1-Canvas:Session-Hrs", Decimal("1.90")),
    ]
    # the JSON document carries the money as cents
    dumped = document.model_dump(mode="json")["costs"]
    assert dumped["unused_reservations"][0]["usd"] == "163.86" and dumped["total_usd"] == "992.62"
    with session_factory() as session:
        # every row is in the cost table, the unknown ones as kind "unknown"
        kinds_stored: dict[str, str | None] = dict(
            session.execute(select(CostRecord.usage_type, CostRecord.usage_kind)).all()
        )
        assert len(kinds_stored) == len(ROWS)
        assert kinds_stored["USE1-Canvas:Session-Hrs"] == "unknown"
        assert kinds_stored["USE1-UnusedBox:p4de.24xlarge"] == "UnusedBox"
        # and the account's own p4de rate is 819.314 / 20 h, not diluted by the 4 unused hours
        rates = UsageRepository(session).effective_hourly_rates(ACCOUNT, NOW.date().replace(day=18), NOW.date())
        assert rates["p4de.24xlarge"] == Decimal("40.965700")
        assert rates["ml.g5.xlarge"] == Decimal("1.410000") and "m5.large" not in rates


def test_the_cli_prints_the_reserved_but_unused_capacity(
    aws: Emulator, use_db: str, capsys: pytest.CaptureFixture[str]
) -> None:
    from chipwise.cli import main

    # Given the same groups yesterday (the command scans up to now)
    aws.inject_cost_and_usage(_pages((datetime.now(UTC).date() - timedelta(days=1)).isoformat()))
    # When `chipwise scan` runs for people
    assert main(["scan", "--region", "us-east-1", "--lookback-days", "2"]) == 0
    out = capsys.readouterr().out
    # Then the unused reservation is a line of its own, with hours and dollars, and unknown usage is counted
    assert "reserved but unused: p4de.24xlarge 4 h, $163.86 (accelerator capacity)" in out
    assert "usage types not recognised (kept in the totals): 2" in out
