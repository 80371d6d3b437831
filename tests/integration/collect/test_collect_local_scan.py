"""A local `chipwise scan` publishes nothing: ScanCompleted goes to an event bus only when one is configured."""

from __future__ import annotations

import json

import pytest
from scan_account_fixture import seed_account

from chipwise.cli import main
from chipwise_devkit.emulator import Emulator


def test_a_local_scan_without_a_bus_succeeds_and_publishes_nothing(
    aws: Emulator, use_db: str, capsys: pytest.CaptureFixture[str]
) -> None:
    # Given a seeded account, no CHIPWISE_EVENT_BUS_NAME and no bus in the account
    seed_account(aws)
    # When `chipwise scan` runs on this machine
    assert main(["scan", "--json", "--lookback-days", "2"]) == 0
    document = json.loads(capsys.readouterr().out)
    # Then the scan succeeded and made no EventBridge call at all
    assert document["status"] == "succeeded", document["errors"]
    assert document["errors"] == []
    assert not [call for call in document["api_calls"] if call.startswith("events.")]
