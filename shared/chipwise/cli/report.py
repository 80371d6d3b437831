"""``chipwise report``: the HTML report of a scan (one static file: totals, charts, heat-maps, evidence)."""

from __future__ import annotations

from pathlib import Path

import typer

from chipwise.cli.common import check_account_id, check_region, err, no_match_line, out


def report_command(
    scan: str | None = typer.Option(None, "--scan", help="Scan id (or its first characters); default: the latest."),
    account: str | None = typer.Option(None, "--account", help="The latest scan of this account."),
    region: str | None = typer.Option(None, "--region", help="The latest scan in this region."),
    team: str | None = typer.Option(
        None, "--team", help="The organisation's report of this team's findings (its resources' team tag)."
    ),
    output_dir: Path = typer.Option(Path(), "--output-dir", "-o", help="Folder to write the report into."),
) -> None:
    """Write the HTML report of a scan: totals (measured apart from estimated), waste by rule and by team, the
    trend across scans, utilisation heat-maps of the top findings and the top 200 findings' evidence, with every
    finding in a CSV beside it. No script, nothing fetched. On a store holding scans of several accounts, without
    --scan or --account: the organisation's report (the latest scan of every account and region: totals, a row per
    account, savings per team, the top 200 findings; every finding in the CSV)."""
    from chipwise.errors import InvalidInput
    from chipwise.presentation import plural

    check_account_id(account)
    check_region(region)
    if team is not None and (scan is not None or account is not None):
        raise InvalidInput("--team makes the organisation's report: give it without --scan and --account")
    if scan is None and account is None:
        from chipwise.pipeline.org_report import write_organisation_report

        org = write_organisation_report(region=region, team=team, output_dir=output_dir)
        if org is not None:
            if org.path is None or org.csv_path is None:  # nothing matched: one line, as `findings` says it
                out.print(no_match_line("finding of the latest scans", team=team, region=region), highlight=False)
                return
            accounts = f"{plural(org.accounts, 'account')}, {plural(org.scans, 'scan')} (the latest of each region)"
            _written(f"{_findings(org.findings, org.shown, org.csv_path)}, {accounts}", org.path)
            return
    from chipwise.pipeline.report import write_scan_report

    written = write_scan_report(scan_id=scan, account_id=account, region=region, output_dir=output_dir)
    trend = plural(written.scans, "scan")
    _written(f"{_findings(written.findings, written.shown, written.csv_path)}, {trend} in the trend", written.path)


def _findings(findings: int, shown: int, csv_path: Path) -> str:
    """ "250 findings (the top 200 in the HTML, every one in <csv>)"."""
    from chipwise.presentation import plural

    top = f" (the top {shown} in the HTML, every one in {csv_path.name})" if shown < findings else ""
    return f"{plural(findings, 'finding')}{top}"


def _written(summary: str, path: Path) -> None:
    err.print(summary, highlight=False, soft_wrap=True)
    out.print(str(path), highlight=False, markup=False, soft_wrap=True)


def register(app: typer.Typer) -> None:
    app.command("report")(report_command)
