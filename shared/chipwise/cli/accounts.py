"""``chipwise accounts``: which accounts the scheduled scan covers, and fanning the scans out."""

from __future__ import annotations

import typer

from chipwise.cli.common import out, print_json, settings

accounts_app = typer.Typer(help="The accounts a scheduled scan covers; fan the scans out.", no_args_is_help=True)


@accounts_app.command("list")
def list_command(json_output: bool = typer.Option(False, "--json", help="Print the scan requests as JSON.")) -> None:
    """The (account, region) pairs a scheduled scan would queue, with the role each is scanned through."""
    from rich.table import Table

    from chipwise.aws import aws_context
    from chipwise.pipeline.fanout import member_accounts, scan_requests
    from chipwise.presentation import plural

    config = settings()
    aws = aws_context(config.region)
    requests = list(scan_requests(member_accounts(aws, config), config, aws.account_id()))
    if json_output:
        print_json([r.model_dump(mode="json") for r in requests])
        return
    table = Table(title=plural(len(requests), "scan"), title_justify="left")
    for column in ("account", "region", "role"):
        table.add_column(column)
    for r in requests:
        table.add_row(r.account_id, r.region, r.role_arn or "(own credentials)")
    out.print(table)


@accounts_app.command("dispatch")
def dispatch_command(
    dry_run: bool = typer.Option(False, "--dry-run", help="Show what would be queued; send nothing."),
) -> None:
    """Queue one scan per (account, region) on the scan queue (what the daily schedule does)."""
    from chipwise.aws import aws_context
    from chipwise.pipeline.fanout import dispatch_scans
    from chipwise.presentation import plural

    config = settings()
    report = dispatch_scans(aws_context(config.region), config, dry_run=dry_run)
    verb = "would queue" if dry_run else "queued"
    out.print(f"{verb} {plural(len(report.requests) if dry_run else report.sent, 'scan')}")
    for failure in report.failed:
        out.print(f"[red]failed[/] {failure}")


def register(app: typer.Typer) -> None:
    app.add_typer(accounts_app, name="accounts")
