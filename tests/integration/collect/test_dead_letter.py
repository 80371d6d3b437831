"""Malformed events go straight to the dead-letter queue with their reason, not retried (issue 26 item 6): a
malformed scan message is put on the scan dead-letter queue (FIFO) and is not a batch item failure (SQS deletes
it); a malformed ingest, notify or benchmark event is put on the asynchronous dead-letter queue and the invocation
succeeds (Lambda does not retry it). Without a queue configured, they fail as before."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import boto3
import pytest
from lambda_loader import load_handler
from scan_account_fixture import seed_account
from sqlalchemy import func, select

from chipwise.settings import get_settings
from chipwise.store import get_session_factory
from chipwise.store.tables import Scan
from chipwise_devkit.emulator import Emulator


def _queue(monkeypatch: pytest.MonkeyPatch, name: str) -> str:
    sqs = boto3.client("sqs")
    attributes = {"FifoQueue": "true"} if name.endswith(".fifo") else {}
    url = sqs.create_queue(QueueName=name, Attributes=attributes)["QueueUrl"]
    monkeypatch.setenv("CHIPWISE_DEAD_LETTER_QUEUE_URL", url)
    get_settings.cache_clear()
    return url


def _dead_letters(url: str) -> list[dict[str, Any]]:
    messages = (
        boto3.client("sqs")
        .receive_message(QueueUrl=url, MaxNumberOfMessages=10, MessageAttributeNames=["All"], WaitTimeSeconds=0)
        .get("Messages", [])
    )
    return messages


def test_malformed_scan_messages_go_to_the_dead_letter_queue_and_are_not_retried(
    aws: Emulator,
    use_db: str,
    lambda_context: Any,
    sample_event: Callable[..., dict[str, Any]],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Given the scan dead-letter queue (FIFO) and a batch of one good message and two malformed ones
    url = _queue(monkeypatch, "chipwise-scan-dlq.fifo")
    seed_account(aws)
    event = sample_event("scan_account/malformed_records")
    # When the handler gets the batch
    response = load_handler("scan_account").handler(event, lambda_context)
    # Then no record is a batch item failure (SQS deletes the two malformed ones instead of redelivering them)
    assert response == {"batchItemFailures": []}
    # And both are on the dead-letter queue as they came, with the reason and their source
    letters = sorted(_dead_letters(url), key=lambda m: m["Body"])
    assert [m["Body"] for m in letters] == [
        "this is not json",
        '{"account_id": "not-an-account", "region": "us-east-1"}',
    ]
    reasons = [m["MessageAttributes"]["reason"]["StringValue"] for m in letters]
    assert reasons == [
        "malformed record: body: json_invalid",
        "malformed record: body.account_id: string_pattern_mismatch",
    ]
    assert {m["MessageAttributes"]["source"]["StringValue"] for m in letters} == {event["Records"][1]["eventSourceARN"]}
    # And the good message was scanned
    with get_session_factory(use_db)() as session:
        assert session.scalar(select(func.count()).select_from(Scan)) == 1


def test_a_scan_that_fails_is_still_retried(
    aws: Emulator,
    use_db: str,
    lambda_context: Any,
    sample_event: Callable[..., dict[str, Any]],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Given a well-formed message naming another account (its work fails, it is not malformed)
    url = _queue(monkeypatch, "chipwise-scan-dlq.fifo")
    event = sample_event("scan_account/home_account")
    event["Records"][0]["body"] = json.dumps({"account_id": "111111111111", "region": "us-east-1"})
    response = load_handler("scan_account").handler(event, lambda_context)
    # Then it is a batch item failure (retried, then redriven), and nothing was dead-lettered by hand
    assert response == {"batchItemFailures": [{"itemIdentifier": event["Records"][0]["messageId"]}]}
    assert _dead_letters(url) == []


def test_a_malformed_ingest_event_goes_to_the_dead_letter_queue_not_retried(
    aws: Emulator, use_db: str, lambda_context: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    url = _queue(monkeypatch, "chipwise-async-dlq")
    event = {"detail-type": "Scheduled Event", "detail": {}}
    # When the ingest function gets an event of another shape, Then it returns (no retry) ...
    result = load_handler("ingest_neuron").handler(event, lambda_context)
    assert result["dead_lettered"] is True and result["status"] == "rejected"
    # ... and the event is on the dead-letter queue with the reason
    [letter] = _dead_letters(url)
    assert json.loads(letter["Body"]) == event
    assert letter["MessageAttributes"]["reason"]["StringValue"].startswith("not an S3 ObjectCreated notification")
    assert letter["MessageAttributes"]["source"]["StringValue"] == "ingest_neuron"


def test_malformed_notify_and_benchmark_events_go_to_the_dead_letter_queue(
    aws: Emulator, use_db: str, lambda_context: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    url = _queue(monkeypatch, "chipwise-async-dlq")
    event = {"source": "chipwise", "detail-type": "ScanCompleted", "detail": {"scan_id": "x"}}
    notify = load_handler("notify").handler(event, lambda_context)
    dispatch = load_handler("benchmark_dispatch").handler(event, lambda_context)
    result = load_handler("benchmark_result").handler(event, lambda_context)
    assert notify["status"] == dispatch["status"] == result["status"] == "rejected"
    assert notify["dead_lettered"] is True and dispatch["dead_lettered"] is True
    letters = _dead_letters(url)
    sources = sorted(m["MessageAttributes"]["source"]["StringValue"] for m in letters)
    assert sources == ["benchmark_dispatch", "benchmark_result", "notify"]
    assert all(json.loads(m["Body"]) == event for m in letters)


def test_without_a_dead_letter_queue_a_malformed_ingest_event_fails_as_before(
    aws: Emulator, use_db: str, lambda_context: Any
) -> None:
    from chipwise.errors import InvalidInput

    with pytest.raises(InvalidInput, match="not an S3 ObjectCreated"):
        load_handler("ingest_neuron").handler({"detail-type": "Scheduled Event", "detail": {}}, lambda_context)
