"""The HTML report of real scans of the demo account: totals, charts, heat-maps, evidence; the CLI writes it."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest

from chipwise.cli import main
from chipwise.economics import usd
from chipwise.presentation import headline, rank, saving_facts
from chipwise.report.build import build_report, find_scan, render_report
from chipwise.settings import get_settings
from chipwise.store.engine import get_engine
from chipwise.store.session import get_session_factory
from chipwise.store.tables import Scan

NOW = datetime(2026, 11, 20, 6, tzinfo=UTC)  # TWO_SCANS_NOW in tests/conftest.py: the scans the store holds


@pytest.fixture
def two_scans(
    scan_demo_twice: Callable[[str], None],
    db_url: str,
    built_stores: Any,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> Iterator[str]:
    """The demo account scanned twice, a day apart: built once per test process and backend, each test given its
    own copy of that store (the report only reads the store; a test that writes does so in its copy)."""
    backend = "sqlite" if db_url.startswith("sqlite") else "postgresql"
    url = built_stores.copy("two_scans", backend, scan_demo_twice, into=tmp_path)
    monkeypatch.setenv("CHIPWISE_DATABASE_URL", url)
    get_settings.cache_clear()
    yield url
    if backend == "postgresql":
        built_stores.drop(url)
    else:
        get_engine(url).dispose()


def test_the_report_of_the_latest_scan(two_scans: str) -> None:
    factory = get_session_factory(two_scans)
    with factory() as session:
        scan = find_scan(session)
        view = build_report(session, scan, now=NOW + timedelta(days=1, hours=1))
        scans = session.query(Scan).count()
    html = render_report(view)
    # The totals are the one headline, measured apart from estimated
    assert view.headline == headline(f.document for f in view.findings)
    assert f'data-figure="total">{usd(view.headline.total_usd)}<' in html
    assert f'data-figure="estimated">{usd(view.headline.estimated_usd)}<' in html
    # The spend is every surface's: the monthly run rate (here Cost Explorer's, over its complete days)
    assert view.spend is not None and f'data-figure="spend">{usd(view.spend.monthly_usd)}<' in html
    assert view.spend.basis == "Cost Explorer's monthly run rate over 14 complete days"
    # The trend has both scans; the latest is the second day's (its window ends that day)
    assert scans == 2 and view.scans == 2 and view.window_end == (NOW + timedelta(days=1)).date()
    assert [r.label for r in view.trend_rows] == ["19 Nov", "20 Nov"]
    # ...every point the same measure (Cost Explorer's run rate over its complete days), the basis named per point
    assert all(r.basis.startswith("Cost Explorer; Cost Explorer's monthly run rate over") for r in view.trend_rows)
    assert html.count("could save") == 2
    # Heat-maps for the top findings with stored metrics, each from a named source
    drawn = [f for f in view.findings if f.heat is not None]
    assert drawn and all(f.heat.hours_with_data > 0 for f in drawn if f.heat)
    assert all("utilisation" in f.heat.source for f in drawn if f.heat)
    # ...from the metric each finding rests on: a Neuron or GPU finding never draws CPU in place of it
    for f in drawn:
        assert f.heat is not None
        if "cpu_utilization" not in f.document.signals_used:
            assert not f.heat.source.startswith("CPU"), (f.document.resource_name, f.heat.source)
        if f.document.resource_kind == "ec2_instance" and f.document.instance_type.startswith(("inf", "trn")):
            assert f.heat.source.startswith("NeuronCore"), (f.document.resource_name, f.heat.source)
    # the counts say what they count, as on every other surface
    assert f"from {view.headline.count_words()}" in html
    # The bars add up what the headline counts, and a rule with nothing to save draws none
    assert sum((bar.value for bar in view.by_rule), Decimal(0)) == view.headline.total_usd
    assert all(bar.value > 0 for bar in view.by_rule)
    # The findings follow the one ranking (measured first, set-apart last)
    facts = [saving_facts(f.document) for f in view.findings]
    assert facts == sorted(facts, key=rank)
    # Every finding: its id, console link, suppress command and evidence table
    for f in view.findings:
        assert f.document.finding_id in html and f.console_url.replace("&", "&amp;") in html
        assert f"chipwise findings suppress {f.short_id}" in html
    assert html.count("<details>") == len(view.findings)
    # Static: no script, no outside fetch
    assert "<script" not in html.lower()
    assert " src=" not in html and "<link" not in html and "url(" not in html
    hrefs = re.findall(r'href="([^"]*)"', html)
    assert hrefs and all(re.match(r"https://([a-z0-9-]+\.)?console\.aws\.amazon\.com/", h) for h in hrefs)


def test_report_of_an_account_without_scans_names_the_scans_the_store_has(
    two_scans: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["report", "--account", "111111111111", "-o", str(tmp_path)]) == 1
    message = capsys.readouterr().err
    assert "no finished scan of account 111111111111" in message
    assert "the store has 123456789012 in us-east-1 (2 scans)" in message
    assert main(["report", "--account", "123456789012", "-o", str(tmp_path)]) == 0


def test_chipwise_report_writes_one_file_per_scan(
    two_scans: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["report", "--output-dir", str(tmp_path / "reports")]) == 0
    written = Path(capsys.readouterr().out.strip())
    assert written.parent == tmp_path / "reports"
    assert re.fullmatch(r"chipwise-report-123456789012-us-east-1-\d{8}T\d{4}Z\.html", written.name)
    assert "<svg" in written.read_text()
    # One account in the store: without --scan or --account, the scan report as before (no organisation's report),
    # the same file as --account writes but for the moment it was written
    assert main(["report", "--account", "123456789012", "--output-dir", str(tmp_path / "account")]) == 0
    assert sorted(p.name for p in (tmp_path / "reports").iterdir()) == sorted(
        p.name for p in (tmp_path / "account").iterdir()
    )
    for name in (written.name, written.name.removesuffix(".html") + ".csv"):
        ours, theirs = ((tmp_path / folder / name).read_text() for folder in ("reports", "account"))
        moment = re.compile(r"\d{4}-\d\d-\d\d \d\d:\d\d UTC")
        assert moment.sub("(time)", ours) == moment.sub("(time)", theirs)


def test_an_empty_store_says_how_to_fill_it(use_db: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["report"]) == 1
    assert "no finished scan in the store" in capsys.readouterr().err


def test_the_report_groups_savings_by_team(two_scans: str) -> None:
    # Given the demo account where the resource of the top counted finding carries a live `team` tag
    from chipwise.store.tables import Resource

    factory = get_session_factory(two_scans)
    now = NOW + timedelta(days=1, hours=1)
    with factory.begin() as session:
        top = next(f for f in build_report(session, find_scan(session), now=now).findings if f.counted)
        resource = session.query(Resource).filter(Resource.arn == top.document.resource_id).one()
        resource.tags = {**(resource.tags or {}), "team": "search"}
    with factory() as session:
        scan = find_scan(session)
        view = build_report(session, scan, now=now, team_tag_keys=["team", "user:team"])
        without = build_report(session, scan, now=now)
    html = render_report(view)
    # Then the counted savings split by team add up to the headline; no keys means no section
    teams = {bar.label: bar.value for bar in view.by_team}
    assert sum(teams.values(), Decimal(0)) == view.headline.total_usd
    assert teams["search"] > 0 and "(no team tag)" in teams
    assert 'id="by-team"' in html and 'data-team="search"' in html
    assert without.by_team == [] and view.cost_source == "cost_explorer"


def test_the_report_shows_the_audit_and_the_alert_precision(two_scans: str) -> None:
    from chipwise.store.repositories.findings import FindingRepository
    from chipwise.store.repositories.remediations import (
        APPLIED,
        APPLY,
        DISMISSAL,
        RECORDED,
        RemediationEvent,
        RemediationRepository,
    )
    from chipwise.store.tables import OutboxMessage

    at = NOW + timedelta(days=1, minutes=30)
    factory = get_session_factory(two_scans)
    with factory.begin() as session:
        first, second = FindingRepository(session).find()[:2]
        audit = RemediationRepository(session)
        stop = {"service": "ec2", "operation": "StopInstances", "params": {"InstanceIds": ["i-0abc"]}}
        audit.record(first, RemediationEvent(APPLY, "ec2_stop", APPLIED, "alice", "cli", "done", calls=[stop]), at)
        audit.record(second, RemediationEvent(DISMISSAL, "not_waste", RECORDED, "slack:bob (U1)", "slack", "x"), at)
        for finding in (first, second):
            session.add(
                OutboxMessage(
                    channel="slack",
                    kind="alert",
                    recipient="slack:chipwise/slack",
                    dedupe_key=f"alert:{finding.id}:20261120T0600Z:slack:slack:chipwise/slack",
                    payload={},
                    account_id=finding.account_id,
                    status="sent",
                    created_at=at,
                    next_attempt_at=at,
                )
            )
        rules = {first.rule_id, second.rule_id}
    with factory() as session:
        view = build_report(session, find_scan(session), now=NOW + timedelta(days=1, hours=1))
    html = render_report(view)
    assert sorted((a.event, a.status, a.who, a.calls) for a in view.audit) == [  # both at the same moment
        ("apply ec2_stop", "applied", "alice (cli)", "ec2.StopInstances"),
        ("dismissal not_waste", "recorded", "slack:bob (U1) (slack)", "-"),
    ]
    assert "Actions and alert precision, last 30 days" in html and "ec2.StopInstances" in html
    assert {p.rule_id for p in view.precision} == rules
    assert sum(p.acted for p in view.precision) == 1 and sum(p.dismissed for p in view.precision) == 1


# Loaded by a scan or the report only (issue 37: the drafts, the digest and the listings do without them).
SCAN_OR_REPORT_ONLY = ("chipwise.models.records", "chipwise.analyse.commitments", "chipwise.store.repositories.usage")
RULE_MODULES = ("chipwise.rules.builtin", "chipwise.rules.engine", "chipwise.rules.base", "chipwise.analyse.profiles")


def _modules_after(argv: list[str], prefixes: tuple[str, ...]) -> list[str]:
    """The modules starting with one of ``prefixes`` that ``chipwise ARGV`` loaded, run in a fresh process (which
    must succeed)."""
    code = (
        "import json, sys\n"
        "from chipwise.cli import main\n"
        f"code = main({argv!r})\n"
        f"print(json.dumps(sorted(m for m in sys.modules if m.startswith({prefixes!r}))))\n"
        "sys.exit(code)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False, timeout=120)
    assert done.returncode == 0, (argv, done.stderr[-2000:])
    loaded: list[str] = json.loads(done.stdout.strip().splitlines()[-1])
    return loaded


def test_read_commands_name_rules_without_loading_them_nor_the_aws_sdk(
    two_scans: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 37, counted: a surface names a rule from chipwise.rules.titles, so no read command loads the rule
    modules, their engine or the profiles they judge, and none loads the AWS SDK; none but the digest's preview
    loads remediation code."""
    monkeypatch.setenv("CHIPWISE_EMAIL_RECIPIENTS", "finops@example.com")
    reads = {
        "findings": ["findings"],
        "resources": ["resources", "--limit", "1"],
        "realised": ["findings", "realised"],
        "report": ["report", "-o", str(tmp_path / "report")],
        "drafts": ["drafts", "123456789012", "-o", str(tmp_path / "drafts")],
        "notify": ["notify", "--dry-run"],
    }
    for name, argv in reads.items():
        loaded = _modules_after(
            argv,
            (*RULE_MODULES, "chipwise.rules.titles", "boto3", "botocore", "chipwise.remediate", *SCAN_OR_REPORT_ONLY),
        )
        assert "chipwise.rules.titles" in loaded, name  # it named rules
        assert not [m for m in loaded if m.startswith(RULE_MODULES)], (name, loaded)
        assert not [m for m in loaded if m.split(".")[0] in ("boto3", "botocore")], (name, loaded)
        if name != "notify":  # the digest's Slack blocks ask remediate.eligible whether a finding gets a button
            assert not [m for m in loaded if m.startswith("chipwise.remediate")], (name, loaded)
        assert "chipwise.models.records" not in loaded, name  # what a scan collects and writes
        if name != "report":  # the commitments analysis and the metric rollups are the report's
            assert not [m for m in loaded if m in SCAN_OR_REPORT_ONLY], (name, loaded)


def test_the_heat_maps_are_read_in_two_statements_whatever_their_number(
    two_scans: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 37, counted: every heat-map's rollups come from one statement (and the neuron-monitor rollups from one
    more), not one per map and metric: drawing one map or every top finding's reads the same number of times."""
    from sqlalchemy import event

    from chipwise.report import build

    factory = get_session_factory(two_scans)

    def rollup_reads(maps: int) -> tuple[int, int]:
        monkeypatch.setattr(build, "HEAT_MAPS", maps)
        statements: list[str] = []
        with factory() as session:
            scan = find_scan(session)
            engine = session.get_bind()
            record = lambda *args: statements.append(args[2])  # noqa: E731  (conn, cursor, statement, ...)
            event.listen(engine, "before_cursor_execute", record)
            try:
                view = build_report(session, scan, now=NOW + timedelta(days=1, hours=1))
            finally:
                event.remove(engine, "before_cursor_execute", record)
        reads = [s for s in statements if re.search(r"FROM (metric_rollups|neuron_rollups)\b", s)]
        return len(reads), sum(1 for f in view.findings if f.heat is not None)

    one, drawn_one = rollup_reads(1)
    every, drawn_every = rollup_reads(build.TOP_FINDINGS)
    assert drawn_every > drawn_one >= 1  # more maps drawn...
    assert 1 <= one <= 2 and 1 <= every <= 2  # ...from at most two reads either way


def test_read_commands_query_with_the_imports_objects_left_out_of_the_collector(
    two_scans: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 37, counted: the read commands' work runs under ``fewer_collections`` (the objects their imports made
    are frozen out of the garbage collector's walks, its young threshold raised): every SQL statement of ``report``,
    ``drafts ACCOUNT`` and ``notify --dry-run`` runs so, in a fresh process."""
    from chipwise.pipeline._gc import YOUNG_THRESHOLD

    monkeypatch.setenv("CHIPWISE_EMAIL_RECIPIENTS", "finops@example.com")
    reads = {
        "report": ["report", "-o", str(tmp_path / "report")],
        "drafts": ["drafts", "123456789012", "-o", str(tmp_path / "drafts")],
        "notify": ["notify", "--dry-run"],
    }
    for name, argv in reads.items():
        code = (
            "import gc, json, sys\n"
            "from sqlalchemy import event\n"
            "from sqlalchemy.engine import Engine\n"
            "seen = []\n"
            "@event.listens_for(Engine, 'before_cursor_execute')\n"
            "def _seen(*args):\n"
            "    seen.append((gc.get_freeze_count(), gc.get_threshold()[0]))\n"
            "from chipwise.cli import main\n"
            f"code = main({argv!r})\n"
            "print(json.dumps(seen))\n"
            "sys.exit(code)\n"
        )
        done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False, timeout=120)
        assert done.returncode == 0, (argv, done.stderr[-2000:])
        seen: list[list[int]] = json.loads(done.stdout.strip().splitlines()[-1])
        assert len(seen) >= 3, name  # it read the store
        assert all(frozen > 1_000 and young >= YOUNG_THRESHOLD for frozen, young in seen), (name, seen[:5])


def test_a_scan_report_loads_none_of_the_organisations_modules(two_scans: str, tmp_path: Path) -> None:
    """Issue 37, counted: on a store of one account ``chipwise report`` writes the scan report; the organisation's
    report and its paged reads of the findings are imported only once the store holds several accounts."""
    organisation = ("chipwise.report.organisation", "chipwise.store.repositories.finding_pages")
    loaded = _modules_after(["report", "-o", str(tmp_path / "report")], (*organisation, "chipwise.report.build"))
    assert loaded == ["chipwise.report.build"]
