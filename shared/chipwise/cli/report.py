"""``chipwise report``: the HTML report of a scan (one static file: totals, charts, heat-maps, evidence)."""

from __future__ import annotations

from pathlib import Path

import typer

from chipwise.cli.common import err, out, store_session
from chipwise.clock import utcnow
from chipwise.errors import InvalidInput
from chipwise.models.common import is_account_id
from chipwise.pipeline.commitments import report_with_commitments
from chipwise.presentation import plural
from chipwise.report.build import build_report, find_scan, write_report
from chipwise.settings import get_settings


def report_command(
    scan: str | None = typer.Option(None, "--scan", help="Scan id (or its first characters); default: the latest."),
    account: str | None = typer.Option(None, "--account", help="The latest scan of this account."),
    region: str | None = typer.Option(None, "--region", help="The latest scan in this region."),
    output_dir: Path = typer.Option(Path(), "--output-dir", "-o", help="Folder to write the report into."),
) -> None:
    """Write the HTML report of a scan: totals (measured apart from estimated), waste by rule, the trend across
    scans, utilisation heat-maps of the top findings, and every finding's evidence. No script, nothing fetched."""
    if account is not None and not is_account_id(account):
        raise InvalidInput(f"--account {account!r} is not a 12-digit AWS account id")
    with store_session() as session:
        found = find_scan(session, scan_id=scan, account_id=account, region=region)
        view = build_report(session, found, now=utcnow(), team_tag_keys=get_settings().team_tag_keys)
        view = report_with_commitments(session, view, now=utcnow())
    path = write_report(view, output_dir)
    err.print(f"{plural(len(view.findings), 'finding')}, {plural(view.scans, 'scan')} in the trend", highlight=False)
    out.print(str(path), highlight=False, markup=False, soft_wrap=True)


def register(app: typer.Typer) -> None:
    app.command("report")(report_command)
