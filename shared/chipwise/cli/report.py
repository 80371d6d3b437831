"""``chipwise report``: the HTML report of a scan (one static file: totals, charts, heat-maps, evidence)."""

from __future__ import annotations

from pathlib import Path

import typer

from chipwise.cli.common import check_account_id, check_region, err, out


def report_command(
    scan: str | None = typer.Option(None, "--scan", help="Scan id (or its first characters); default: the latest."),
    account: str | None = typer.Option(None, "--account", help="The latest scan of this account."),
    region: str | None = typer.Option(None, "--region", help="The latest scan in this region."),
    output_dir: Path = typer.Option(Path(), "--output-dir", "-o", help="Folder to write the report into."),
) -> None:
    """Write the HTML report of a scan: totals (measured apart from estimated), waste by rule and by team, the
    trend across scans, utilisation heat-maps of the top findings and the top 200 findings' evidence, with every
    finding in a CSV beside it. No script, nothing fetched."""
    from chipwise.pipeline.report import write_scan_report
    from chipwise.presentation import plural

    check_account_id(account)
    check_region(region)
    written = write_scan_report(scan_id=scan, account_id=account, region=region, output_dir=output_dir)
    top = (
        f" (the top {written.shown} in the HTML, every one in {written.csv_path.name})"
        if written.shown < written.findings
        else ""
    )
    err.print(
        f"{plural(written.findings, 'finding')}{top}, {plural(written.scans, 'scan')} in the trend",
        highlight=False,
        soft_wrap=True,
    )
    out.print(str(written.path), highlight=False, markup=False, soft_wrap=True)


def register(app: typer.Typer) -> None:
    app.command("report")(report_command)
