"""Demo stage 20: the demo account's neuron-monitor reports and scan, as `chipwise demo` shows them."""

from __future__ import annotations

import importlib
import io
import json
from decimal import Decimal
from pathlib import Path

import pytest
from rich.console import Console
from sqlalchemy import select

from chipwise.catalog import platform_of
from chipwise.models.scan import ScanDocument
from chipwise.store import get_session_factory
from chipwise.store.tables import MetricCoverage, Resource
from chipwise_devkit.demo.account import demo_resources
from chipwise_devkit.demo.runner import DemoContext
from chipwise_devkit.emulator import Emulator


def test_stage_20_collects_the_demo_account(
    aws: Emulator, sqlite_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Given the demo account seeded by stage 10, the demo's store in the environment as `chipwise demo` sets it
    monkeypatch.setenv("CHIPWISE_DATABASE_URL", sqlite_url)
    ctx = DemoContext(out_dir=tmp_path, database_url=sqlite_url, emulator=aws, console=Console(file=io.StringIO()))
    importlib.import_module("chipwise_devkit.demo.stages.10_seed").STAGE.run(ctx)
    # When stage 20 runs
    importlib.import_module("chipwise_devkit.demo.stages.20_scan").STAGE.run(ctx)
    # Then the scan document is written and shared, with every accelerator resource and every dollar
    document: ScanDocument = ctx.results["scan"]
    assert json.loads((tmp_path / "scan.json").read_text()) == document.model_dump(mode="json")
    live = [r for r in demo_resources() if not r.retired_hours_ago]
    accelerated = {r.name for r in live if r.kind != "ec2_instance" or platform_of(r.instance_type) != "cpu"}
    accelerated |= {f"{r.name}/{c.name}" for r in live for c in r.components}  # inference components
    # the endpoint retired by the earlier scans is gone; the instance AWS Batch (moto) launched for the warm pool's
    # minvCpus (one unnamed trn1.32xlarge) is seen as the EC2 instance it is
    launched = {r.name for r in document.resources if r.kind == "ec2_instance" and r.name.startswith("i-")}
    assert [r.instance_type for r in document.resources if r.name in launched] == ["trn1.32xlarge"]
    assert {r.name for r in document.resources} - launched == accelerated
    assert ctx.results["retired"] == ["translate-inf2-retired"]
    cent = Decimal("0.01")
    # the final scan is priced from the demo's bill: each resource at its effective cost (Spot, the Savings Plan),
    # not Cost Explorer's on-demand summary (which also has the storage lines the bill's resources do not)
    from chipwise_devkit.demo.bill import demo_bill_lines

    billed = sum(
        Decimal(str(line.sp_effective_cost if line.sp_arn else line.unblended_cost))
        for line in demo_bill_lines(ctx.results["seeded"])
        if line.line_item_type in ("Usage", "SavingsPlanCoveredUsage") and not line.split_parent
    )
    apart = sum((Decimal(item.usd) for item in document.costs.not_attributed), Decimal(0))
    assert document.costs.source == "bill"
    # spend is the bill's: the resources' lines plus what no resource carries (unused commitment, tax, the credit)
    assert document.costs.total_usd.quantize(cent) == (billed + apart).quantize(cent)
    assert {item.category for item in document.costs.not_attributed} >= {"commitment_unused", "tax", "credit"}
    # Spot and the Savings Plans cost less than on demand (the instances' lines; the Bedrock throughput, billed by
    # model unit, and the held capacity, notebooks and warm-pool instance the bill has lines for are not in the
    # seeded Cost Explorer data)
    from chipwise_devkit.demo.bill import held_lines

    held = {line.resource_id for line in held_lines(ctx.results["seeded"], [ctx.results["seeded"].now.date()])}
    assert len(held) == 4  # the notebook, the Studio app, the unused reservation, the warm pool's instance
    instances = sum(
        Decimal(str(line.sp_effective_cost if line.sp_arn else line.unblended_cost))
        for line in demo_bill_lines(ctx.results["seeded"])
        if line.line_item_type in ("Usage", "SavingsPlanCoveredUsage")
        and not line.split_parent
        and line.product_code != "AmazonBedrock"
        and line.resource_id not in held
    )
    assert instances < ctx.results["seeded"].total_cost
    # And every neuron-monitor object was ingested, the cut-off line reported, the rest kept
    neuron = ctx.results["neuron_ingest"]
    assert neuron and all(r.accepted for r in neuron)
    assert [m.line for r in neuron for m in r.malformed] == [4]
    with get_session_factory(sqlite_url)() as session:
        rows = session.execute(
            select(Resource.name, MetricCoverage.exists)
            .join(MetricCoverage, MetricCoverage.resource_id == Resource.id)
            .where(MetricCoverage.namespace == "neuron-monitor")
        ).all()
    reporting = {name for name, exists in rows if exists}
    assert reporting == {
        r.name for r in demo_resources() if r.kind == "ec2_instance" and r.neuron is not None and not r.eks_cluster
    }
    assert "inf1-legacy-no-agent" in {name for name, exists in rows if not exists}
    labels = dict(ctx.summary)
    assert "malformed" in labels["Neuron telemetry"] and "GetMetricData" in labels["Scan"]
