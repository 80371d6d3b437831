"""The streamed CSV carries each resource's verdict from the same source as `chipwise resources`: every finding that
speaks for the resource (open, suppressed, withdrawn), whatever the list's filter or batch held."""

from __future__ import annotations

import csv
import io
import sys
from pathlib import Path

import pytest
from sqlalchemy.orm import Session, sessionmaker

sys.path.insert(0, str(Path(__file__).resolve().parent / "notify"))
from notify_factories import add_finding, estate

import chipwise.pipeline.findings as findings_pipeline
from chipwise.analyse.verdicts import verdict_words_by_resource
from chipwise.cli import main
from chipwise.pipeline.findings import FindingFilter, stream_findings
from chipwise.presentation import ledger_row
from chipwise.rules.registry import rule_title
from chipwise.store import session_scope
from chipwise.store.repositories.findings import FindingRepository
from chipwise.store.tables import Finding


@pytest.fixture
def stored(use_db: str, session_factory: sessionmaker[Session]) -> dict[str, Finding]:
    with session_factory.begin() as session:
        found = estate(session)
        # bert-ner-g6: a withdrawn migration beside its counted rightsize; search-idle-inf2: a suppressed one too
        found["withdrawn"] = add_finding(session, "bert-ner-g6", savings="900", status="withdrawn")
        found["suppressed"] = add_finding(session, "search-idle-inf2", savings="50", status="suppressed")
    return found


def _csv(args: list[str], capsys: pytest.CaptureFixture[str]) -> list[dict[str, str]]:
    assert main(["findings", "--format", "csv", *args]) == 0
    return list(csv.DictReader(io.StringIO(capsys.readouterr().out)))


def _expected(db_url: str) -> dict[str, tuple[str, str]]:
    """Every resource's verdict from all of its findings at once (what `resources` settles from)."""
    with session_scope(db_url) as session:
        documents = []
        for account in ("123456789012",):
            documents += FindingRepository(session).documents(
                account_id=account, region="us-east-1", statuses=("open", "withdrawn", "suppressed")
            )
    return verdict_words_by_resource((ledger_row(d) for d in documents), rule_title)


def test_every_csv_row_carries_its_resources_verdict_and_reason(
    stored: dict[str, Finding], use_db: str, capsys: pytest.CaptureFixture[str]
) -> None:
    rows = _csv([], capsys)
    expected = _expected(use_db)
    assert rows and all(r["resource_verdict"] for r in rows)
    for row in rows:
        assert (row["resource_verdict"], row["resource_verdict_reason"]) == expected[row["resource_id"]]
    waste = [r for r in rows if r["counted"] == "yes"]
    assert waste and all(r["resource_verdict"] == "waste" and "$" in r["resource_verdict_reason"] for r in waste)


def test_a_filtered_list_in_batches_of_one_still_settles_each_resource_from_all_its_findings(
    stored: dict[str, Finding], use_db: str, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(findings_pipeline, "STREAM_BATCH", 1)
    rows = _csv(["--status", "withdrawn"], capsys)
    (row,) = rows
    assert row["resource_name"] == "bert-ner-g6"
    # the list holds only the withdrawn finding, but the resource's counted rightsize decides: waste, with dollars
    assert row["resource_verdict"] == "waste"
    assert row["resource_verdict_reason"] == _expected(use_db)[row["resource_id"]][1]
    assert "$310.00 a month" in row["resource_verdict_reason"]


def test_each_streamed_batch_holds_the_verdicts_of_its_own_resources_only(
    stored: dict[str, Finding], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(findings_pipeline, "STREAM_BATCH", 2)
    batches = list(stream_findings(FindingFilter(statuses=("open", "resolved"))))
    assert [len(b.figures.rows) for b in batches] == [2, 2]
    for b in batches:
        named = {r.document.resource_id for r in b.figures.rows if r.document.status != "resolved"}
        assert set(b.verdicts) == named  # bounded by the batch; a resolved-only resource has no verdict here
    resolved = next(r for b in batches for r in b.figures.rows if r.document.status == "resolved")
    assert all(resolved.document.resource_id not in b.verdicts for b in batches)
