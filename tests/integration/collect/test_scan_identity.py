"""Every scan checks whose account it is (issue 26 item 2): one GetCallerIdentity against the message's account,
role or not, before anything is written; a message naming another account fails alone and writes nothing."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest
from lambda_loader import load_handler
from scan_account_fixture import seed_account
from sqlalchemy import func, select

from chipwise.store import get_session_factory
from chipwise.store.tables import Account, Finding, Resource, Scan
from chipwise_devkit.emulator import Emulator


def _record(template: dict[str, Any], message_id: str, body: dict[str, Any]) -> dict[str, Any]:
    return {**template, "messageId": message_id, "body": json.dumps(body)}


def test_a_message_naming_another_account_without_a_role_fails_alone_and_writes_nothing(
    aws: Emulator,
    use_db: str,
    lambda_context: Any,
    sample_event: Callable[..., dict[str, Any]],
    capsys: pytest.CaptureFixture[str],
) -> None:
    # Given the emulator's account 123456789012 with its resources, and a message naming 111111111111 without a
    # role (the home account's credentials would scan 123456789012's resources under 111111111111's id)
    seed_account(aws)
    event = sample_event("scan_account/home_account")
    template = event["Records"][0]
    event["Records"] = [_record(template, "m-other", {"account_id": "111111111111", "region": "us-east-1"})]
    # When the handler gets it
    response = load_handler("scan_account").handler(event, lambda_context)
    # Then the record fails (partial batch response) and nothing at all is written
    assert response == {"batchItemFailures": [{"itemIdentifier": "m-other"}]}
    with get_session_factory(use_db)() as session:
        for table in (Account, Scan, Resource, Finding):
            assert session.scalar(select(func.count()).select_from(table)) == 0, table.__name__
    # And the log says why, with the two account ids and no credentials
    logged = capsys.readouterr()
    output = logged.out + logged.err
    assert "names another account than its credentials act in" in output
    assert '"credentials_account_id":"123456789012"' in output.replace(" ", "")
    assert "testing" not in output  # the emulator's access key and secret


def test_in_one_batch_the_right_account_is_scanned_with_one_identity_call_and_the_wrong_one_fails(
    aws: Emulator, use_db: str, lambda_context: Any, sample_event: Callable[..., dict[str, Any]]
) -> None:
    # Given a batch of the home account's message and a message naming another account
    seed_account(aws)
    event = sample_event("scan_account/home_account")
    template = event["Records"][0]
    event["Records"] = [
        _record(template, "m-home", {"account_id": "123456789012", "region": "us-east-1"}),
        _record(template, "m-other", {"account_id": "210987654321", "region": "us-east-1"}),
    ]
    # When the handler runs
    response = load_handler("scan_account").handler(event, lambda_context)
    # Then only the other account's message fails; the home scan is stored with its resources
    assert response == {"batchItemFailures": [{"itemIdentifier": "m-other"}]}
    with get_session_factory(use_db)() as session:
        scan = session.scalars(select(Scan)).one()
        assert scan.account_id == "123456789012" and scan.resource_count == 10
        assert session.scalars(select(Account.account_id)).all() == ["123456789012"]
        # And the home scan asked STS who it is exactly once
        assert scan.document is not None and scan.document["api_calls"]["sts.GetCallerIdentity"] == 1
