"""Fan-out on the emulator: an organization of member accounts → scan queue → one scan per account."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path
from types import ModuleType
from typing import Any

import boto3
import pytest
from botocore.client import BaseClient
from sqlalchemy import select

from chipwise.aws import base_session
from chipwise.settings import get_settings
from chipwise.store.session import get_session_factory
from chipwise.store.tables import Scan
from chipwise_devkit.emulator import Emulator

ROOT = Path(__file__).resolve().parents[2]
EXTERNAL_ID = "chipwise-7f3a"


def _handler(name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(f"chipwise_fanout_{name}", ROOT / "functions" / name / "app.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture
def organization(aws: Emulator, use_db: str, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Three member accounts, each with one Inferentia instance of its own, and a scan queue."""
    org = boto3.client("organizations")
    org.create_organization(FeatureSet="ALL")
    members = [
        org.create_account(AccountName=f"team-{n}", Email=f"team-{n}@example.com")["CreateAccountStatus"]["AccountId"]
        for n in range(3)
    ]
    for account in members:
        keys = boto3.client("sts").assume_role(
            RoleArn=f"arn:aws:iam::{account}:role/ChipwiseReadOnly", RoleSessionName="seed"
        )["Credentials"]
        boto3.client(
            "ec2",
            aws_access_key_id=keys["AccessKeyId"],
            aws_secret_access_key=keys["SecretAccessKey"],
            aws_session_token=keys["SessionToken"],
        ).run_instances(ImageId="ami-12345678", InstanceType="inf2.xlarge", MinCount=1, MaxCount=1)
    queue = boto3.client("sqs").create_queue(QueueName="chipwise-scans.fifo", Attributes={"FifoQueue": "true"})[
        "QueueUrl"
    ]
    boto3.client("events").create_event_bus(Name="chipwise")
    monkeypatch.setenv("CHIPWISE_USE_ORGANIZATIONS", "true")
    monkeypatch.setenv("CHIPWISE_EXTERNAL_ID", EXTERNAL_ID)
    monkeypatch.setenv("CHIPWISE_SCAN_QUEUE_URL", queue)
    get_settings.cache_clear()
    return members


@pytest.fixture
def assume_role_calls(monkeypatch: pytest.MonkeyPatch) -> list[dict[str, Any]]:
    """Every AssumeRole request our code sends (the emulator does not check ExternalId, so we do)."""
    calls: list[dict[str, Any]] = []
    original = BaseClient._make_api_call

    def spy(self: BaseClient, operation: str, params: dict[str, Any]) -> Any:
        if operation == "AssumeRole":
            calls.append(dict(params))
        return original(self, operation, params)

    monkeypatch.setattr(BaseClient, "_make_api_call", spy)
    return calls


def _sqs_event(queue_url: str) -> dict[str, Any]:
    """The queue's messages in the shape Lambda's SQS event source delivers them."""
    sqs = boto3.client("sqs")
    messages = sqs.receive_message(QueueUrl=queue_url, MaxNumberOfMessages=10, AttributeNames=["All"])["Messages"]
    return {
        "Records": [
            {
                "messageId": m["MessageId"],
                "receiptHandle": m["ReceiptHandle"],
                "body": m["Body"],
                "attributes": {  # what Lambda passes on: SQS's own system attributes
                    "ApproximateReceiveCount": m["Attributes"]["ApproximateReceiveCount"],
                    "SentTimestamp": m["Attributes"]["SentTimestamp"],
                    "SenderId": m["Attributes"]["SenderId"],
                    "ApproximateFirstReceiveTimestamp": m["Attributes"]["ApproximateFirstReceiveTimestamp"],
                },
                "messageAttributes": {},
                "md5OfBody": m["MD5OfBody"],
                "eventSource": "aws:sqs",
                "eventSourceARN": "arn:aws:sqs:us-east-1:123456789012:chipwise-scans",
                "awsRegion": "us-east-1",
            }
            for m in messages
        ]
    }


def _scans(db_url: str) -> dict[str, str]:
    with get_session_factory(db_url)() as session:
        return {s.account_id: s.status for s in session.scalars(select(Scan))}


def test_three_member_accounts_become_three_scans(
    organization: list[str], use_db: str, lambda_context: Any, assume_role_calls: list[dict[str, Any]]
) -> None:
    # Given an organization whose management account is the home account, and three members
    event = json.loads((ROOT / "events" / "scan_dispatch" / "daily_schedule.json").read_text())
    # When the schedule fires the dispatcher
    dispatched = _handler("scan_dispatch").handler(event, lambda_context)
    # Then one message per member (and the management account itself) is on the queue
    assert dispatched["sent"] == dispatched["planned"] == 4 and dispatched["failed"] == []
    batch = _sqs_event(str(get_settings().scan_queue_url))
    bodies = {json.loads(r["body"])["account_id"]: json.loads(r["body"]) for r in batch["Records"]}
    for account in organization:
        assert bodies[account]["role_arn"] == f"arn:aws:iam::{account}:role/ChipwiseReadOnly"
        assert "external_id" not in bodies[account]  # the secret never travels in a message
    # When the scan Lambda consumes the batch
    base_session.cache_clear()
    response = _handler("scan_account").handler(batch, lambda_context)
    # Then every account was scanned under its own identity, with the ExternalId on every AssumeRole
    assert response == {"batchItemFailures": []}
    scans = _scans(use_db)
    assert {a: scans[a] for a in organization} == dict.fromkeys(organization, "succeeded")
    member_calls = [c for c in assume_role_calls if c["RoleSessionName"] != "seed"]
    assert len(member_calls) == 3
    assert all(c["ExternalId"] == EXTERNAL_ID for c in member_calls)


def test_an_account_whose_role_cannot_be_assumed_fails_alone(
    organization: list[str], aws: Emulator, use_db: str, lambda_context: Any
) -> None:
    # Given the three members' scan requests on the queue
    event = json.loads((ROOT / "events" / "scan_dispatch" / "daily_schedule.json").read_text())
    _handler("scan_dispatch").handler(event, lambda_context)
    batch = _sqs_event(str(get_settings().scan_queue_url))
    batch["Records"] = [r for r in batch["Records"] if json.loads(r["body"])["role_arn"]]
    # And the first member's role refuses us (AccessDenied on its AssumeRole)
    aws.inject_fault("sts", "AssumeRole", "AccessDenied", "not authorized to assume ChipwiseReadOnly", times=1)
    # When the scan Lambda consumes the batch
    response = _handler("scan_account").handler(batch, lambda_context)
    # Then that account's message fails and is recorded as a failed scan; the other two complete
    first = batch["Records"][0]
    assert response == {"batchItemFailures": [{"itemIdentifier": first["messageId"]}]}
    refused = json.loads(first["body"])["account_id"]
    scans = _scans(use_db)
    assert scans[refused] == "failed"
    assert sorted(s for a, s in scans.items() if a != refused) == ["succeeded", "succeeded"]
    with get_session_factory(use_db)() as session:
        failed = session.scalars(select(Scan).where(Scan.account_id == refused)).one()
        assert failed.errors[0]["code"] == "AccessDenied"


def test_dispatch_without_a_queue_is_one_clear_error(use_db: str, monkeypatch: pytest.MonkeyPatch) -> None:
    from chipwise.aws import aws_context
    from chipwise.errors import ConfigError
    from chipwise.pipeline.fanout import dispatch_scans

    monkeypatch.setenv("CHIPWISE_ACCOUNT_IDS", "111111111111")
    get_settings.cache_clear()
    with pytest.raises(ConfigError, match="CHIPWISE_SCAN_QUEUE_URL"):
        dispatch_scans(aws_context("us-east-1"), get_settings())


def test_accounts_commands_show_and_queue_the_scans(
    organization: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    from chipwise.cli import main

    assert main(["accounts", "list", "--json"]) == 0
    listed = json.loads(capsys.readouterr().out)
    assert {r["account_id"] for r in listed} >= set(organization)
    assert all("external_id" not in r for r in listed)  # the secret is not printed
    assert main(["accounts", "dispatch", "--dry-run"]) == 0
    assert "would queue 4 scans" in capsys.readouterr().out
    assert main(["accounts", "dispatch"]) == 0
    assert "queued 4 scans" in capsys.readouterr().out


def test_a_replayed_schedule_queues_and_scans_nothing_twice(
    organization: list[str], aws: Emulator, use_db: str, lambda_context: Any
) -> None:
    # Given the daily schedule delivered twice (EventBridge Scheduler delivers at least once)
    event = json.loads((ROOT / "events" / "scan_dispatch" / "daily_schedule.json").read_text())
    first = _handler("scan_dispatch").handler(event, lambda_context)
    second = _handler("scan_dispatch").handler(event, lambda_context)
    assert first["sent"] == second["sent"] == 4  # both sends were accepted by SQS...
    # Then the FIFO queue holds one message per (account, region, day): the replay was deduplicated
    batch = _sqs_event(str(get_settings().scan_queue_url))
    accounts = sorted(json.loads(r["body"])["account_id"] for r in batch["Records"])
    assert len(accounts) == len(set(accounts)) == 4
    # And a duplicate that still reaches the scan function later the same day scans nothing again
    base_session.cache_clear()
    assert _handler("scan_account").handler(batch, lambda_context) == {"batchItemFailures": []}
    with get_session_factory(use_db)() as session:
        scans_before = sorted(session.scalars(select(Scan.id)))
    assert _handler("scan_account").handler(batch, lambda_context) == {"batchItemFailures": []}
    with get_session_factory(use_db)() as session:
        assert sorted(session.scalars(select(Scan.id))) == scans_before and len(scans_before) == 4
