"""initial schema"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

from chipwise.store.migrations.columns import (
    JSON,
    MONEY,
    UTC,
    account_id,
    create_table,
    drop_table,
    instance_type,
    metric_key,
    region,
    serial_id,
    uuid,
)


revision: str = "0001_initial"
down_revision: str | None = None


def upgrade() -> None:
    create_table(
        "accounts",
        account_id(),
        sa.Column("name", sa.String(length=256), nullable=True),
        sa.Column("role_arn", sa.String(length=2048), nullable=True),
        sa.Column("created_at", UTC, nullable=False),
        sa.Column("last_scan_at", UTC, nullable=True),
        key="account_id",
    )
    create_table(
        "drafts",
        uuid(),
        sa.Column("kind", sa.String(length=32), nullable=False),
        sa.Column("subject_key", sa.String(length=256), nullable=False),
        account_id(nullable=True),
        sa.Column("plan_id", sa.String(length=64), nullable=True),
        sa.Column("title", sa.String(length=512), nullable=False),
        sa.Column("body", sa.Text(), nullable=False),
        sa.Column("document", JSON, nullable=False),
        sa.Column("created_at", UTC, nullable=False),
        sa.Column("updated_at", UTC, nullable=False),
        unique=("kind", "subject_key"),
    )
    create_table(
        "intake_submissions",
        uuid(),
        sa.Column("received_at", UTC, nullable=False),
        sa.Column("company_name", sa.String(length=256), nullable=False),
        sa.Column("contact_email", sa.String(length=320), nullable=False),
        sa.Column("payload", JSON, nullable=False),
    )
    create_table(
        "neuron_rollups",
        serial_id(),
        account_id(),
        sa.Column("instance_id", sa.String(length=64), nullable=False),
        instance_type(),
        sa.Column("runtime_tag", sa.String(length=255), nullable=False),
        sa.Column("hour", UTC, nullable=False),
        sa.Column("reports", sa.Integer(), nullable=False),
        sa.Column("neuroncore_utilization_avg", sa.Float(), nullable=True),
        sa.Column("neuroncore_utilization_max", sa.Float(), nullable=True),
        sa.Column("cores_in_use", sa.Integer(), nullable=True),
        sa.Column("device_memory_used_max", sa.BigInteger(), nullable=True),
        sa.Column("host_memory_used_max", sa.BigInteger(), nullable=True),
        sa.Column("executions_completed", sa.BigInteger(), nullable=False),
        sa.Column("executions_failed", sa.BigInteger(), nullable=False),
        sa.Column("latency_p50_s", sa.Float(), nullable=True),
        sa.Column("latency_p99_s", sa.Float(), nullable=True),
        sa.Column("errors", sa.Integer(), nullable=False),
        sa.Column("parts", JSON, nullable=True),
        unique=("account_id", "instance_id", "runtime_tag", "hour"),
    )
    create_table(
        "notification_outbox",
        serial_id(),
        sa.Column("channel", sa.String(length=16), nullable=False),
        sa.Column("kind", sa.String(length=24), nullable=False),
        sa.Column("recipient", sa.String(length=512), nullable=False),
        sa.Column("dedupe_key", sa.String(length=256), nullable=False),
        sa.Column("subject", sa.String(length=998), nullable=True),
        sa.Column("payload", JSON, nullable=False),
        sa.Column("status", sa.String(length=12), nullable=False),
        sa.Column("attempts", sa.Integer(), nullable=False),
        sa.Column("last_error", sa.Text(), nullable=True),
        account_id(nullable=True),
        sa.Column("created_at", UTC, nullable=False),
        sa.Column("next_attempt_at", UTC, nullable=False),
        sa.Column("sent_at", UTC, nullable=True),
        unique=("dedupe_key",),
        indexes={"ix_outbox_status_next": ["status", "next_attempt_at"]},
    )
    create_table(
        "cost_records",
        serial_id(),
        account_id(),
        sa.Column("day", sa.Date(), nullable=False),
        sa.Column("service", sa.String(length=128), nullable=False),
        sa.Column("usage_type", sa.String(length=256), nullable=False),
        sa.Column("usage_kind", sa.String(length=16), nullable=True),
        instance_type(),
        region(nullable=True),
        sa.Column("unblended_cost", MONEY, nullable=False),
        sa.Column("amortized_cost", MONEY, nullable=False),
        sa.Column("usage_quantity", MONEY, nullable=False),
        sa.Column("estimated", sa.Boolean(), nullable=False),
        sa.Column("fetched_at", UTC, nullable=False),
        refers={"account_id": "accounts.account_id"},
        cascade=False,
        unique=("account_id", "day", "service", "usage_type"),
        indexes={"ix_cost_records_account_type_day": ["account_id", "instance_type", "day"]},
    )
    create_table(
        "findings",
        uuid(),
        account_id(),
        region(),
        sa.Column("rule_id", sa.String(length=64), nullable=False),
        sa.Column("resource_arn", sa.String(length=2048), nullable=False),
        sa.Column("resource_kind", sa.String(length=48), nullable=False),
        sa.Column("resource_name", sa.String(length=512), nullable=False),
        instance_type(),
        sa.Column("instance_count", sa.Integer(), nullable=False),
        sa.Column("monthly_cost_usd", MONEY, nullable=False),
        sa.Column("estimated_monthly_savings_usd", MONEY, nullable=False),
        sa.Column("measured_monthly_savings_usd", MONEY, nullable=True),
        sa.Column("recommendation", JSON, nullable=False),
        sa.Column("confidence", sa.String(length=8), nullable=False),
        sa.Column("signals_used", JSON, nullable=False),
        sa.Column("signals_missing", JSON, nullable=False),
        sa.Column("effort", sa.String(length=8), nullable=False),
        sa.Column("break_even_months", sa.Float(), nullable=True),
        sa.Column("summary", sa.Text(), nullable=False),
        sa.Column("evidence", JSON, nullable=False),
        sa.Column("status", sa.String(length=12), nullable=False),
        sa.Column("first_seen", UTC, nullable=False),
        sa.Column("last_seen", UTC, nullable=False),
        sa.Column("resolved_at", UTC, nullable=True),
        sa.Column("suppressed_until", UTC, nullable=True),
        sa.Column("suppress_reason", sa.Text(), nullable=True),
        uuid("last_scan_id", nullable=True),
        refers={"account_id": "accounts.account_id"},
        cascade=False,
        unique=("rule_id", "resource_arn"),
        indexes={"ix_findings_account_status": ["account_id", "status"]},
    )
    create_table(
        "plans",
        sa.Column("id", sa.String(length=64), nullable=False),
        uuid("submission_id", nullable=True),
        sa.Column("company", sa.String(length=256), nullable=False),
        sa.Column("created_at", UTC, nullable=False),
        sa.Column("total_monthly_savings_usd", MONEY, nullable=False),
        sa.Column("document", JSON, nullable=False),
        refers={"submission_id": "intake_submissions.id"},
        cascade=False,
    )
    create_table(
        "resources",
        serial_id(),
        account_id(),
        region(),
        sa.Column("arn", sa.String(length=2048), nullable=False),
        sa.Column("kind", sa.String(length=48), nullable=False),
        sa.Column("name", sa.String(length=512), nullable=False),
        instance_type(),
        sa.Column("instance_count", sa.Integer(), nullable=False),
        sa.Column("platform", sa.String(length=16), nullable=False),
        sa.Column("state", sa.String(length=32), nullable=True),
        sa.Column("unknown_instance_type", sa.Boolean(), nullable=False),
        sa.Column("launched_at", UTC, nullable=True),
        sa.Column("ended_at", UTC, nullable=True),
        sa.Column("tags", JSON, nullable=False),
        sa.Column("hints", JSON, nullable=False),
        sa.Column("details", JSON, nullable=False),
        sa.Column("first_seen", UTC, nullable=False),
        sa.Column("last_seen", UTC, nullable=False),
        uuid("last_scan_id", nullable=True),
        refers={"account_id": "accounts.account_id"},
        cascade=False,
        unique=("arn",),
        indexes={"ix_resources_account_region_kind": ["account_id", "region", "kind"]},
    )
    create_table(
        "scans",
        uuid(),
        account_id(),
        region(),
        sa.Column("status", sa.String(length=16), nullable=False),
        sa.Column("started_at", UTC, nullable=False),
        sa.Column("finished_at", UTC, nullable=True),
        sa.Column("window_start", sa.Date(), nullable=False),
        sa.Column("window_end", sa.Date(), nullable=False),
        sa.Column("resource_count", sa.Integer(), nullable=False),
        sa.Column("api_calls", JSON, nullable=False),
        sa.Column("timings", JSON, nullable=False),
        sa.Column("errors", JSON, nullable=False),
        sa.Column("document", JSON, nullable=True),
        refers={"account_id": "accounts.account_id"},
        cascade=False,
        indexes={"ix_scans_account_started": ["account_id", "started_at"]},
    )
    create_table(
        "benchmark_runs",
        uuid(),
        uuid("finding_id"),
        sa.Column("target_instance_type", sa.String(length=64), nullable=False),
        sa.Column("attempt", sa.Integer(), nullable=False),
        sa.Column("role", sa.String(length=16), nullable=False),
        sa.Column("job_queue", sa.String(length=256), nullable=False),
        sa.Column("job_definition", sa.String(length=512), nullable=True),
        sa.Column("job_id", sa.String(length=128), nullable=True),
        sa.Column("job_name", sa.String(length=128), nullable=True),
        sa.Column("status", sa.String(length=12), nullable=False),
        sa.Column("parameters", JSON, nullable=False),
        sa.Column("result_uri", sa.String(length=2048), nullable=True),
        sa.Column("result", JSON, nullable=True),
        sa.Column("measured", JSON, nullable=True),
        sa.Column("failure_reason", sa.Text(), nullable=True),
        sa.Column("submitted_at", UTC, nullable=False),
        sa.Column("finished_at", UTC, nullable=True),
        sa.Column("expires_at", UTC, nullable=True),
        refers={"finding_id": "findings.id"},
        unique=("finding_id", "target_instance_type", "attempt"),
        indexes={"ix_benchmark_runs_job": ["job_id"]},
    )
    create_table(
        "metric_coverage",
        *metric_key(),
        sa.Column("exists", sa.Boolean(), nullable=False),
        sa.Column("hours_with_data", sa.Integer(), nullable=False),
        sa.Column("window_start", UTC, nullable=False),
        sa.Column("window_end", UTC, nullable=False),
        sa.Column("checked_at", UTC, nullable=False),
        refers={"resource_id": "resources.id"},
        unique=("resource_id", "namespace", "metric"),
    )
    create_table(
        "metric_rollups",
        *metric_key(),
        sa.Column("hour", UTC, nullable=False),
        sa.Column("average", sa.Float(), nullable=True),
        sa.Column("maximum", sa.Float(), nullable=True),
        sa.Column("sum", sa.Float(), nullable=True),
        sa.Column("sample_count", sa.Float(), nullable=True),
        refers={"resource_id": "resources.id"},
        unique=("resource_id", "namespace", "metric", "hour"),
    )
    create_table(
        "recommendations",
        serial_id(),
        uuid("finding_id"),
        sa.Column("source", sa.String(length=16), nullable=False),
        sa.Column("action", sa.String(length=24), nullable=False),
        sa.Column("target_platform", sa.String(length=16), nullable=True),
        sa.Column("target_instance_type", sa.String(length=64), nullable=True),
        sa.Column("target_count", sa.Integer(), nullable=True),
        sa.Column("monthly_cost_usd", MONEY, nullable=True),
        sa.Column("monthly_savings_usd", MONEY, nullable=True),
        sa.Column("confidence", sa.String(length=8), nullable=False),
        sa.Column("withdrawn", sa.Boolean(), nullable=False),
        sa.Column("reason", sa.Text(), nullable=True),
        uuid("benchmark_run_id", nullable=True),
        sa.Column("created_at", UTC, nullable=False),
        refers={"finding_id": "findings.id"},
        indexes={"ix_recommendations_finding": ["finding_id", "created_at"]},
    )

    # ### end Alembic commands ###


def downgrade() -> None:
    drop_table("recommendations", "ix_recommendations_finding")
    op.drop_table("metric_rollups")
    op.drop_table("metric_coverage")
    drop_table("benchmark_runs", "ix_benchmark_runs_job")
    drop_table("scans", "ix_scans_account_started")
    drop_table("resources", "ix_resources_account_region_kind")
    op.drop_table("plans")
    drop_table("findings", "ix_findings_account_status")
    drop_table("cost_records", "ix_cost_records_account_type_day")
    drop_table("notification_outbox", "ix_outbox_status_next")
    op.drop_table("neuron_rollups")
    op.drop_table("intake_submissions")
    op.drop_table("drafts")
    op.drop_table("accounts")
    # ### end Alembic commands ###
