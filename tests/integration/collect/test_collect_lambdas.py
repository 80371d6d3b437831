"""The scan_account and ingest_neuron Lambdas with their sample events: thin handlers, one bad record or object
never stops the rest."""

from __future__ import annotations

import gzip
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import boto3
import pytest
from botocore.awsrequest import AWSResponse
from lambda_loader import load_handler
from scan_account_fixture import seed_account
from sqlalchemy import func, select

from chipwise.aws import base_session
from chipwise.errors import UpstreamError
from chipwise.store import get_session_factory
from chipwise.store.repositories.accounts import AccountRepository
from chipwise.store.tables import Account, NeuronRollup, Resource, Scan
from chipwise_devkit.emulator import Emulator

DATA = Path(__file__).resolve().parents[2] / "unit" / "collect" / "data"
EVENTS = Path(__file__).resolve().parents[3] / "events"
BUCKET = "chipwise-artifacts"
INF2_INSTANCE = "i-0aaaaaaaaaaaaaaa1"


def _rollups(url: str) -> list[tuple[Any, ...]]:
    with get_session_factory(url)() as session:
        rows = session.scalars(select(NeuronRollup).order_by(NeuronRollup.hour, NeuronRollup.runtime_tag))
        return [
            (r.account_id, r.instance_id, r.runtime_tag, r.hour, r.reports, r.neuroncore_utilization_avg) for r in rows
        ]


# --- scan_account ------------------------------------------------------------------------------------------------


def test_scan_account_scans_the_home_account(
    aws: Emulator, use_db: str, lambda_context: Any, sample_event: Callable[..., dict[str, Any]]
) -> None:
    # Given the home account with a few resources and a scan request for it
    seed_account(aws)
    # When the handler gets the SQS batch
    response = load_handler("scan_account").handler(sample_event("scan_account/home_account"), lambda_context)
    # Then nothing failed and the scan is stored
    assert response == {"batchItemFailures": []}
    with get_session_factory(use_db)() as session:
        scan = session.scalars(select(Scan)).one()
        assert scan.account_id == "123456789012" and scan.resource_count == 10


def test_scan_account_fails_only_the_malformed_records(
    aws: Emulator, use_db: str, lambda_context: Any, sample_event: Callable[..., dict[str, Any]]
) -> None:
    event = sample_event("scan_account/malformed_records")
    response = load_handler("scan_account").handler(event, lambda_context)
    failed = [f["itemIdentifier"] for f in response["batchItemFailures"]]
    assert failed == [event["Records"][1]["messageId"], event["Records"][2]["messageId"]]
    with get_session_factory(use_db)() as session:
        assert session.scalar(select(func.count()).select_from(Scan)) == 1


def test_scan_account_fans_out_to_member_accounts_through_their_roles(
    aws: Emulator, use_db: str, lambda_context: Any, sample_event: Callable[..., dict[str, Any]]
) -> None:
    # Given three member accounts, each with one Inferentia instance of its own
    for account in ("111111111111", "222222222222", "333333333333"):
        creds = boto3.client("sts").assume_role(
            RoleArn=f"arn:aws:iam::{account}:role/ChipwiseReadOnly", RoleSessionName="seed"
        )
        keys = creds["Credentials"]
        boto3.client(
            "ec2",
            aws_access_key_id=keys["AccessKeyId"],
            aws_secret_access_key=keys["SecretAccessKey"],
            aws_session_token=keys["SessionToken"],
        ).run_instances(ImageId="ami-12345678", InstanceType="inf2.xlarge", MinCount=1, MaxCount=1)
    # When the handler gets one message per account
    response = load_handler("scan_account").handler(sample_event("scan_account/member_accounts"), lambda_context)
    # Then each account was scanned with its own credentials and recorded with its role
    assert response == {"batchItemFailures": []}
    with get_session_factory(use_db)() as session:
        scans = {s.account_id: s.resource_count for s in session.scalars(select(Scan))}
        resources = session.scalars(select(Resource)).all()
        accounts = {a.account_id: a.role_arn for a in AccountRepository(session).list()}
    assert scans == {"111111111111": 1, "222222222222": 1, "333333333333": 1}
    assert {r.arn.split(":")[4] for r in resources} == set(scans)
    assert accounts["222222222222"] == "arn:aws:iam::222222222222:role/ChipwiseReadOnly"


# --- ingest_neuron -----------------------------------------------------------------------------------------------


@pytest.fixture
def bucket(aws: Emulator) -> Any:
    s3 = boto3.client("s3")
    s3.create_bucket(Bucket=BUCKET)
    return s3


def _put(s3: Any, key: str, body: bytes) -> None:
    s3.put_object(Bucket=BUCKET, Key=key, Body=body)


def _s3_event(*keys: str) -> dict[str, Any]:
    event: dict[str, Any] = json.loads((EVENTS / "ingest_neuron" / "s3_object_created.json").read_text())
    template = event["Records"][0]
    event["Records"] = [
        {**template, "s3": {**template["s3"], "object": {**template["s3"]["object"], "key": key}}} for key in keys
    ]
    return event


def test_ingest_neuron_stores_hourly_rollups_and_tolerates_bad_objects(
    bucket: Any, use_db: str, lambda_context: Any
) -> None:
    # Given a good report file (gzip, two malformed lines inside), a file that is not JSON lines, and a missing one
    good = f"neuron/{INF2_INSTANCE}/2026-11-20.jsonl.gz"
    _put(bucket, good, gzip.compress((DATA / "inf2_xlarge.jsonl").read_bytes()))
    _put(bucket, "neuron/i-0123456789abcdef0/notes.txt", b"this is not a neuron-monitor report\nnor is this\n")
    # When one S3 notification names all three (the missing key URL-encoded as S3 sends it)
    event = _s3_event(good, "neuron/i-0123456789abcdef0/notes.txt", "neuron/i-0123456789abcdef0/gone+away.jsonl")
    result = load_handler("ingest_neuron").handler(event, lambda_context)
    # Then the good object is stored and the others are rejected with their reasons
    assert (result["objects"], result["accepted"], result["reports"], result["malformed_lines"]) == (3, 1, 8, 2)
    reasons = {r["source"].rsplit("/", 1)[-1]: r["reason"] for r in result["rejected"]}
    assert "not neuron-monitor JSON lines (2 of 2 lines malformed)" in reasons["notes.txt"]
    assert reasons["gone away.jsonl"].startswith("NoSuchKey")
    rows = _rollups(use_db)
    assert [(r[2], r[3].hour, r[4]) for r in rows] == [
        ("(instance)", 10, 4),
        ("(instance)", 11, 4),
    ]
    assert {r[0] for r in rows} == {"123456789012"}  # not in the inventory: the ingester's own account
    # And ingesting the same object again changes nothing
    load_handler("ingest_neuron").handler(_s3_event(good), lambda_context)
    assert _rollups(use_db) == rows


def test_ingest_neuron_takes_the_eventbridge_form_and_the_account_from_the_key(
    bucket: Any, use_db: str, lambda_context: Any, sample_event: Callable[..., dict[str, Any]]
) -> None:
    event = sample_event("ingest_neuron/eventbridge_object_created")
    _put(bucket, event["detail"]["object"]["key"], (DATA / "trn1_32xlarge.jsonl").read_bytes())
    result = load_handler("ingest_neuron").handler(event, lambda_context)
    assert (result["accepted"], result["rollups"]) == (1, 1)  # one instance, one hour: both runtimes in it
    assert {(r[0], r[1], r[2]) for r in _rollups(use_db)} == {("123456789012", "i-0bbbbbbbbbbbbbbb2", "(instance)")}


def test_ingest_neuron_finds_the_account_in_the_inventory(bucket: Any, use_db: str, lambda_context: Any) -> None:
    # Given the instance is known to the store, in a member account
    with get_session_factory(use_db).begin() as session:
        session.add(Account(account_id="444455556666"))
        session.flush()
        session.add(
            Resource(
                account_id="444455556666",
                region="us-east-1",
                kind="ec2_instance",
                name="trn2",
                platform="trainium",
                arn="arn:aws:ec2:us-east-1:444455556666:instance/i-0ccccccccccccccc3",
            )
        )
    key = "neuron/i-0ccccccccccccccc3/2026-11-20.jsonl"
    _put(bucket, key, (DATA / "trn2_48xlarge.jsonl").read_bytes())
    load_handler("ingest_neuron").handler(_s3_event(key), lambda_context)
    assert {r[0] for r in _rollups(use_db)} == {"444455556666"}


def test_ingest_neuron_rejects_an_event_of_another_shape(use_db: str, lambda_context: Any) -> None:
    from chipwise.errors import InvalidInput

    with pytest.raises(InvalidInput, match="not an S3 ObjectCreated"):
        load_handler("ingest_neuron").handler({"detail-type": "Scheduled Event", "detail": {}}, lambda_context)


def test_objects_outside_neuron_are_ignored(bucket: Any, use_db: str, lambda_context: Any) -> None:
    result = load_handler("ingest_neuron").handler(_s3_event("benchmarks/result.json"), lambda_context)
    assert result["objects"] == 0 and json.dumps(result)


# --- the edges: parser models, no input in logs, EMF metrics ------------------------------------------------------


def test_ingest_takes_s3_notifications_delivered_through_sqs(sample_event: Callable[..., dict[str, Any]]) -> None:
    # Given S3's test message and an ObjectCreated notification, both as SQS messages (S3 -> SQS -> Lambda)
    from chipwise.edges import parse_event
    from chipwise.models.events import ObjectCreatedEvent
    from chipwise.pipeline.neuron_ingest import neuron_objects

    event = parse_event(sample_event("ingest_neuron/sqs_s3_notification"), ObjectCreatedEvent, "an S3 event")
    # Then the test message names nothing and the notification names its object
    refs = neuron_objects(event)
    assert [(r.bucket, r.key) for r in refs] == [
        ("chipwise-artifacts", "neuron/i-0123456789abcdef0/2026-11-21.jsonl.gz")
    ]


def test_a_malformed_event_is_rejected_naming_where_not_what(lambda_context: Any) -> None:
    # Given an event of no known shape carrying a secret-looking value
    from chipwise.errors import InvalidInput

    with pytest.raises(InvalidInput) as raised:
        event = {"Records": [{"s3": {"bucket": {"name": "SENTINEL-SECRET-4711"}}}]}
        load_handler("ingest_neuron").handler(event, lambda_context)
    # Then the reason says what is wrong and where, never the value
    assert "not an S3 ObjectCreated notification" in str(raised.value)
    assert "SENTINEL-SECRET-4711" not in str(raised.value)


def test_a_malformed_scan_message_is_logged_without_its_content(
    aws: Emulator, use_db: str, lambda_context: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    # Given an SQS batch whose only message carries a bad account id and an ExternalId-like secret
    body = json.dumps({"account_id": "SENTINEL-4711", "region": "us-east-1", "external_id": "SENTINEL-EXTERNAL-ID"})
    event = json.loads((EVENTS / "scan_account" / "malformed_records.json").read_text())
    event["Records"] = [{**event["Records"][0], "body": body}]
    # When the handler runs
    response = load_handler("scan_account").handler(event, lambda_context)
    # Then the message fails alone, and the log line names the field, never the values
    assert response["batchItemFailures"] == [{"itemIdentifier": event["Records"][0]["messageId"]}]
    logged = capsys.readouterr()
    text = logged.out + logged.err
    assert "record failed" in text and "account_id" in text
    assert "SENTINEL" not in text


def test_a_scan_publishes_its_emf_metrics(
    aws: Emulator,
    use_db: str,
    lambda_context: Any,
    sample_event: Callable[..., dict[str, Any]],
    capsys: pytest.CaptureFixture[str],
) -> None:
    # Given the home account and a scan request
    seed_account(aws)
    # When the handler runs
    load_handler("scan_account").handler(sample_event("scan_account/home_account"), lambda_context)
    # Then one EMF document carries the scan's duration, API calls, findings and savings
    blobs = [json.loads(line) for line in capsys.readouterr().out.splitlines() if line.startswith('{"_aws"')]
    assert blobs, "no EMF metrics printed"
    (emf,) = blobs
    names = {m["Name"] for d in emf["_aws"]["CloudWatchMetrics"] for m in d["Metrics"]}
    assert {"ScanDuration", "ApiCalls", "Findings", "EstimatedSavings"} <= names
    calls = emf["ApiCalls"] if isinstance(emf["ApiCalls"], list) else [emf["ApiCalls"]]  # one value per record
    assert all(c > 0 for c in calls) and emf["_aws"]["CloudWatchMetrics"][0]["Namespace"] == "Chipwise"


def test_a_message_whose_role_names_another_account_is_rejected_and_writes_nothing(
    aws: Emulator, use_db: str, lambda_context: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    # Given a scan message that says account A but whose role is in account B
    seed_account(aws)
    body = json.dumps(
        {
            "account_id": "111111111111",
            "region": "us-east-1",
            "role_arn": "arn:aws:iam::222222222222:role/ChipwiseReadOnly",
        }
    )
    event = json.loads((EVENTS / "scan_account" / "malformed_records.json").read_text())
    event["Records"] = [{**event["Records"][0], "body": body}]
    # When the handler runs
    response = load_handler("scan_account").handler(event, lambda_context)
    # Then the message fails alone with the reason, and nothing at all is written: no account, no scan, no resource
    assert response["batchItemFailures"] == [{"itemIdentifier": event["Records"][0]["messageId"]}]
    logged = capsys.readouterr()
    assert "role_arn names another account" in logged.out + logged.err
    with get_session_factory(use_db)() as session:
        for table in (Account, Scan, Resource):
            assert session.scalar(select(func.count()).select_from(table)) == 0, table.__name__


def test_an_object_s3_cannot_give_fails_the_invocation(
    bucket: Any, aws: Emulator, use_db: str, lambda_context: Any
) -> None:
    # Given a good report object and S3 answering 503 to GetObject ten times over (moto's S3 has no fault hook:
    # botocore's own before-call event answers for it, on the session every client of this process comes from)
    good = f"neuron/{INF2_INSTANCE}/2026-11-20.jsonl.gz"
    _put(bucket, good, gzip.compress((DATA / "inf2_xlarge.jsonl").read_bytes()))
    failures = {"left": 10}

    def slow_down(**_: Any) -> Any:
        if failures["left"] <= 0:
            return None
        failures["left"] -= 1
        error = {"Error": {"Code": "SlowDown", "Message": "Please reduce your request rate."}}
        return AWSResponse("https://s3", 503, {}, None), {**error, "ResponseMetadata": {"HTTPStatusCode": 503}}

    base_session().events.register("before-call.s3.GetObject", slow_down)
    # When the notification arrives, Then the invocation fails (Lambda retries it; the DLQ keeps it), not "success"
    with pytest.raises(UpstreamError, match="could not be read"):
        load_handler("ingest_neuron").handler(_s3_event(good), lambda_context)
    assert _rollups(use_db) == []
    # And once S3 answers again, the retry stores the reports
    failures["left"] = 0
    result = load_handler("ingest_neuron").handler(_s3_event(good), lambda_context)
    assert result["accepted"] == 1 and _rollups(use_db)
