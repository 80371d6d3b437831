"""Stage 1: seed the emulator with the demo account."""

from __future__ import annotations

from chipwise_devkit.demo.runner import DemoContext, Stage
from chipwise_devkit.demo.seed import seed_demo_account


def _run(ctx: DemoContext) -> None:
    seeded = seed_demo_account(ctx.emulator, region=ctx.region)
    ctx.results["seeded"] = seeded
    ctx.summary.append(
        (
            "Demo account",
            f"{ctx.account_id}: {len(seeded.arns)} resources, {seeded.metric_points:,} CloudWatch datapoints, "
            f"{seeded.neuron_reports:,} neuron-monitor reports in {seeded.neuron_objects} S3 objects, "
            "14 days of Cost Explorer data and the same days' bill (spend: the executive summary's)",
        )
    )


STAGE = Stage("Seed the demo account in the AWS emulator", _run)
