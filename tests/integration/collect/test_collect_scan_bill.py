"""A scan priced from the bill: an export in the emulator's S3 → `chipwise bill ingest` → `chipwise scan --json`
with no Cost Explorer call, each resource at its own effective rate, the total equal to the export's accelerator
lines to the cent; and the Cost Explorer fallback when no bill covers the window."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from pathlib import Path

import boto3
import pytest
from scan_account_fixture import ACCOUNT, seed_account

from chipwise.cli import main
from chipwise_devkit.bill_export import Line, upload_export, write_export
from chipwise_devkit.emulator import Emulator

SP = f"arn:aws:savingsplans::{ACCOUNT}:savingsplan/7e1f-trn"


def _day_lines(day: datetime, arns: dict[str, str], ids: dict[str, str]) -> list[Line]:
    """Twelve hours of each accelerator resource on ``day`` (the figures summed in the test by hand)."""
    return [
        # inf2.xlarge on demand: 12 h × 0.7582 = 9.0984
        Line(ACCOUNT, "Usage", day, "USE1-BoxUsage:inf2.xlarge", ids["inf2-box"], hours=12, unblended_cost=9.0984,
             public_on_demand_rate=0.7582, public_on_demand_cost=9.0984, tags={"user:team": "search"}),
        # trn1.2xlarge under a Savings Plan: public 12 × 1.34375 = 16.125, effective 12 × 0.90 = 10.80
        Line(ACCOUNT, "SavingsPlanCoveredUsage", day, "USE1-BoxUsage:trn1.2xlarge", ids["eks-trn1-node"], hours=12,
             unblended_cost=16.125, public_on_demand_rate=1.34375, public_on_demand_cost=16.125, sp_arn=SP,
             sp_effective_cost=10.8, sp_offering_type="EC2InstanceSavingsPlans", sp_family="trn1",
             sp_end_time="2027-09-30T23:59:59.000Z"),
        Line(ACCOUNT, "SavingsPlanNegation", day, "USE1-BoxUsage:trn1.2xlarge", ids["eks-trn1-node"],
             unblended_cost=-16.125, sp_arn=SP),
        Line(ACCOUNT, "SavingsPlanRecurringFee", day, "", SP, product_code="ComputeSavingsPlans", hours=12,
             unblended_cost=12.0, sp_arn=SP, sp_total_commitment=12.0, sp_used_commitment=10.8),
        # g5.12xlarge on Spot: 12 h × 2.00 = 24.00 (public 12 × 5.672 = 68.064)
        Line(ACCOUNT, "Usage", day, "USE1-SpotUsage:g5.12xlarge", ids["gpu-box"], hours=12, unblended_cost=24.0,
             public_on_demand_rate=5.672, public_on_demand_cost=68.064, pricing_term="Spot"),
        # the inf2 endpoint's two instances: 24 instance-hours × 0.99 = 23.76
        Line(ACCOUNT, "Usage", day, "USE1-Host:ml.inf2.xlarge", arns["chat-inf2"], product_code="AmazonSageMaker",
             hours=24, unblended_cost=23.76, public_on_demand_rate=0.99, public_on_demand_cost=23.76),
        Line(ACCOUNT, "Tax", day, "", "", unblended_cost=5.0, region=""),
    ]  # fmt: skip


def test_a_scan_priced_from_the_bill_makes_no_cost_explorer_call(
    aws: Emulator, use_db: str, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # Given the seeded account and two days of its bill, delivered to S3 as Data Exports does
    seeded = seed_account(aws)
    today = datetime.now(UTC).replace(hour=0, minute=0, second=0, microsecond=0, tzinfo=None)
    days = [today - timedelta(days=2), today - timedelta(days=1)]
    lines = [line for day in days for line in _day_lines(day, seeded.arns, seeded.instance_ids)]
    for period in sorted({d.strftime("%Y-%m") for d in days}):
        write_export(tmp_path, "chipwise-cur", period, [x for x in lines if x.start.strftime("%Y-%m") == period],
                     bucket="payer-bills", prefix="cur")  # fmt: skip
    boto3.client("s3").create_bucket(Bucket="payer-bills")
    uri = upload_export(boto3.client("s3"), tmp_path / "chipwise-cur", "payer-bills", "cur")
    monkeypatch.setenv("CHIPWISE_DATA_EXPORT_URI", uri)
    # When the bill is ingested and the account scanned
    assert main(["bill", "ingest", "--engine", "duckdb"]) == 0
    capsys.readouterr()
    assert main(["scan", "--json", "--lookback-days", "2"]) == 0
    document = json.loads(capsys.readouterr().out)
    # Then the costs come from the bill, with no Cost Explorer call
    costs = document["costs"]
    assert costs["source"] == "bill"
    assert costs["billing_periods"] == sorted({d.strftime("%Y-%m") for d in days})
    assert not any(call.startswith("ce.") for call in document["api_calls"])
    # each resource at its own effective rate
    by_id = {r["id"]: r for r in document["resources"]}
    inf2 = by_id[seeded.arns["inf2-box"]]
    trn1 = by_id[seeded.arns["eks-trn1-node"]]
    gpu = by_id[seeded.arns["gpu-box"]]
    endpoint = by_id[seeded.arns["chat-inf2"]]
    assert (inf2["cost_usd"], Decimal(inf2["effective_hourly_rate_usd"])) == ("18.20", Decimal("0.7582"))
    assert (trn1["cost_usd"], Decimal(trn1["effective_hourly_rate_usd"])) == ("21.60", Decimal("0.9"))
    assert trn1["pricing"] == ["savings_plan"] and Decimal(trn1["public_on_demand_rate_usd"]) == Decimal("1.34375")
    assert (gpu["cost_usd"], Decimal(gpu["effective_hourly_rate_usd"]), gpu["pricing"]) == ("48.00", 2, ["spot"])
    assert (endpoint["cost_usd"], Decimal(endpoint["effective_hourly_rate_usd"])) == ("47.52", Decimal("0.99"))
    assert inf2["team"] == "search"
    # and the total is the bill's spend to the cent: the accelerator lines 18.1968 + 21.60 + 48.00 + 47.52 = 135.32,
    # plus what no resource carries, named apart: 2 days of the plan's unused commitment (12.00 - 10.80) and tax
    assert costs["total_usd"] == "147.72"
    apart = {item["category"]: Decimal(item["usd"]) for item in costs["not_attributed"]}
    assert apart == {"commitment_unused": Decimal("2.40"), "tax": Decimal("10.00")}
    assert by_id[seeded.arns["vision-g5"]]["cost_usd"] is None  # not in the bill


def test_without_a_bill_the_scan_falls_back_to_cost_explorer(
    aws: Emulator, use_db: str, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    seed_account(aws)
    assert main(["scan", "--json", "--lookback-days", "2"]) == 0
    document = json.loads(capsys.readouterr().out)
    assert document["costs"]["source"] == "cost_explorer" and document["api_calls"]["ce.GetCostAndUsage"] >= 1
    # cost_source=bill with no bill: the scan says so, and still asks Cost Explorer nothing
    monkeypatch.setenv("CHIPWISE_COST_SOURCE", "bill")
    from chipwise.settings import get_settings

    get_settings.cache_clear()
    assert main(["scan", "--json", "--lookback-days", "2"]) == 0
    document = json.loads(capsys.readouterr().out)
    assert document["costs"]["source"] == "bill" and "ce.GetCostAndUsage" not in document["api_calls"]
    assert [e["code"] for e in document["errors"] if e["source"] == "costs.bill"] == ["BillNotCovering"]
