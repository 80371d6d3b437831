"""Issue 37: every list command takes --account, --team and --limit, and each one filters and cuts (not only
parses): findings, resources, bill show, findings realised and benchmarks list, on one store holding two teams."""

from __future__ import annotations

import json
import sys
from datetime import UTC, date, datetime
from decimal import Decimal
from pathlib import Path

import pytest
from sqlalchemy.orm import Session, sessionmaker

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "notify"))
from notify_factories import ACCOUNT, estate

from chipwise.cli import main, root_command
from chipwise.models.scan import ScanCosts, ScanDocument, ScanResource, ScanWindow
from chipwise.models.verdicts import ResourceVerdict
from chipwise.store.repositories.accounts import ScanRepository
from chipwise.store.tables import BenchmarkRun, Finding, RealisedSaving, Resource
from chipwise_devkit.bill_export import line_item_type_bill, write_export

# Each list command, and how to read the rows of its JSON output.
LISTS: dict[tuple[str, ...], str] = {
    ("findings",): "lines",
    ("resources",): "lines",
    ("bill", "show"): "bill",
    ("findings", "realised"): "lines",
    ("benchmarks", "list"): "array",
}


def test_every_list_command_declares_account_team_and_limit() -> None:
    root = root_command()
    for path in LISTS:
        command = root
        for name in path:
            command = command.commands[name]  # type: ignore[attr-defined]
        options = {o for p in command.params for o in getattr(p, "opts", [])}
        assert {"--account", "--team", "--limit"} <= options, (path, options)


@pytest.fixture
def store(
    use_db: str, session_factory: sessionmaker[Session], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> dict[str, Finding]:
    """The notify estate (one account) with two teams (nlp: bert-ner-g6; chat: the rest), a realised saving and
    a benchmark run for every finding, and a bill whose resources carry the ml-platform team."""
    monkeypatch.setenv("CHIPWISE_TEAM_TAG_KEYS", "team,user:team")
    monkeypatch.setenv("COLUMNS", "200")
    with session_factory.begin() as session:
        found = estate(session)
        for resource in session.query(Resource).all():
            resource.tags = {**resource.tags, "team": "nlp" if resource.name == "bert-ner-g6" else "chat"}
        for n, finding in enumerate(found.values()):
            session.add(_realised(finding))
            run = BenchmarkRun(id=f"run-{n:04d}", finding_id=finding.id, target_instance_type="inf2.xlarge")
            run.job_queue = "q"
            session.add(run)
        _scan(session, session.query(Resource).all())
    export = write_export(tmp_path, "chipwise-cur", "2026-11", line_item_type_bill())
    assert main(["bill", "ingest", "--uri", str(export), "--period", "2026-11", "--json"]) == 0
    return found


AT = datetime(2026, 11, 27, tzinfo=UTC)


def _scan(session: Session, resources: list[Resource]) -> None:
    """A finished scan of the account whose document lists the resources (with their teams) and verdicts."""
    document = ScanDocument(
        scan_id="scan-0001",
        account_id=ACCOUNT,
        region="us-east-1",
        status="succeeded",
        started_at=AT,
        finished_at=AT,
        window=ScanWindow(start=date(2026, 11, 13), end=date(2026, 11, 27)),
        costs=ScanCosts(total_usd=Decimal(0)),
        resources=[
            ScanResource(
                id=r.arn,
                arn=r.arn,
                kind=r.kind,
                name=r.name,
                instance_type=r.instance_type,
                instance_count=r.instance_count,
                platform=r.platform,
                team=r.tags["team"],
            )
            for r in resources
        ],
        verdicts=[
            ResourceVerdict(
                resource_id=r.arn,
                name=r.name,
                kind=r.kind,
                platform=r.platform,
                instance_type=r.instance_type,
                verdict="efficient",
                reason="busy",
            )
            for r in resources
        ],
    )
    scans = ScanRepository(session)
    scans.open("scan-0001", ACCOUNT, "us-east-1", started_at=AT, window_start=date(2026, 11, 13), window_end=AT.date())
    scans.finish(
        "scan-0001",
        status="succeeded",
        finished_at=AT,
        resource_count=len(resources),
        api_calls={},
        timings={},
        errors=[],
        document_json=document.model_dump_json(),
    )


def _realised(finding: Finding) -> RealisedSaving:
    return RealisedSaving(
        finding_id=finding.id,
        account_id=finding.account_id,
        region=finding.region,
        rule_id=finding.rule_id,
        resource_name=finding.resource_name,
        cause="gone",
        status="measured",
        estimated_monthly_savings_usd=Decimal("100"),
        realised_monthly_savings_usd=Decimal("90"),
        changed_after=date(2026, 11, 1),
        resolved_at=datetime(2026, 11, 2, tzinfo=UTC),
    )


def _rows(path: tuple[str, ...], extra: list[str], capsys: pytest.CaptureFixture[str]) -> list[dict[str, object]]:
    capsys.readouterr()
    form = LISTS[path]
    assert main([*path, "--lines" if form == "bill" else "--json", *extra]) == 0, (path, extra)
    text = capsys.readouterr().out
    if form == "array":
        rows: list[dict[str, object]] = json.loads(text)
        return rows
    documents = [json.loads(line) for line in text.splitlines() if line.strip()]
    if form == "bill":
        return [d["resource"] for d in documents if "resource" in d]
    return documents


def test_each_list_filters_by_account_team_and_cuts_to_limit(
    store: dict[str, Finding], capsys: pytest.CaptureFixture[str]
) -> None:
    teams = {("bill", "show"): "ml-platform"}  # the bill's own cost allocation tag
    accounts = {("bill", "show"): "111111111111"}  # the bill's payer account
    for path in LISTS:
        every = _rows(path, [], capsys)
        assert len(every) >= 2, path
        team = teams.get(path, "nlp")
        of_team = _rows(path, ["--team", team], capsys)
        assert 0 < len(of_team) < len(every), (path, len(of_team), len(every))
        assert _rows(path, ["--team", "nobody"], capsys) == [], path
        assert len(_rows(path, ["--limit", "1"], capsys)) == 1, path
        account = accounts.get(path, ACCOUNT)  # every row is of this one account
        assert len(_rows(path, ["--account", account], capsys)) == len(every), path
        assert {r.get("account_id", account) for r in every} == {account}, path


def test_a_cut_table_says_how_many_more(store: dict[str, Finding], capsys: pytest.CaptureFixture[str]) -> None:
    for path in (("findings",), ("resources",), ("bill", "show"), ("findings", "realised")):
        capsys.readouterr()
        assert main([*path, "--limit", "1"]) == 0, path
        assert " more " in capsys.readouterr().out, path


def test_a_teams_bill_totals_count_its_resources_only(
    store: dict[str, Finding], capsys: pytest.CaptureFixture[str]
) -> None:
    capsys.readouterr()
    assert main(["bill", "show", "--json", "--team", "ml-platform"]) == 0
    shown = json.loads(capsys.readouterr().out)
    assert shown["by_team"] == {"ml-platform": "7.582000"}
    assert shown["by_account"] == {"111111111111": "7.582000"}
    assert shown["unattributed"] == [] and shown["services_not_inventoried"] == []


def test_filters_that_leave_nothing_say_so_and_an_unknown_account_is_named(
    store: dict[str, Finding], capsys: pytest.CaptureFixture[str]
) -> None:
    """A team or region nothing belongs to gives one line naming the filters (not an empty table); an account the
    store does not hold is an error naming the ones it does (not "no finished scan in the store")."""
    for path, noun in ((("findings",), "no open finding matches"), (("resources",), "no resource of the latest")):
        capsys.readouterr()
        assert main([*path, "--team", "nosuchteam", "--region", "us-west-2"]) == 0, path
        shown = capsys.readouterr().out
        assert noun in shown and "--team nosuchteam, --region us-west-2" in shown, (path, shown)
        assert "┏" not in shown, path  # no empty table
    capsys.readouterr()
    assert main(["resources", "--account", "999999999999"]) != 0
    said = capsys.readouterr().err
    assert "no account 999999999999 in the store" in said and ACCOUNT in said, said
