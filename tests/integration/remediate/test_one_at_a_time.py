"""One apply of a finding at a time, across processes (issue 36): two processes applying one finding at once (the
CLI's door, then two Slack presses) make exactly one set of AWS calls and one ``applied`` row; the other is told the
finding is being applied (or is applied already). A caller finding the finding held is told by whom since when; a
rollback holds it the same way. On PostgreSQL (with CHIPWISE_TEST_DATABASE_URL) and SQLite alike."""

from __future__ import annotations

import json
import multiprocessing
import os
from collections import Counter
from collections.abc import Iterator
from datetime import timedelta
from typing import Any

import boto3
import pytest
from concurrent_workers import apply_in_process, press_in_process
from remediate_factories import ACCOUNT, gpu_instance, gpu_utilisation, idle_instance_finding, instance_state
from sqlalchemy.orm import Session
from test_slack_actions import SECRET, body_for, event_for

from chipwise.clock import utcnow
from chipwise.errors import InvalidInput
from chipwise.pipeline.apply import HOLD_MINUTES, apply_finding
from chipwise.pipeline.rollback import rollback_finding
from chipwise.store.repositories.remediations import FindingBusy, RemediationRepository
from chipwise.store.session import get_session_factory
from chipwise_devkit.emulator import Emulator, faults

CHANGES = {"CreateTags", "StopInstances"}


@pytest.fixture
def calls(aws: Emulator, monkeypatch: pytest.MonkeyPatch) -> Iterator[Counter[str]]:
    """Every change call the emulator serves (it runs in this process: the children call it over HTTP)."""
    seen: Counter[str] = Counter()
    original = faults._original_call_action
    assert original is not None

    def counting(response: Any) -> Any:
        action = str(response._get_action())
        if action in CHANGES:
            seen[action] += 1
        return original(response)

    monkeypatch.setattr(faults, "_original_call_action", counting)
    yield seen


def _env(aws: Emulator, url: str, **extra: str) -> dict[str, str]:
    return {**aws.env(), "CHIPWISE_DATABASE_URL": url, **extra}


def _race(target: Any, args: list[tuple[Any, ...]]) -> list[tuple[str, str, str]]:
    """Start one process per argument tuple, released together by a barrier; their results."""
    spawn = multiprocessing.get_context("spawn")
    barrier, results = spawn.Barrier(len(args)), spawn.Queue()
    workers = [spawn.Process(target=target, args=(*a, barrier, results)) for a in args]
    for worker in workers:
        worker.start()
    answers = [results.get(timeout=120) for _ in workers]
    for worker in workers:
        worker.join(timeout=60)
        assert worker.exitcode == 0
    return sorted(answers)


def _idle(session: Session, aws: Emulator) -> tuple[str, str]:
    """An idle GPU instance (fresh idle datapoints since the scan) and its stored finding, committed."""
    instance = gpu_instance()
    finding = idle_instance_finding(session, instance)
    session.commit()
    gpu_utilisation(aws, instance, 0.5)
    return instance, finding


def _applied(url: str, finding: str) -> list[str]:
    with get_session_factory(url).begin() as session:
        return [f"{r.event}:{r.status}" for r in RemediationRepository(session).for_finding(finding)]


def test_two_processes_applying_one_finding_act_once(
    db_url: str, aws: Emulator, calls: Counter[str], session: Session
) -> None:
    instance, finding = _idle(session, aws)
    answers = _race(apply_in_process, [(_env(aws, db_url), db_url, finding, who) for who in ("alice", "bob")])
    statuses = [status for _, status, _ in answers]
    assert statuses.count("applied") == 1, answers
    (other,) = [a for a in answers if a[1] != "applied"]
    assert other[1] in {"FindingBusy", "InvalidInput"}
    assert "is being applied by" in other[2] or "is already applied" in other[2], other
    assert calls == Counter({"CreateTags": 1, "StopInstances": 1})
    assert _applied(db_url, finding) == ["apply:applied"]
    assert instance_state(instance)[0] == "stopped"


def test_two_slack_presses_of_apply_act_once(db_url: str, aws: Emulator, calls: Counter[str], session: Session) -> None:
    instance, finding = _idle(session, aws)
    secret = boto3.client("secretsmanager").create_secret(
        Name="chipwise/slack-signing", SecretString=json.dumps({"signing_secret": SECRET})
    )["ARN"]
    env = _env(
        aws,
        db_url,
        CHIPWISE_SLACK_SIGNING_SECRET_NAME=secret,
        CHIPWISE_SLACK_TEAM_ID="T024BE7LD",
        CHIPWISE_SLACK_APPROVERS=json.dumps({ACCOUNT: ["U024BE7LH", "U0BOB"]}),
    )
    presses = [
        (env, event_for(body_for("chipwise_apply", finding, user=user)), user) for user in ("U024BE7LH", "U0BOB")
    ]
    answers = _race(press_in_process, presses)
    assert [code for _, code, _ in answers] == ["200", "200"]
    texts = [text for _, _, text in answers]
    assert sum(t.startswith("applied: ") for t in texts) == 1, texts
    assert any("is being applied by" in t or "is already applied" in t for t in texts), texts
    assert calls == Counter({"CreateTags": 1, "StopInstances": 1})
    assert _applied(db_url, finding) == ["apply:applied"]
    assert instance_state(instance)[0] == "stopped"


def test_a_held_finding_says_by_whom_since_when_and_rollback_waits_its_turn(
    db_url: str, aws: Emulator, calls: Counter[str], session: Session
) -> None:
    instance, finding = _idle(session, aws)
    started = utcnow()
    with get_session_factory(db_url).begin() as held:  # another caller's apply, between its claim and its audit row
        RemediationRepository(held).claim(finding, "apply", "slack:carol (U0C)", "slack", started, stale_before=started)
    with pytest.raises(FindingBusy, match=rf"being applied by slack:carol \(U0C\) \(slack\) since {started:%Y-%m-%d}"):
        apply_finding(finding, actor="alice", source="cli", database_url=db_url, approved=True)
    with pytest.raises(FindingBusy, match="being applied by slack:carol"):
        rollback_finding(finding, actor="alice", source="cli", database_url=db_url)
    assert calls == Counter() and instance_state(instance) == ("running", {})
    later = started + timedelta(minutes=HOLD_MINUTES + 1)  # the holder died: its record is stale by then
    outcome = apply_finding(finding, actor="alice", source="cli", database_url=db_url, now=later, approved=True)
    assert outcome.status == "applied"
    with get_session_factory(db_url).begin() as check:
        assert RemediationRepository(check).in_flight(finding) is None  # released with the audit row
    assert rollback_finding(finding, actor="bob", source="cli", database_url=db_url).status == "rolled_back"
    with pytest.raises(InvalidInput, match="nothing to roll back"):
        rollback_finding(finding, actor="bob", source="cli", database_url=db_url)
    with get_session_factory(db_url).begin() as check:
        assert RemediationRepository(check).in_flight(finding) is None  # released on an error too
    assert os.environ.get("CHIPWISE_DATABASE_URL") is None
