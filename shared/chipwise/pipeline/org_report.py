"""``chipwise report`` of an organisation: the latest finished scan of every account and region in one HTML file,
every finding in the CSV beside it, built in one read transaction one scan at a time."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from chipwise.clock import utcnow
from chipwise.pipeline._store import store_scope
from chipwise.report.naming import store_accounts
from chipwise.settings import get_settings


@dataclass(frozen=True)
class WrittenOrgReport:
    path: Path | None  # None: nothing matched the filters, and no file was written
    csv_path: Path | None
    findings: int  # every open or withdrawn finding of the scans reported
    shown: int  # written out in the HTML
    scans: int
    accounts: int


def write_organisation_report(*, region: str | None, team: str | None, output_dir: Path) -> WrittenOrgReport | None:
    """The organisation's report (of ``region`` and ``team`` when given), written with its CSV; None when the
    store holds finished scans of one account only and no team is asked for (``chipwise report`` then writes the
    scan report, as it always has). When no scan holds a finding of the team (or the store no scan of the region),
    nothing is written (the CSV begun is removed, and the folder if this made it): paths None, 0 scans."""
    now = utcnow()
    with store_scope() as session:
        if team is None and store_accounts(session) <= 1:
            return None
        # Imported here: a store of one account (the scan report's) needs none of the organisation's modules.
        from chipwise.report.organisation import build_org_report, org_report_filename, write_org_report

        made = not output_dir.exists()
        output_dir.mkdir(parents=True, exist_ok=True)
        csv_path = output_dir / (org_report_filename(now, region, team).removesuffix(".html") + ".csv")
        with csv_path.open("w", encoding="utf-8", newline="") as stream:
            view = build_org_report(
                session, stream, now=now, region=region, team=team, team_tag_keys=get_settings().team_tag_keys
            )
    if view.scans == 0:  # nothing matches: no report of nothing
        csv_path.unlink()
        if made:
            output_dir.rmdir()
        return WrittenOrgReport(path=None, csv_path=None, findings=0, shown=0, scans=0, accounts=0)
    path = write_org_report(view, output_dir)
    return WrittenOrgReport(
        path=path,
        csv_path=csv_path,
        findings=view.findings_total,
        shown=len(view.findings),
        scans=view.scans,
        accounts=view.accounts_total,
    )
