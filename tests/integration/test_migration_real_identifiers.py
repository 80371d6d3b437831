"""Migration 0004_i25_ids: made-up variant and component ARNs become ARNs AWS accepts, the variant its own column,
and stored findings keep their ids and history (SQLite, and PostgreSQL when CHIPWISE_TEST_DATABASE_URL is set)."""

from __future__ import annotations

from datetime import UTC, datetime

from alembic import command
from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext
from sqlalchemy import create_engine, text

from chipwise.store.session import alembic_config, upgrade
from chipwise.store.tables import all_tables

ENDPOINT = "arn:aws:sagemaker:us-east-1:123456789012:endpoint/ab-test"
SHARED = "arn:aws:sagemaker:us-east-1:123456789012:endpoint/shared-llm"
INSTANCE = "arn:aws:ec2:us-east-1:123456789012:instance/i-0abc"
NOW = datetime(2026, 11, 20, tzinfo=UTC)


def _seed_old_rows(url: str) -> None:
    """What the revision before stored: a two-variant endpoint as two made-up ARNs, an inference component under
    its endpoint's ARN, an instance, a finding on each (one with its pricing history) and a remediation."""
    engine = create_engine(url)
    resources = [
        (1, f"{ENDPOINT}/variant/inf2-main", "sagemaker_endpoint", "ab-test/inf2-main"),
        (2, f"{ENDPOINT}/variant/g5-canary", "sagemaker_endpoint", "ab-test/g5-canary"),
        (3, f"{SHARED}/inference-component/chat", "sagemaker_inference_component", "shared-llm/chat"),
        (4, INSTANCE, "ec2_instance", "box"),
    ]
    with engine.begin() as conn:
        conn.execute(text("INSERT INTO accounts (account_id, created_at) VALUES ('123456789012', :now)"), {"now": NOW})
        for rid, arn, kind, name in resources:
            conn.execute(
                text(
                    "INSERT INTO resources (id, account_id, region, arn, kind, name, instance_count, platform, "
                    "unknown_instance_type, tags, hints, details, first_seen, last_seen) VALUES (:id, '123456789012', "
                    "'us-east-1', :arn, :kind, :name, 1, 'inferentia', false, '{}', '{}', '{}', :now, :now)"
                ),
                {"id": rid, "arn": arn, "kind": kind, "name": name, "now": NOW},
            )
        for fid, (_, arn, kind, name) in zip(("f-main", "f-canary", "f-chat", "f-box"), resources, strict=True):
            conn.execute(
                text(
                    "INSERT INTO findings (id, account_id, region, rule_id, resource_arn, resource_kind, "
                    "resource_name, instance_count, monthly_cost_usd, estimated_monthly_savings_usd, recommendation, "
                    "confidence, signals_used, signals_missing, effort, summary, evidence, status, first_seen, "
                    "last_seen) VALUES "
                    "(:id, '123456789012', 'us-east-1', 'idle', :arn, :kind, :name, 1, 100, 50, '{}', 'high', '[]', "
                    "'[]', 'none', 's', '{}', 'open', :now, :now)"
                ),
                {"id": fid, "arn": arn, "kind": kind, "name": name, "now": NOW},
            )
        conn.execute(
            text(
                "INSERT INTO recommendations (finding_id, source, action, monthly_savings_usd, confidence, withdrawn, "
                "reason, created_at) VALUES ('f-canary', 'estimate', 'delete', 50, 'high', false, 'first estimate', "
                ":now)"
            ),
            {"now": NOW},
        )
        conn.execute(
            text(
                "INSERT INTO remediations (id, finding_id, rule_id, account_id, region, resource_arn, event, action, "
                "status, actor, source, calls, undo, before, result, created_at) VALUES ('r-1', 'f-chat', 'idle', "
                "'123456789012', 'us-east-1', :arn, 'apply', 'component_copies', 'applied', 'me', 'cli', '[]', '[]', "
                "'{}', 'ok', :now)"
            ),
            {"arn": f"{SHARED}/inference-component/chat", "now": NOW},
        )
    engine.dispose()


def _rows(url: str, sql: str) -> list[tuple[object, ...]]:
    engine = create_engine(url)
    with engine.connect() as conn:
        found = [tuple(row) for row in conn.execute(text(sql))]
    engine.dispose()
    return found


def test_made_up_arns_become_real_and_findings_keep_their_history(empty_url: str) -> None:
    upgrade(empty_url, "0003_i28_act")
    _seed_old_rows(empty_url)

    upgrade(empty_url)

    assert _rows(empty_url, "SELECT id, arn, variant, parent_arn FROM resources ORDER BY id") == [
        (1, ENDPOINT, "inf2-main", ENDPOINT),
        (2, ENDPOINT, "g5-canary", ENDPOINT),
        (3, "arn:aws:sagemaker:us-east-1:123456789012:inference-component/chat", "", SHARED),
        (4, INSTANCE, "", None),
    ]
    assert _rows(empty_url, "SELECT id, resource_arn, resource_variant FROM findings ORDER BY id") == [
        ("f-box", INSTANCE, ""),
        ("f-canary", ENDPOINT, "g5-canary"),
        ("f-chat", "arn:aws:sagemaker:us-east-1:123456789012:inference-component/chat", ""),
        ("f-main", ENDPOINT, "inf2-main"),
    ]
    assert _rows(empty_url, "SELECT finding_id, reason FROM recommendations") == [("f-canary", "first estimate")]
    assert _rows(empty_url, "SELECT finding_id, resource_arn FROM remediations") == [
        ("f-chat", "arn:aws:sagemaker:us-east-1:123456789012:inference-component/chat")
    ]
    # no stored ARN is made up any more
    arns = _rows(empty_url, "SELECT arn FROM resources UNION SELECT resource_arn FROM findings")
    assert not [a for (a,) in arns if "/variant/" in str(a) or (":endpoint/" in str(a) and "/inference" in str(a))]


def test_the_migrated_schema_is_the_code_s_and_the_downgrade_restores_the_old_arns(empty_url: str) -> None:
    upgrade(empty_url, "0003_i28_act")
    _seed_old_rows(empty_url)
    upgrade(empty_url)
    engine = create_engine(empty_url)
    with engine.connect() as conn:
        differences = compare_metadata(MigrationContext.configure(conn), all_tables())
    engine.dispose()
    assert differences == []

    command.downgrade(alembic_config(empty_url), "0003_i28_act")

    assert _rows(empty_url, "SELECT id, arn FROM resources ORDER BY id") == [
        (1, f"{ENDPOINT}/variant/inf2-main"),
        (2, f"{ENDPOINT}/variant/g5-canary"),
        (3, f"{SHARED}/inference-component/chat"),
        (4, INSTANCE),
    ]
    assert _rows(empty_url, "SELECT id, resource_arn FROM findings ORDER BY id")[1:3] == [
        ("f-canary", f"{ENDPOINT}/variant/g5-canary"),
        ("f-chat", f"{SHARED}/inference-component/chat"),
    ]
