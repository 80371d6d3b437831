"""`chipwise findings --json` (issue 37): the shape of one JSON line pinned byte for byte (keys, order, values, the
escaping of words outside ASCII), and a page cut by --limit that says on stderr how many more and the cursor that
continues, with stdout left as JSON lines only."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from decimal import Decimal

import pytest
from sqlalchemy.orm import Session, sessionmaker

from chipwise.cli import main
from chipwise.pipeline import findings as findings_pipeline
from chipwise.store.repositories.finding_pages import FindingFilter, FindingPages
from chipwise.store.tables import Account, Finding, Resource

ACCOUNT = "123456789012"
ENDPOINT = f"arn:aws:sagemaker:us-east-1:{ACCOUNT}:endpoint/chat-prod"  # the ARN format of a SageMaker endpoint
SEEN = datetime(2026, 11, 20, 6, 30, tzinfo=UTC)


def _finding(name: str, saving: str, **kw: object) -> Finding:
    values: dict[str, object] = {
        "id": f"00000000-0000-4000-8000-{name:0>12}",
        "account_id": ACCOUNT,
        "region": "us-east-1",
        "rule_id": "gpu_idle",
        "resource_arn": f"arn:aws:sagemaker:us-east-1:{ACCOUNT}:endpoint/{name}",
        "resource_kind": "sagemaker_endpoint",
        "resource_name": name,
        "instance_type": "ml.g5.2xlarge",
        "instance_count": 1,
        "monthly_cost_usd": Decimal("1100"),
        "estimated_monthly_savings_usd": Decimal(saving),
        "recommendation": {"action": "delete"},
        "confidence": "high",
        "summary": f"{name} served no request in 14 days.",
        "evidence": {},
        "status": "open",
        "first_seen": SEEN,
        "last_seen": SEEN,
    }
    return Finding(**(values | kw))


@pytest.fixture
def stored(use_db: str, session_factory: sessionmaker[Session]) -> None:
    with session_factory.begin() as session:
        session.add(Account(account_id=ACCOUNT, name="Acme AI"))
        session.flush()
        session.add(
            Resource(
                account_id=ACCOUNT,
                region="us-east-1",
                arn=ENDPOINT,
                variant="AllTraffic",
                kind="sagemaker_endpoint",
                name="chat-prod/AllTraffic",
                instance_type="ml.g5.12xlarge",
                instance_count=2,
                platform="nvidia",
                state="InService",
                tags={"owner": "ana@example.com", "team": "nlp"},
            )
        )
        session.add(
            _finding(
                "000000000001",
                "2843.52",
                rule_id="gpu_inference_portable",
                resource_arn=ENDPOINT,
                resource_variant="AllTraffic",
                resource_name="chat-prod/AllTraffic",
                instance_type="ml.g5.12xlarge",
                instance_count=2,
                monthly_cost_usd=Decimal("10236.672"),
                measured_monthly_savings_usd=Decimal("3101.5"),
                recommendation={
                    "action": "migrate",
                    "target_platform": "inferentia",
                    "target_instance_type": "ml.inf2.xlarge",
                    "target_count": 2,
                },
                confidence="medium",
                signals_used=["Invocations", "GPUUtilization"],
                effort="weeks",
                break_even_months=1.9,
                summary="Steady serving on 2 × A10G ×4 → inf2 serves it for less.",
                # in the order PostgreSQL's JSONB gives an object's keys back (shorter first, then by bytes)
                evidence={"benchmark": {"run_id": "r-1", "status": "confirmed"}, "gpu_util_p95_pct": 31.5},
                first_seen=datetime(2026, 11, 18, 6, 30, tzinfo=UTC),
            )
        )
        for index in range(2, 7):
            session.add(_finding(f"{index:012d}", f"{900 - index * 100}"))


# Every key in its order. The ledger's columns follow the document's; ``break_even_months`` keeps the document's
# place with the ledger's value (16,000 of porting for "weeks" over 3,101.50 a month: 5.2, not the stored 1.9).
LINE = (
    '{"finding_id":"00000000-0000-4000-8000-000000000001","rule_id":"gpu_inference_portable",'
    '"account_id":"123456789012","region":"us-east-1",'
    '"resource_id":"arn:aws:sagemaker:us-east-1:123456789012:endpoint/chat-prod#variant/AllTraffic",'
    '"resource_arn":"arn:aws:sagemaker:us-east-1:123456789012:endpoint/chat-prod","variant":"AllTraffic",'
    '"resource_kind":"sagemaker_endpoint","resource_name":"chat-prod/AllTraffic","instance_type":"ml.g5.12xlarge",'
    '"instance_count":2,"monthly_cost_usd":"10236.67","estimated_monthly_savings_usd":"2843.52",'
    '"measured_monthly_savings_usd":"3101.50","recommendation":{"action":"migrate","target_platform":"inferentia",'
    '"target_instance_type":"ml.inf2.xlarge","target_count":2,"excluded_from_totals":null,"software_path":null},'
    '"confidence":"medium","signals_used":["Invocations","GPUUtilization"],"signals_missing":[],"effort":"weeks",'
    '"break_even_months":5.2,"summary":"Steady serving on 2 \\u00d7 A10G \\u00d74 \\u2192 inf2 serves it for less.",'
    '"evidence":{"benchmark":{"run_id":"r-1","status":"confirmed"},"gpu_util_p95_pct":31.5},"status":"open",'
    '"first_seen":"2026-11-18T06:30:00Z","last_seen":"2026-11-20T06:30:00Z","counted":true,"basis":"measured",'
    '"group":"project","excluded_reason":null,"verdict":"measured saving","owner":"ana@example.com / nlp",'
    '"saving_usd":"3101.50","one_time_cost_usd":"16000.00","net_value_12m_usd":"21218.00","payback_months":"5.2",'
    '"next_step":"Migrate \\u2192 ml.inf2.xlarge \\u00d72"}'
)


def test_a_finding_s_json_line_is_pinned_byte_for_byte(stored: None, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["findings", "--json"]) == 0
    first = capsys.readouterr().out.splitlines()[0]
    assert first == LINE


def _lines(text: str) -> list[dict[str, object]]:
    return [json.loads(line) for line in text.splitlines()]


def test_a_page_of_json_lines_says_on_stderr_how_many_more_and_the_cursor_that_continues(
    stored: None, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(findings_pipeline, "STREAM_BATCH", 2)  # the pages' batches are the dump's batches
    assert main(["findings", "--json"]) == 0
    dump = capsys.readouterr()
    assert dump.err == ""
    pages: list[dict[str, object]] = []
    cursor: list[str] = []
    while True:
        assert main(["findings", "--json", "--limit", "2", *cursor]) == 0
        page = capsys.readouterr()
        pages += _lines(page.out)  # stdout: JSON lines only
        if not page.err:
            break
        left = 6 - len(pages)
        assert page.err.startswith(f"… and {left:,} more findings (of 6): --cursor "), page.err
        cursor = ["--cursor", page.err.split("--cursor ")[1].split()[0]]
    assert pages == _lines(dump.out) and len(pages) == 6


def test_a_limit_that_leaves_nothing_prints_no_cursor_and_csv_and_arrays_say_it_too(
    stored: None, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["findings", "--json", "--limit", "6"]) == 0
    assert capsys.readouterr().err == ""
    for form in ("csv", "json"):
        assert main(["findings", "--format", form, "--limit", "4"]) == 0
        shown = capsys.readouterr()
        assert "… and 2 more findings (of 6): --cursor " in shown.err and "--cursor" not in shown.out


def test_one_finding_left_is_one_more_finding_in_the_stream_and_under_the_table(
    stored: None, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["findings", "--json", "--limit", "5"]) == 0
    assert capsys.readouterr().err.startswith("… and 1 more finding (of 6): --cursor ")
    assert main(["findings", "--limit", "5"]) == 0
    table = capsys.readouterr().out
    assert "… and 1 more finding (of 6): --cursor " in " ".join(table.split())
    assert main(["findings", "--limit", "4"]) == 0
    assert "… and 2 more findings (of 6)" in capsys.readouterr().out


def test_the_stream_is_the_list_s_order_read_in_batches_and_stops_where_asked(
    stored: None, session_factory: sessionmaker[Session]
) -> None:
    every = FindingFilter()
    with session_factory() as session:
        pages = FindingPages(session)
        listed = [d.finding_id for d in pages.page(every, limit=None)]
        assert [d.finding_id for d in pages.stream(every, batch=2)] == listed
        assert [d.finding_id for d in pages.stream(every, after=listed[1], limit=3, batch=2)] == listed[2:5]
        tagged = {d.finding_id: tags for d, tags in pages.stream_with_tags(every, batch=4)}
        assert tagged[listed[0]] == {"owner": "ana@example.com", "team": "nlp"}  # the variant's own row
        assert all(tags == {} for fid, tags in tagged.items() if fid != listed[0])  # no resource row: none
        assert pages.totals(every, after=listed[1]).count == 4
