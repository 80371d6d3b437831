"""``chipwise scan``: collect an account (inventory, costs, metrics, Neuron telemetry), store it, run the rules."""

from __future__ import annotations

from collections import Counter
from decimal import Decimal
from typing import TYPE_CHECKING

import typer

from chipwise.cli.common import err, out, print_json, progress, settings

if TYPE_CHECKING:
    from chipwise.aws import AwsContext
    from chipwise.models.scan import ScanDocument
    from chipwise.pipeline._store import SessionFactory

STAGES = ("inventory", "costs", "metrics", "neuron", "rules", "event")


def _context(account: str | None, region: str) -> tuple[AwsContext, str]:
    """The home account's clients, or a member account's through its Chipwise role (with the ExternalId)."""
    from chipwise.aws import AssumeRole, aws_context

    home = aws_context(region)
    caller = home.account_id()
    if account is None or account == caller:
        return home, caller
    cfg = settings()
    role = AssumeRole(f"arn:aws:iam::{account}:role/{cfg.member_role_name}", cfg.external_id)
    return aws_context(region, role), account


def scan_command(
    account: str | None = typer.Option(
        None, "--account", help="Account to scan (default: the caller's); others through the member role."
    ),
    regions: list[str] | None = typer.Option(
        None,
        "--region",
        help="Region to scan; repeat for several (default: CHIPWISE_REGIONS, else the home region: CHIPWISE_REGION, "
        "else AWS_REGION, AWS_DEFAULT_REGION or the profile's region).",
    ),
    json_output: bool = typer.Option(False, "--json", help="Print the scan document (JSON) on stdout."),
    lookback_days: int | None = typer.Option(
        None, "--lookback-days", min=1, max=63, help="Days of metrics and costs to read (default 14)."
    ),
) -> None:
    """Scan an account: inventory, Cost Explorer, CloudWatch and Neuron telemetry into the store, then the rules."""
    from botocore.exceptions import ClientError

    from chipwise.errors import UpstreamError
    from chipwise.pipeline._store import scan_factory
    from chipwise.pipeline.scan import AWS_ERRORS, record_failed_start

    cfg = settings()
    factory = scan_factory()
    documents: list[ScanDocument] = []
    for region in regions or cfg.scan_regions:
        try:
            aws, account_id = _context(account, region)
        except AWS_ERRORS as exc:  # GetCallerIdentity throttled or denied, the member role not assumed
            if not isinstance(exc, ClientError):
                raise  # no credentials or no network: the command's one-line error says how to fix it
            document = record_failed_start(
                factory, account_id=account, region=region, exc=exc, lookback_days=lookback_days or cfg.lookback_days
            )
        else:
            document = _scan_with_progress(aws, factory, account_id, region, lookback_days)
        documents.append(document)
        if not json_output:
            _print_summary(document)
    if json_output:
        dumped = [d.model_dump(mode="json") for d in documents]
        print_json(dumped[0] if len(dumped) == 1 else dumped)
    failed = [d for d in documents if d.status == "failed"]
    if failed:
        reasons = "; ".join(f"{e.source}: {e.message}" for e in failed[0].errors[:3])
        raise UpstreamError(f"scan of {failed[0].account_id} in {failed[0].region} failed: {reasons}")


def _scan_with_progress(
    aws: AwsContext, factory: SessionFactory, account_id: str, region: str, lookback_days: int | None
) -> ScanDocument:
    """One scan with a progress line on stderr, advanced stage by stage."""
    from chipwise.pipeline.scan import run_scan

    with progress() as bar:
        task = bar.add_task(f"scanning {account_id} in {region}", total=len(STAGES))

        def advance(stage: str) -> None:
            bar.update(task, description=f"{account_id} {region}: {stage}", completed=STAGES.index(stage))

        document = run_scan(
            aws, factory, account_id=account_id, region=region, lookback_days=lookback_days, on_stage=advance
        )
        bar.update(task, description=f"{account_id} {region}: {document.status}", completed=len(STAGES))
    return document


def _print_summary(document: ScanDocument) -> None:
    from rich.table import Table

    from chipwise.economics import usd
    from chipwise.presentation import hours_label

    platforms = Counter((r.platform, r.kind) for r in document.resources)
    table = Table(title=f"{document.account_id} {document.region}: {len(document.resources)} resources")
    table.add_column("platform")
    table.add_column("kind")
    table.add_column("count", justify="right")
    for (platform, kind), count in sorted(platforms.items()):
        table.add_row(platform, kind, str(count))
    out.print(table)
    source = (
        f"effective cost from the bill ({', '.join(document.costs.billing_periods)})"
        if document.costs.source == "bill"
        else "cost from Cost Explorer"
    )
    costs = Table(title=f"{source}, {document.window.start} to {document.window.end} (exclusive)")
    costs.add_column("instance type")
    costs.add_column("cost", justify="right")
    for instance_type, amount in sorted(document.costs.by_instance_type.items(), key=lambda kv: -kv[1]):
        costs.add_row(instance_type, _money(amount))
    costs.add_row("[bold]total[/]", f"[bold]{_money(document.costs.total_usd)}[/]")
    out.print(costs)
    for unused in document.costs.unused_reservations:
        out.print(
            f"{unused.label}: {unused.instance_type} {hours_label(unused.hours)}, {usd(unused.usd)}"
            + (" (accelerator capacity)" if unused.accelerator else ""),
            highlight=False,
        )
    if document.costs.unknown_usage_types_count:
        listed = ", ".join(u.usage_type for u in document.costs.unknown_usage_types[:3])
        out.print(
            f"usage types not recognised (kept in the totals): {document.costs.unknown_usage_types_count} ({listed})",
            highlight=False,
        )
    calls = ", ".join(f"{name} {count}" for name, count in document.api_calls.items())
    out.print(f"API calls: {sum(document.api_calls.values())} ({calls})", highlight=False)
    out.print(f"findings: {len(document.findings)}")
    colour = {"succeeded": "green", "partial": "yellow", "failed": "red"}[document.status]
    out.print(f"status: [{colour}]{document.status}[/] (scan {document.scan_id})")
    for error in document.errors:
        err.print(f"[yellow]{error.source}[/]: {error.code or ''} {error.message}", highlight=False)


def _money(amount: Decimal) -> str:
    from chipwise.economics import usd

    return usd(amount)


def register(app: typer.Typer) -> None:
    app.command("scan")(scan_command)
