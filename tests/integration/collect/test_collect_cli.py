"""`chipwise scan`, `chipwise ingest-neuron` and `chipwise neuron-agent` from the command line."""

from __future__ import annotations

import gzip
import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

import boto3
import pytest
from scan_account_fixture import seed_account
from sqlalchemy import func, select

from chipwise.cli import main
from chipwise.store import get_session_factory
from chipwise.store.tables import NeuronRollup
from chipwise_devkit.emulator import Emulator

DATA = Path(__file__).resolve().parents[2] / "unit" / "collect" / "data"


def test_scan_json_prints_the_scan_document(aws: Emulator, use_db: str, capsys: pytest.CaptureFixture[str]) -> None:
    # Given a seeded account
    seed_account(aws)
    # When `chipwise scan --json` runs
    assert main(["scan", "--json", "--lookback-days", "2"]) == 0
    captured = capsys.readouterr()
    # Then stdout is the scan document and progress went to stderr
    document = json.loads(captured.out)
    assert document["account_id"] == "123456789012" and document["region"] == "us-east-1"
    assert len(document["resources"]) == 10 and document["api_calls"]["ce.GetCostAndUsage"] >= 1
    assert isinstance(document["costs"]["total_usd"], str)
    assert "scanning" in captured.err or "123456789012" in captured.err


def test_scan_prints_tables_for_people(aws: Emulator, use_db: str, capsys: pytest.CaptureFixture[str]) -> None:
    # Given a seeded account with costs yesterday (the command scans up to now)
    boto3.client("events").create_event_bus(Name="chipwise")
    yesterday = datetime.now(UTC).date() - timedelta(days=1)
    seed_account(aws, cost_days=[yesterday.isoformat()])
    # When `chipwise scan` runs
    assert main(["scan", "--region", "us-east-1", "--lookback-days", "2"]) == 0
    out = capsys.readouterr().out
    # Then people get resources by platform, costs by instance type and the API calls
    assert "inferentia" in out and "ml.p4d" in out and "total" in out and "API calls" in out
    assert "1,565.66" in out  # one day of the fixture's spend in this region


def test_scan_help_names_its_options(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["scan", "--help"]) == 0
    out = capsys.readouterr().out
    for option in ("--account", "--region", "--json", "--lookback-days"):
        assert option in out


def test_ingest_neuron_from_files_and_s3(
    aws: Emulator, use_db: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Given a local report file and the same kind of data in S3
    local = tmp_path / "i-0bbbbbbbbbbbbbbb2" / "2026-11-20.jsonl.gz"
    local.parent.mkdir()
    local.write_bytes(gzip.compress((DATA / "trn1_32xlarge.jsonl").read_bytes()))
    s3 = boto3.client("s3")
    s3.create_bucket(Bucket="reports")
    s3.put_object(
        Bucket="reports", Key="neuron/i-0aaaaaaaaaaaaaaa1/a.jsonl", Body=(DATA / "inf2_xlarge.jsonl").read_bytes()
    )
    # When both are ingested
    assert main(["ingest-neuron", str(local), "--account", "111122223333"]) == 0
    assert main(["ingest-neuron", "s3://reports/neuron/", "--json"]) == 0
    out = capsys.readouterr().out
    # Then the rollups are stored and the malformed lines reported
    results = json.loads(out[out.index("[") :])
    assert results[0]["accepted"] and [m["line"] for m in results[0]["malformed"]] == [7, 10]
    with get_session_factory(use_db)() as session:
        pairs = session.execute(select(NeuronRollup.instance_id, NeuronRollup.account_id).distinct())
        accounts = {str(instance): str(account) for instance, account in pairs.all()}
        assert accounts == {"i-0bbbbbbbbbbbbbbb2": "111122223333", "i-0aaaaaaaaaaaaaaa1": "123456789012"}
        # one row per instance and hour: trn1 one hour, inf2 two
        assert session.scalar(select(func.count()).select_from(NeuronRollup)) == 3


def test_ingest_neuron_of_a_missing_file_is_one_line(use_db: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["ingest-neuron", "/no/such/file.jsonl"]) == 1
    err = capsys.readouterr().err
    assert "does not exist" in err and "Traceback" not in err


def test_neuron_agent_delegates_to_the_agent(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["neuron-agent", "--to", "stdout", "--input", str(DATA / "inf2_xlarge.jsonl")]) == 0
    captured = capsys.readouterr()
    published = [d for line in captured.out.splitlines() for d in json.loads(line)]
    assert len(published) == 4 * 4  # four minutes, four metrics
    assert "8 reports from 10 lines, 2 malformed" in captured.err
