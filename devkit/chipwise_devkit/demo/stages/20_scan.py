"""Stage 2: collect the demo account: neuron-monitor reports from S3, then the scan (inventory, Cost Explorer,
CloudWatch, rules), exactly as the ``ingest_neuron`` and ``scan_account`` Lambdas would."""

from __future__ import annotations

import json
from collections import Counter
from datetime import datetime, timedelta
from decimal import Decimal

from botocore.exceptions import ClientError
from sqlalchemy.orm import Session, sessionmaker

from chipwise.aws import AwsContext, aws_context
from chipwise.models.neuron import NeuronIngestResult
from chipwise.pipeline.bill_ingest import ingest_bill
from chipwise.pipeline.neuron_ingest import ingest_prefix
from chipwise.pipeline.scan import run_scan
from chipwise.presentation import plural
from chipwise.settings import get_settings
from chipwise.store import get_session_factory
from chipwise.store.repositories import bill as bill_store
from chipwise_devkit.bill_export import upload_export
from chipwise_devkit.demo.account import demo_resources
from chipwise_devkit.demo.bill import BILL_BUCKET, BILL_PREFIX, write_demo_export
from chipwise_devkit.demo.runner import DemoContext, Stage
from chipwise_devkit.demo.seed import SeededAccount


def _ensure_bus(aws: AwsContext, name: str) -> None:
    """The Chipwise event bus, as the SAM template creates it in a deployment."""
    events = aws.client("events")
    try:
        events.describe_event_bus(Name=name)
    except ClientError as exc:
        if exc.response.get("Error", {}).get("Code") != "ResourceNotFoundException":
            raise
        events.create_event_bus(Name=name)


def _neuron_summary(results: list[NeuronIngestResult]) -> str:
    accepted = [r for r in results if r.accepted]
    malformed = [f"{r.source.rsplit('/', 2)[-2]} line {m.line}" for r in accepted for m in r.malformed]
    text = (
        f"{len(accepted)}/{len(results)} objects, {sum(r.reports for r in accepted):,} reports, "
        f"{sum(r.rollups for r in accepted):,} hourly rollups for {len({i for r in accepted for i in r.instances})} "
        "instances"
    )
    if malformed:
        text += f"; {plural(len(malformed), 'malformed line')} skipped ({', '.join(malformed[:3])})"
    return text


# The demo's daily scans before today's: an endpoint retired between the first two resolves its finding, and
# today's scan measures the saving it realised from the Cost Explorer days after it (three at least).
EARLIER_SCANS_DAYS_AGO = (5, 4)


def _earlier_daily_scans(ctx: DemoContext, factory: sessionmaker[Session], now: datetime) -> None:
    retired = [r for r in demo_resources() if r.retired_hours_ago]
    if not retired:
        return
    scans = []
    for days_ago in EARLIER_SCANS_DAYS_AGO:
        at = now - timedelta(days=days_ago)
        for resource in retired:
            if now - timedelta(hours=resource.retired_hours_ago) <= at:
                _delete_endpoint(aws_context(ctx.region), resource.name)
        document = run_scan(aws_context(ctx.region), factory, account_id=ctx.account_id, region=ctx.region, now=at)
        scans.append(f"{at:%Y-%m-%d %H:%M} ({len(document.findings)} open findings)")
    ctx.results["retired"] = [r.name for r in retired]
    ctx.summary.append(
        (
            "Earlier daily scans",
            f"{', '.join(scans)}; retired in between: {', '.join(r.name for r in retired)}",
        )
    )


def _delete_endpoint(aws: AwsContext, name: str) -> None:
    sagemaker = aws.client("sagemaker")
    try:
        sagemaker.delete_endpoint(EndpointName=name)
    except ClientError as exc:
        if exc.response.get("Error", {}).get("Code") not in ("ValidationException", "ResourceNotFound"):
            raise


def _ingest_bill(ctx: DemoContext, factory: sessionmaker[Session], aws: AwsContext, seeded: SeededAccount) -> None:
    """The account's CUR 2.0 export delivered to S3 and ingested with DuckDB, as `chipwise bill ingest` does: from
    here on the scan prices each resource from the bill."""
    export = write_demo_export(seeded, ctx.out_dir / "bill")
    s3 = aws.client("s3")
    s3.create_bucket(Bucket=BILL_BUCKET)
    uri = upload_export(s3, export, BILL_BUCKET, BILL_PREFIX)
    periods = sorted(p.name.split("=", 1)[1] for p in (export / "metadata").iterdir())
    stored = ingest_bill(aws, factory, uri=uri, periods=periods, engine="duckdb")
    with factory() as session:
        commitments = bill_store.commitments(session, seeded.account_id)
        teams: dict[str, Decimal] = {}
        for line in bill_store.spend(session, seeded.account_id, get_settings().team_tag_keys):
            teams[line.team or "(no team tag)"] = (
                teams.get(line.team or "(no team tag)", Decimal(0)) + line.effective_cost
            )
    plans = [
        f"{c.arn.rsplit('/', 1)[-1]} ({' '.join(x for x in (c.offering_type, c.family) if x) or c.kind}, {period}): "
        "covers "
        f"{c.covered_accelerator_hours / c.accelerator_hours:.1%} of the accelerator hours, "
        f"{c.used_cost / (c.used_cost + c.unused_cost):.1%} used, ends {c.end_date}"
        for c, period in commitments
        if c.accelerator_hours > 0 and c.used_cost + c.unused_cost > 0
    ]
    ctx.results["bill"] = stored
    ctx.summary.append(
        (
            "Bill (AWS Data Exports, CUR 2.0, DuckDB)",
            f"{uri}: {', '.join(f'{s.billing_period} {s.line_items:,} line items' for s in stored)}; "
            f"Savings Plan {'; '.join(plans)}; by team: "
            + ", ".join(f"{team} ${usd:,.2f}" for team, usd in sorted(teams.items(), key=lambda kv: -kv[1])),
        )
    )


def _run(ctx: DemoContext) -> None:
    settings = get_settings()
    factory = get_session_factory(ctx.database_url)
    setup = aws_context(ctx.region)  # the ingest Lambda's clients; the scan counts only its own calls
    if settings.event_bus_name:
        _ensure_bus(setup, settings.event_bus_name)
    neuron = ingest_prefix(setup, factory, settings.artifacts_bucket)
    seeded = ctx.results.get("seeded")
    now = getattr(seeded, "now", None)
    if now is not None:
        _earlier_daily_scans(ctx, factory, now)  # priced from Cost Explorer: no bill stored yet (the fallback)
    if seeded is not None:
        _ingest_bill(ctx, factory, setup, seeded)
    document = run_scan(aws_context(ctx.region), factory, account_id=ctx.account_id, region=ctx.region, now=now)
    ctx.results["scan"] = document
    ctx.results["neuron_ingest"] = neuron
    ctx.write("scan.json", json.dumps(document.model_dump(mode="json"), indent=2) + "\n")
    platforms = Counter(r.platform for r in document.resources)
    by_platform = ", ".join(f"{count} {platform}" for platform, count in sorted(platforms.items()))
    calls = document.api_calls
    ctx.summary.append(("Neuron telemetry", _neuron_summary(neuron)))
    ctx.summary.append(
        (
            "Scan",
            f"{len(document.resources)} resources ({by_platform}); cost window {document.window.start} to "
            f"{document.window.end}; {sum(calls.values())} API calls "
            f"({calls.get('cloudwatch.GetMetricData', 0)} GetMetricData, {calls.get('ce.GetCostAndUsage', 0)} "
            f"GetCostAndUsage); costs from {document.costs.source.replace('_', ' ')}"
            + (f" ({', '.join(document.costs.billing_periods)})" if document.costs.billing_periods else "")
            + f"; status {document.status}"
            + (f" ({'; '.join(e.source + ': ' + e.message for e in document.errors)})" if document.errors else ""),
        )
    )


STAGE = Stage("Collect the demo account (neuron-monitor reports, inventory, costs, metrics)", _run)
