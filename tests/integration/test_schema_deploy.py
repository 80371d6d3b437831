"""The schema at deploy time: the migrate function (a CloudFormation custom resource) upgrades under a lock and
answers CloudFormation; the scan and the ingest only check, and refuse a schema older than their code."""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import Any

import pytest
from alembic.script import ScriptDirectory
from sqlalchemy import text

from chipwise.edges import parse_event
from chipwise.errors import InvalidInput, StoreUnavailable, UpstreamError
from chipwise.models.events import ObjectCreatedEvent, SchemaMigrationRequest
from chipwise.models.scan import ScanRequest
from chipwise.pipeline.migrate import answer_schema_migration
from chipwise.pipeline.neuron_ingest import ingest_event
from chipwise.pipeline.scan import scan_account_request
from chipwise.settings import get_settings
from chipwise.store import migrate as migrate_module
from chipwise.store import schema
from chipwise.store.migrate import CustomResourceResponse, send_response
from chipwise.store.schema import CodeRevisions, migration_transaction, require_current_schema, schema_status
from chipwise.store.session import alembic_config, get_engine, upgrade

EVENTS = Path(__file__).resolve().parents[2] / "events" / "migrate"


def _event(name: str, url: str) -> SchemaMigrationRequest:
    event: dict[str, Any] = json.loads((EVENTS / f"{name}.json").read_text())
    event["ResponseURL"] = url
    return SchemaMigrationRequest.model_validate(event)


@pytest.fixture
def empty_db(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    """A configured SQLite store with no schema at all."""
    url = f"sqlite:///{tmp_path / 'empty.db'}"
    monkeypatch.setenv("CHIPWISE_DATABASE_URL", url)
    get_settings.cache_clear()
    return url


def test_the_code_revisions_are_alembic_s() -> None:
    # Given the migrations as Alembic reads them
    scripts = ScriptDirectory.from_config(alembic_config("sqlite://"))
    # When the schema check reads them without Alembic
    code = schema.code_revisions()
    # Then both see the same head and the same revisions
    assert code.head == scripts.get_current_head()
    assert code.known == {s.revision for s in scripts.walk_revisions()}


def test_an_empty_store_is_refused_with_the_fix(empty_db: str) -> None:
    with pytest.raises(StoreUnavailable, match=r"has no Chipwise schema .*chipwise db upgrade"):
        require_current_schema(empty_db)


def test_a_store_behind_the_code_is_refused(db_url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    # Given code one migration ahead of the store
    head = schema.code_revisions().head
    monkeypatch.setattr(schema, "code_revisions", lambda: CodeRevisions("0099_next", frozenset({head, "0099_next"})))
    # When the scan checks, Then it refuses and names both revisions and the fix
    with pytest.raises(StoreUnavailable, match=rf"is at schema {head}, this code needs 0099_next: run the migration"):
        require_current_schema(db_url)


def test_a_store_ahead_of_the_code_is_accepted(db_url: str) -> None:
    # Given a store a later deploy migrated, and this (rolled back) code
    head = schema.code_revisions().head
    with get_engine(db_url).begin() as connection:
        connection.execute(text("UPDATE alembic_version SET version_num = '0099_future'"))
    try:
        # When the scan checks, Then it runs (migrations only add)
        assert require_current_schema(db_url).state == "ahead"
    finally:  # the PostgreSQL store is shared by the session's tests
        with get_engine(db_url).begin() as connection:
            connection.execute(text("UPDATE alembic_version SET version_num = :head"), {"head": head})


def test_the_scan_lambda_refuses_an_unmigrated_store(empty_db: str) -> None:
    request = ScanRequest(account_id="123456789012", region="us-east-1")
    with pytest.raises(StoreUnavailable, match="chipwise db upgrade"):
        scan_account_request(request)
    assert schema_status(empty_db).state == "empty"  # nothing was migrated on the way


def test_the_ingest_lambda_refuses_an_unmigrated_store(empty_db: str, sample_event: Any) -> None:
    with pytest.raises(StoreUnavailable, match="chipwise db upgrade"):
        ingest_event(ObjectCreatedEvent.model_validate(sample_event("ingest_neuron/s3_object_created")))
    assert schema_status(empty_db).state == "empty"


def test_a_migration_waits_for_the_one_holding_the_lock(db_url: str) -> None:
    # Given a migration holding the lock
    finished = threading.Event()
    errors: list[BaseException] = []

    def second() -> None:
        try:
            upgrade(db_url)
        except BaseException as exc:  # reported by the assertion below
            errors.append(exc)
        finished.set()

    with migration_transaction(db_url):
        # When another one starts, Then it waits
        thread = threading.Thread(target=second)
        thread.start()
        assert not finished.wait(1.0)
    # And it finishes once the first has committed
    thread.join(30)
    assert finished.is_set() and errors == []
    assert schema_status(db_url).state == "current"


def test_a_migration_gives_up_after_its_lock_timeout(db_url: str) -> None:
    errors: list[BaseException] = []

    def second() -> None:
        try:
            upgrade(db_url, lock_timeout=0.5)
        except StoreUnavailable as exc:
            errors.append(exc)

    with migration_transaction(db_url):
        thread = threading.Thread(target=second)
        thread.start()
        thread.join(10)
    assert len(errors) == 1 and "held the lock" in str(errors[0])


def test_two_first_migrations_at_once_both_succeed(tmp_path: Path) -> None:
    # Given an empty SQLite store and two deploys migrating it at the same moment
    url = f"sqlite:///{tmp_path / 'race.db'}"
    start = threading.Barrier(2)
    errors: list[BaseException] = []

    def migrate() -> None:
        start.wait()
        try:
            upgrade(url)
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=migrate) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    # Then neither failed (the second waited and found the schema there) and the schema is current
    assert errors == []
    assert schema_status(url).state == "current"
    get_engine(url).dispose()


def test_create_migrates_and_answers_success(empty_db: str, cfn_responses: Any) -> None:
    # When CloudFormation creates the SchemaMigration resource on a new database
    answer = answer_schema_migration(_event("create", cfn_responses.url), remaining_seconds=900)
    # Then the schema is at the code's head, and CloudFormation got SUCCESS with the revision
    head = schema.code_revisions().head
    assert schema_status(empty_db).state == "current"
    [sent] = cfn_responses.received
    assert sent == answer
    assert sent["Status"] == "SUCCESS" and sent["Data"] == {"Revision": head, "Previous": ""}
    assert sent["PhysicalResourceId"] == "chipwise-schema" and sent["LogicalResourceId"] == "SchemaMigration"
    assert sent["RequestId"] == "0d2f1c3e-7a6b-4c5d-8e9f-0a1b2c3d4e5f"
    assert cfn_responses.headers[0].get("Content-Type", "") == ""  # the presigned URL is signed without one


def test_update_on_a_current_schema_changes_nothing(use_db: str, cfn_responses: Any) -> None:
    answer_schema_migration(_event("update", cfn_responses.url), remaining_seconds=900)
    [sent] = cfn_responses.received
    head = schema.code_revisions().head
    assert sent["Status"] == "SUCCESS" and sent["Data"] == {"Revision": head, "Previous": head}
    assert sent["PhysicalResourceId"] == "chipwise-schema"


def test_a_failed_migration_answers_failed_with_the_reason(monkeypatch: pytest.MonkeyPatch, cfn_responses: Any) -> None:
    # Given a database nobody listens for
    monkeypatch.setenv("CHIPWISE_DATABASE_URL", "postgresql+psycopg://chipwise@127.0.0.1:9/chipwise")
    get_settings.cache_clear()
    # When the deploy asks for the migration
    answer_schema_migration(_event("update", cfn_responses.url), remaining_seconds=900)
    # Then CloudFormation is told it failed, and why (so the stack rolls back with a reason)
    [sent] = cfn_responses.received
    assert sent["Status"] == "FAILED"
    assert sent["Reason"].startswith("StoreUnavailable: cannot reach the database at postgresql+psycopg://")


def test_delete_leaves_the_database_alone(monkeypatch: pytest.MonkeyPatch, cfn_responses: Any) -> None:
    monkeypatch.setenv("CHIPWISE_DATABASE_URL", "postgresql+psycopg://chipwise@127.0.0.1:9/chipwise")
    get_settings.cache_clear()
    answer_schema_migration(_event("delete", cfn_responses.url), remaining_seconds=900)
    [sent] = cfn_responses.received
    assert sent["Status"] == "SUCCESS" and "stay with the database" in sent["Reason"]


def test_an_event_that_is_no_custom_resource_request_is_not_answered(cfn_responses: Any) -> None:
    event = {"ResponseURL": cfn_responses.url, "detail": {}}
    with pytest.raises(InvalidInput, match=r"^not a custom resource request: \(event\): union_tag_not_found .*Request"):
        parse_event(event, SchemaMigrationRequest, "a custom resource request")
    assert cfn_responses.received == []


def test_an_unreachable_response_url_is_retried_then_raised(monkeypatch: pytest.MonkeyPatch) -> None:
    slept: list[float] = []
    monkeypatch.setattr(migrate_module.time, "sleep", slept.append)
    response = CustomResourceResponse(
        status="SUCCESS", reason="ok", physical_resource_id="p", stack_id="s", request_id="r", logical_resource_id="l"
    )
    with pytest.raises(UpstreamError, match="cannot answer CloudFormation"):
        send_response("http://127.0.0.1:9/response", response, timeout=2)
    assert slept == [1, 2]
