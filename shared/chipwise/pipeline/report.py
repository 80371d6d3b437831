"""``chipwise report``: the HTML report of a scan, built in one read transaction and written to a folder."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from chipwise.clock import utcnow
from chipwise.pipeline._store import store_scope
from chipwise.pipeline.commitments import report_with_commitments
from chipwise.report.build import build_report, find_scan, write_report
from chipwise.settings import get_settings


@dataclass(frozen=True)
class WrittenReport:
    path: Path
    csv_path: Path  # every finding; the HTML writes out the top ones
    findings: int  # every finding of the scan's account and region
    shown: int  # written out in the HTML
    scans: int


def write_scan_report(
    *, scan_id: str | None, account_id: str | None, region: str | None, output_dir: Path
) -> WrittenReport:
    """Find the scan (by id, else the latest of the account and region), build its report and write it."""
    with store_scope() as session:
        found = find_scan(session, scan_id=scan_id, account_id=account_id, region=region)
        view = build_report(session, found, now=utcnow(), team_tag_keys=get_settings().team_tag_keys)
        view = report_with_commitments(session, view, now=utcnow())
    path = write_report(view, output_dir)
    return WrittenReport(
        path=path,
        csv_path=path.with_name(view.csv_filename),
        findings=view.findings_total,
        shown=len(view.findings),
        scans=view.scans,
    )
