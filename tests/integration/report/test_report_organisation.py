"""Issue 37: the organisation's report. On a store holding scans of many accounts, `chipwise report` (without --scan
or --account) reports the latest scan of every account and region: the totals summed from each scan's ledger, a row
per account, the savings per team, the organisation's top 200 findings, and every finding in the CSV beside it. At
50,000 resources it stays under 2 MB. Stores are written with the organisation benchmark's builder (the findings
lifecycle and finished scans through the repositories), on SQLite and PostgreSQL."""

from __future__ import annotations

import csv
import io
import re
import sys
from collections.abc import Iterator
from decimal import Decimal
from pathlib import Path

import pytest
from sqlalchemy import event, func, select, update

from chipwise.cli import main
from chipwise.clock import utcnow
from chipwise.economics import usd
from chipwise.ledger_csv import CSV_COLUMNS, write_csv
from chipwise.links import console_url
from chipwise.presentation import Headline, action_words, ledger, ledger_fields, rank, saving_facts, target_label
from chipwise.report.build import TOP_FINDINGS, build_report, find_scan, write_report
from chipwise.report.organisation import ACCOUNTS_SHOWN, OrgReportView, build_org_report, render_org_report
from chipwise.settings import get_settings
from chipwise.store.engine import get_engine
from chipwise.store.repositories.finding_pages import FindingFilter, FindingPages
from chipwise.store.session import get_session_factory
from chipwise.store.tables import Finding, Resource

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))  # the repository root: benchmarks/
from benchmarks.bench_org import TEAMS, build

ORGANISATION = 200  # accounts: 200 x 250 = 50,000 resources
MIB = 1024 * 1024
TEAM_KEYS = ("team", "user:team")


def _store(db_url: str, accounts: int, monkeypatch: pytest.MonkeyPatch, *, bill: bool = False) -> str:
    build(db_url, accounts, 1, bill=bill)  # one day: every account's findings opened by its finished scan
    monkeypatch.setenv("CHIPWISE_DATABASE_URL", db_url)
    get_settings.cache_clear()
    return db_url


def _written(out: Path) -> tuple[str, list[dict[str, str]]]:
    (html,) = out.glob("*.html")
    (table,) = out.glob("*.csv")
    assert table.name == html.name.removesuffix(".html") + ".csv"
    with table.open(encoding="utf-8", newline="") as stream:
        return html.read_text(encoding="utf-8"), list(csv.DictReader(stream))


def _stored_findings(db_url: str) -> int:
    with get_session_factory(db_url)() as session:
        return int(session.scalar(select(func.count()).where(Finding.status.in_(("open", "withdrawn")))) or 0)


def test_the_report_of_50000_resources_stays_under_2_mb(
    db_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # Given an organisation of 200 accounts x 250 resources (50,000), each account scanned
    url = _store(db_url, ORGANISATION, monkeypatch)
    # When `chipwise report` runs without --scan or --account
    assert main(["report", "-o", str(tmp_path / "out")]) == 0
    written = Path(capsys.readouterr().out.strip())
    html, rows = _written(tmp_path / "out")
    # Then it writes the organisation's report, under 2 MB whatever the number of findings
    assert re.fullmatch(r"chipwise-report-organisation-\d{8}T\d{4}Z\.html", written.name)
    assert len(html.encode()) < 2 * MIB
    assert "Chipwise organisation report" in html and "<script" not in html
    # ...with exactly the top 200 findings written out, and the rest counted and named in the CSV
    findings = _stored_findings(url)
    assert findings > TOP_FINDINGS
    assert html.count('<article class="finding"') == TOP_FINDINGS
    assert f"… and {findings - TOP_FINDINGS:,} more findings (of {findings:,})" in html
    # ...a row per account (the largest, then how many more) and per team
    assert html.count("<tr data-account=") == ACCOUNTS_SHOWN
    assert f"… and {ORGANISATION - ACCOUNTS_SHOWN} more accounts (of {ORGANISATION})" in html
    assert len(set(re.findall(r'data-team="(team-\d+)"', html))) == TEAMS
    # ...and the CSV has every finding once, its counted savings the headline to the cent
    assert len(rows) == findings == len({r["finding_id"] for r in rows})
    assert len({r["account_id"] for r in rows}) == ORGANISATION
    counted = sum((Decimal(r["saving_usd"]) for r in rows if r["counted"] == "yes"), Decimal(0))
    assert f'data-figure="total">{usd(counted)}<' in html


@pytest.fixture
def three_accounts(db_url: str, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """Three accounts whose findings are every kind the ledger tells apart: estimated and measured, quick wins and
    projects (porting), withdrawn, and set apart (a price quote)."""
    url = _store(db_url, 3, monkeypatch)
    with get_session_factory(url).begin() as session:
        ids = list(session.scalars(select(Finding.id).order_by(Finding.account_id, Finding.resource_name)))
        for index, finding_id in enumerate(ids):
            changes: dict[str, object] = {}
            if index % 7 == 0:  # a benchmark measured it
                changes["measured_monthly_savings_usd"] = Decimal(100 + index)
            if index % 11 == 0:  # a migration: a project with porting
                changes |= {"recommendation": {"action": "migrate", "target_instance_type": "inf2.xlarge"}}
                changes["effort"] = "weeks"
            if index % 13 == 0:
                changes["status"] = "withdrawn"
            if index % 17 == 0:
                changes["recommendation"] = {"action": "migrate", "excluded_from_totals": "quote_needed"}
            if changes:
                session.execute(update(Finding).where(Finding.id == finding_id).values(**changes))
    yield url
    get_engine(url).dispose()


def _org_view(url: str, team: str | None = None) -> tuple[OrgReportView, str]:
    stream = io.StringIO()
    with get_session_factory(url)() as session:
        view = build_org_report(session, stream, now=utcnow(), team=team, team_tag_keys=TEAM_KEYS)
    return view, stream.getvalue()


def test_the_organisation_totals_are_the_sum_of_each_scan_report(three_accounts: str, tmp_path: Path) -> None:
    # Given each account's own scan report (its ledger and its CSV)
    url = three_accounts
    accounts = ["100000000000", "100000000001", "100000000002"]
    headlines, quick, projects, blocked, porting, spend = [], Decimal(0), Decimal(0), Decimal(0), Decimal(0), Decimal(0)
    scan_rows: list[str] = []
    ranked = []
    with get_session_factory(url)() as session:
        for account in accounts:
            report = build_report(session, find_scan(session, account_id=account), now=utcnow())
            figures = report.ledger
            headlines.append(figures.headline)
            quick += figures.quick_wins_usd
            projects += figures.projects_usd
            blocked += figures.blocked_usd
            porting += figures.porting_usd
            assert figures.spend is not None
            spend += figures.spend.monthly_usd
            write_report(report, tmp_path / account)
            scan_rows += (tmp_path / account / report.csv_filename).read_text().splitlines()[1:]
            ranked += [
                (*rank(saving_facts(d)), d.resource_name, account, d.finding_id)
                for d in (r.document for r in figures.rows)
            ]
    # When the organisation's report is built
    view, table = _org_view(url)
    totals = view.totals
    # Then its headline is the sum of the scans' headlines, field by field, to the cent
    summed = Headline(*(sum(getattr(h, f) for h in headlines) for f in Headline.__dataclass_fields__))
    assert totals.headline == summed
    assert summed.measured and summed.withdrawn and summed.quote_needed and summed.counted  # every kind is there
    assert totals.total_usd == summed.total_usd == quick + projects
    assert (totals.quick_wins_usd, totals.projects_usd, totals.blocked_usd) == (quick, projects, blocked)
    assert totals.porting_usd == porting > 0
    assert totals.spend_known and totals.spend_usd == spend
    # ...its CSV is every scan report's CSV (the same rows, each numbered in its account and region's ledger)
    assert sorted(table.splitlines()[1:]) == sorted(scan_rows)
    assert len(scan_rows) == view.findings_total == _stored_findings(url)
    # ...and its top findings are the best 200 of all the scans' ledgers, in the ledger's order
    best = [finding_id for *_, finding_id in sorted(ranked)[:TOP_FINDINGS]]
    assert [f.document.finding_id for f in view.findings] == best
    # ...with a row per account, ordered by its counted saving
    saved = {account: h.total_usd for account, h in zip(accounts, headlines, strict=True)}
    assert [(a.account_id, a.saving_usd) for a in view.accounts] == sorted(saved.items(), key=lambda a: (-a[1], a[0]))


def test_the_csv_writes_each_rows_ledger_fields_and_document(three_accounts: str) -> None:
    """The CSV's columns made row by row without :func:`ledger_fields`' dictionary (issue 37: an organisation's
    CSV holds every finding) are still its words and figures, and the document's, for every kind of row."""
    with get_session_factory(three_accounts)() as session:
        documents = FindingPages(session).page(FindingFilter(statuses=("open", "withdrawn")), limit=None)
    figures = ledger(documents)
    owners = {r.document.resource_id: f"owner-{i}" for i, r in enumerate(figures.rows) if i % 2}
    verdicts = {r.document.resource_id: ("waste", f"why {i}") for i, r in enumerate(figures.rows) if i % 3}
    stream = io.StringIO()
    write_csv(figures, stream, owners, start=5, verdicts=verdicts)
    rows = list(csv.DictReader(io.StringIO(stream.getvalue())))
    assert {r.group for r in figures.rows} == {"quick_win", "project", "blocked"}  # every kind of row is there
    assert any(r.payback_months is not None for r in figures.rows) and any(r.basis == "measured" for r in figures.rows)
    assert len(rows) == len(figures.rows)
    for index, (row, written) in enumerate(zip(figures.rows, rows, strict=True), start=5):
        d = row.document
        f = ledger_fields(row, owners.get(d.resource_id, ""))
        verdict, why = verdicts.get(d.resource_id, ("", ""))
        expected = [
            index, "yes" if row.counted else "no", f["group"], f["basis"], f["saving_usd"],
            f["net_value_12m_usd"] or "", f["one_time_cost_usd"], f["payback_months"] or "", f["verdict"],
            f["excluded_reason"] or "", verdict, why, f["owner"], d.finding_id, d.rule_id, d.status, d.account_id,
            d.region, d.resource_name, d.resource_id, d.instance_type or "", d.instance_count,
            f"{d.monthly_cost_usd:.2f}", f"{d.estimated_monthly_savings_usd:.2f}",
            "" if d.measured_monthly_savings_usd is None else f"{d.measured_monthly_savings_usd:.2f}",
            action_words(d.recommendation.action) if row.actionable else "",
            (target_label(d.recommendation) or "") if row.actionable else "",
            d.confidence if row.actionable else "", d.effort, d.first_seen.isoformat(), d.last_seen.isoformat(),
            console_url(d.resource_id, d.region, d.resource_kind, d.resource_name),
        ]  # fmt: skip
        assert written == dict(zip(CSV_COLUMNS, (str(v) for v in expected), strict=True))


def test_the_report_reads_the_store_a_fixed_number_of_times_per_scan(
    three_accounts: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 37, counted: the organisation's report reads each scan's findings and their teams in a fixed number of
    statements, whatever the number of findings (the rows fetched at once, not a statement or a fetch per row)."""
    engine = get_engine(three_accounts)

    def statements() -> tuple[int, int]:
        seen: list[str] = []
        record = lambda *args: seen.append(args[2])  # noqa: E731  (conn, cursor, statement, ...)
        event.listen(engine, "before_cursor_execute", record)
        try:
            view, _ = _org_view(three_accounts)
        finally:
            event.remove(engine, "before_cursor_execute", record)
        return len(seen), view.findings_total

    every, findings = statements()
    with get_session_factory(three_accounts).begin() as session:  # all but two findings of each account resolved
        keep = [
            finding_id
            for account in ("100000000000", "100000000001", "100000000002")
            for finding_id in session.scalars(
                select(Finding.id)
                .where(Finding.account_id == account, Finding.status.in_(("open", "withdrawn")))
                .order_by(Finding.id)
                .limit(2)
            )
        ]
        session.execute(update(Finding).where(Finding.id.not_in(keep)).values(status="resolved"))
    fewer, left = statements()
    assert findings > 100 and left == 6
    assert every == fewer <= 3 * 3 + 3  # three scans: their findings and teams, the latest scans and the places


def test_a_team_report_holds_only_that_team_and_says_its_spend_is_not_split(
    three_accounts: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Given the organisation's teams (the bench tags each account's resources with one team)
    everything, _ = _org_view(three_accounts)
    team = everything.by_team[0].label
    # When the report is asked for one team
    view, table = _org_view(three_accounts, team=team)
    assert main(["report", "--team", team, "-o", str(tmp_path)]) == 0
    html, rows = _written(tmp_path)
    # Then only that team's findings are in it, and its spend is unknown (the bill is not split by team)
    assert [bar.label for bar in view.by_team] == [team]
    assert view.totals.headline.total_usd == everything.by_team[0].value
    assert {r["finding_id"] for r in csv.DictReader(io.StringIO(table))} == {r["finding_id"] for r in rows}
    assert len(rows) == view.findings_total < everything.findings_total
    assert f"-team-{team}-" in capsys.readouterr().out
    assert 'data-figure="spend">unknown<' in html and "not split by team" in html
    assert view.totals.executive_summary()[0].startswith("Accelerator and compute spend: not split by team")
    # ...and --team with --account is refused (a team's report is the organisation's)
    assert main(["report", "--team", team, "--account", "100000000000"]) == 1


def test_the_per_account_table_is_cut_with_how_many_more(three_accounts: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("chipwise.report.organisation.ACCOUNTS_SHOWN", 2)
    view, _ = _org_view(three_accounts)
    assert len(view.accounts) == 2 and view.more_accounts == 1 and view.accounts_total == 3
    assert "… and 1 more account (of 3)" in render_org_report(view)


def test_a_resource_without_a_live_team_tag_takes_the_bills(db_url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    # Given two accounts whose bill tags every resource with its team, the first account's live tags removed
    url = _store(db_url, 2, monkeypatch, bill=True)
    with get_session_factory(url).begin() as session:
        session.execute(update(Resource).where(Resource.account_id == "100000000000").values(tags={}))
    # Then its findings still count for its team (the bill's cost allocation tag), as the scan report counts them
    view, _ = _org_view(url)
    assert sorted(bar.label for bar in view.by_team) == ["team-00", "team-01"]
    with get_session_factory(url)() as session:
        scan = find_scan(session, account_id="100000000000")
        alone = build_report(session, scan, now=utcnow(), team_tag_keys=TEAM_KEYS)
    assert [(bar.label, bar.value) for bar in alone.by_team] == [
        (bar.label, bar.value) for bar in view.by_team if bar.label == "team-00"
    ]


def test_the_spend_is_unknown_when_a_scan_stored_no_cost_figure(three_accounts: str) -> None:
    # Given the latest scan of one account without a day of cost data (its spend unknown, as its scan report says)
    from chipwise.store.tables import Scan

    with get_session_factory(three_accounts).begin() as session:
        scan = session.get(Scan, find_scan(session, account_id="100000000002").id)
        assert scan is not None and scan.document is not None
        scan.document = {**scan.document, "costs": {**scan.document["costs"], "days_covered": 0}}
    with get_session_factory(three_accounts)() as session:
        alone = build_report(session, find_scan(session, account_id="100000000002"), now=utcnow())
        known = build_report(session, find_scan(session, account_id="100000000000"), now=utcnow())
    # When the organisation's report is built
    view, _ = _org_view(three_accounts)
    # Then its spend is unknown, saying which scan has none, and the sum of the others is kept apart
    assert alone.spend is None and known.spend is not None
    assert not view.totals.spend_known and view.totals.spend_unknown == ["100000000002 us-east-1"]
    line = view.totals.executive_summary()[0]
    assert line.startswith("Accelerator and compute spend: unknown: 1 scan stored no cost figure (100000000002 ")
    assert "a month over the other 2 scans" in line
    assert 'data-figure="spend">unknown<' in render_org_report(view)
    rows = {a.account_id: a for a in view.accounts}
    assert rows["100000000002"].spend_usd is None and rows["100000000000"].spend_usd == known.spend.monthly_usd


def test_a_team_or_region_nothing_matches_says_so_in_one_line_and_writes_nothing(
    three_accounts: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Given an organisation's store, and a folder that already holds a file
    (tmp_path / "kept").mkdir()
    (tmp_path / "kept" / "notes.txt").write_text("mine")
    capsys.readouterr()
    for args, said in (
        (["--team", "nosuchteam"], "no finding of the latest scans matches --team nosuchteam"),
        (["--region", "us-west-2"], "no finding of the latest scans matches --region us-west-2"),
        (["--team", "team-00", "--region", "us-west-2"], "matches --team team-00, --region us-west-2"),
    ):
        for folder in ("new", "kept"):
            # When the report is asked for a team no resource carries (or a region no scan covers)
            assert main(["report", *args, "-o", str(tmp_path / folder)]) == 0, args
            # Then it says so in one line, as `findings` does, and writes no report of nothing
            shown = capsys.readouterr().out
            assert said in shown and len(shown.strip().splitlines()) == 1, (args, shown)
    assert not (tmp_path / "new").exists()
    assert [p.name for p in (tmp_path / "kept").iterdir()] == ["notes.txt"]
    # ...while a team that has findings still gets its report
    assert main(["report", "--team", "team-00", "-o", str(tmp_path / "new")]) == 0
    assert sorted(p.suffix for p in (tmp_path / "new").iterdir()) == [".csv", ".html"]


def test_an_account_the_organisation_does_not_hold_is_named_in_one_bounded_line(
    three_accounts: str, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("chipwise.report.build.PLACES_NAMED", 2)
    assert main(["report", "--account", "999999999999", "-o", str(tmp_path / "out")]) == 1
    said = capsys.readouterr().err
    assert "no finished scan of account 999999999999; the store has 100000000000 in us-east-1" in said
    assert "100000000001 in us-east-1" in said and "100000000002" not in said and " and 1 more:" in said
    assert not (tmp_path / "out").exists()
