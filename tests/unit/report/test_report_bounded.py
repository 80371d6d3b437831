"""Issue 37: the report of an account with thousands of findings stays small. The HTML writes out the top
TOP_FINDINGS findings and says how many more there are; every finding is in the CSV beside it. The bound is
structural: past the top, more findings do not make the HTML longer."""

from __future__ import annotations

import csv
import sys
from datetime import UTC, date, datetime
from pathlib import Path

from sqlalchemy.orm import Session, sessionmaker

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "notify"))
from notify_factories import add_account, add_finding, add_resource

from chipwise.report.build import TOP_FINDINGS, build_report, render_report, write_report
from chipwise.store.tables import Scan

NOW = datetime(2026, 11, 20, 6, tzinfo=UTC)
HTML_BOUND = 2 * 2**20  # the 2 MB for an organisation of 50,000 resources
TEAMS = 7


def _account_with(session_factory: sessionmaker[Session], findings: int, first: int = 0) -> None:
    with session_factory.begin() as session:
        if first == 0:
            add_account(session)
            session.add(
                Scan(
                    id="scan-1",
                    account_id="123456789012",
                    region="us-east-1",
                    status="succeeded",
                    started_at=NOW,
                    finished_at=NOW,
                    window_start=date(2026, 11, 6),
                    window_end=date(2026, 11, 20),
                )
            )
        for index in range(first, first + findings):
            # each saves more than its porting (days: $4,000) over 12 months: every one counts
            name = f"endpoint-{index:05d}"
            add_resource(session, name, tags={"team": f"team-{index % TEAMS}"})
            add_finding(session, name, savings=str(400 + index % 900), first_seen=NOW)


def _html(session_factory: sessionmaker[Session]) -> tuple[str, int, int]:
    with session_factory() as session:
        scan = session.get(Scan, "scan-1")
        view = build_report(session, scan, now=NOW, team_tag_keys=["team"])  # type: ignore[arg-type]
        return render_report(view), len(view.findings), view.more_findings


def test_the_html_shows_the_top_findings_and_the_csv_every_one(
    session_factory: sessionmaker[Session], tmp_path: Path
) -> None:
    # Given an account with a few more findings than the HTML writes out
    _account_with(session_factory, TOP_FINDINGS + 50)
    html, shown, more = _html(session_factory)
    size_at_top = len(html.encode())
    assert shown == TOP_FINDINGS and more == 50
    assert html.count('<article class="finding"') == TOP_FINDINGS
    assert f"… and 50 more findings (of {TOP_FINDINGS + 50:,})" in html
    # When it grows ten times
    _account_with(session_factory, 9 * TOP_FINDINGS, first=TOP_FINDINGS + 50)
    html, shown, more = _html(session_factory)
    # Then the HTML keeps its size (the "n more" line aside) and stays under the bound
    assert shown == TOP_FINDINGS and more == 10 * TOP_FINDINGS - TOP_FINDINGS + 50
    assert abs(len(html.encode()) - size_at_top) < 2_000 and len(html.encode()) < HTML_BOUND
    # with the saving of every finding summed per team (one row a team, whatever the number of findings)
    assert '<section id="by-team">' in html and html.count("data-team=") == TEAMS
    team_0 = sum(1 for index in range(10 * TOP_FINDINGS + 50) if index % TEAMS == 0)
    assert f"<tr><td>team-0</td><td>{team_0} findings</td>" in html
    # And the CSV beside the file has every finding
    with session_factory() as session:
        view = build_report(session, session.get(Scan, "scan-1"), now=NOW)  # type: ignore[arg-type]
        path = write_report(view, tmp_path)
    rows = list(csv.DictReader((tmp_path / view.csv_filename).open(encoding="utf-8")))
    assert path.exists() and len(rows) == 10 * TOP_FINDINGS + 50
