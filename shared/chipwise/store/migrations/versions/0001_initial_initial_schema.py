"""initial schema"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

from chipwise.store.migrations import columns as col

revision: str = "0001_initial"
down_revision: str | None = None


def upgrade() -> None:
    col.create_table(
        "accounts",
        col.account_id(),
        sa.Column("name", sa.String(length=256), nullable=True),
        sa.Column("role_arn", sa.String(length=2048), nullable=True),
        col.timestamp("created_at"),
        col.timestamp("last_scan_at", nullable=True),
        key="account_id",
    )
    col.create_table(
        "drafts",
        col.uuid(),
        sa.Column("kind", sa.String(length=32), nullable=False),
        sa.Column("subject_key", sa.String(length=256), nullable=False),
        col.account_id(nullable=True),
        sa.Column("plan_id", sa.String(length=64), nullable=True),
        sa.Column("title", sa.String(length=512), nullable=False),
        sa.Column("body", sa.Text(), nullable=False),
        col.json_value("document"),
        col.timestamp("created_at"),
        col.timestamp("updated_at"),
        unique=("kind", "subject_key"),
    )
    col.create_table(
        "intake_submissions",
        col.uuid(),
        col.timestamp("received_at"),
        sa.Column("company_name", sa.String(length=256), nullable=False),
        sa.Column("contact_email", sa.String(length=320), nullable=False),
        col.json_value("payload"),
    )
    col.create_table(
        "neuron_rollups",
        col.serial_id(),
        col.account_id(),
        sa.Column("instance_id", sa.String(length=64), nullable=False),
        col.instance_type(),
        sa.Column("runtime_tag", sa.String(length=255), nullable=False),
        col.timestamp("hour"),
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
        col.json_value("parts", nullable=True),
        unique=("account_id", "instance_id", "runtime_tag", "hour"),
    )
    col.create_table(
        "notification_outbox",
        col.serial_id(),
        sa.Column("channel", sa.String(length=16), nullable=False),
        sa.Column("kind", sa.String(length=24), nullable=False),
        sa.Column("recipient", sa.String(length=512), nullable=False),
        sa.Column("dedupe_key", sa.String(length=256), nullable=False),
        sa.Column("subject", sa.String(length=998), nullable=True),
        col.json_value("payload"),
        sa.Column("status", sa.String(length=12), nullable=False),
        sa.Column("attempts", sa.Integer(), nullable=False),
        sa.Column("last_error", sa.Text(), nullable=True),
        col.account_id(nullable=True),
        col.timestamp("created_at"),
        col.timestamp("next_attempt_at"),
        col.timestamp("sent_at", nullable=True),
        unique=("dedupe_key",),
        indexes={"ix_outbox_status_next": ["status", "next_attempt_at"]},
    )
    col.create_table(
        "cost_records",
        col.serial_id(),
        col.account_id(),
        sa.Column("day", sa.Date(), nullable=False),
        sa.Column("service", sa.String(length=128), nullable=False),
        sa.Column("usage_type", sa.String(length=256), nullable=False),
        sa.Column("usage_kind", sa.String(length=16), nullable=True),
        col.instance_type(),
        col.region(nullable=True),
        col.money("unblended_cost"),
        col.money("amortized_cost"),
        col.money("usage_quantity"),
        sa.Column("estimated", sa.Boolean(), nullable=False),
        col.timestamp("fetched_at"),
        of_account=True,
        unique=("account_id", "day", "service", "usage_type"),
        indexes={"ix_cost_records_account_type_day": ["account_id", "instance_type", "day"]},
    )
    col.create_table(
        "findings",
        col.uuid(),
        col.account_id(),
        col.region(),
        sa.Column("rule_id", sa.String(length=64), nullable=False),
        sa.Column("resource_arn", sa.String(length=2048), nullable=False),
        sa.Column("resource_kind", sa.String(length=48), nullable=False),
        sa.Column("resource_name", sa.String(length=512), nullable=False),
        col.instance_type(),
        sa.Column("instance_count", sa.Integer(), nullable=False),
        col.money("monthly_cost_usd"),
        col.money("estimated_monthly_savings_usd"),
        col.money("measured_monthly_savings_usd", nullable=True),
        col.json_value("recommendation"),
        sa.Column("confidence", sa.String(length=8), nullable=False),
        col.json_value("signals_used"),
        col.json_value("signals_missing"),
        sa.Column("effort", sa.String(length=8), nullable=False),
        sa.Column("break_even_months", sa.Float(), nullable=True),
        sa.Column("summary", sa.Text(), nullable=False),
        col.json_value("evidence"),
        sa.Column("status", sa.String(length=12), nullable=False),
        *col.seen(),
        col.timestamp("resolved_at", nullable=True),
        col.timestamp("suppressed_until", nullable=True),
        sa.Column("suppress_reason", sa.Text(), nullable=True),
        col.uuid("last_scan_id", nullable=True),
        of_account=True,
        unique=("rule_id", "resource_arn"),
        indexes={"ix_findings_account_status": ["account_id", "status"]},
    )
    col.create_table(
        "plans",
        sa.Column("id", sa.String(length=64), nullable=False),
        col.uuid("submission_id", nullable=True),
        sa.Column("company", sa.String(length=256), nullable=False),
        col.timestamp("created_at"),
        col.money("total_monthly_savings_usd"),
        col.json_value("document"),
        refers={"submission_id": "intake_submissions.id"},
        cascade=False,
    )
    col.create_table(
        "resources",
        col.serial_id(),
        col.account_id(),
        col.region(),
        sa.Column("arn", sa.String(length=2048), nullable=False),
        sa.Column("kind", sa.String(length=48), nullable=False),
        sa.Column("name", sa.String(length=512), nullable=False),
        col.instance_type(),
        sa.Column("instance_count", sa.Integer(), nullable=False),
        sa.Column("platform", sa.String(length=16), nullable=False),
        sa.Column("state", sa.String(length=32), nullable=True),
        sa.Column("unknown_instance_type", sa.Boolean(), nullable=False),
        col.timestamp("launched_at", nullable=True),
        col.timestamp("ended_at", nullable=True),
        col.json_value("tags"),
        col.json_value("hints"),
        col.json_value("details"),
        *col.seen(),
        col.uuid("last_scan_id", nullable=True),
        of_account=True,
        unique=("arn",),
        indexes={"ix_resources_account_region_kind": ["account_id", "region", "kind"]},
    )
    col.create_table(
        "scans",
        col.uuid(),
        col.account_id(),
        col.region(),
        sa.Column("status", sa.String(length=16), nullable=False),
        col.timestamp("started_at"),
        col.timestamp("finished_at", nullable=True),
        sa.Column("window_start", sa.Date(), nullable=False),
        sa.Column("window_end", sa.Date(), nullable=False),
        sa.Column("resource_count", sa.Integer(), nullable=False),
        col.json_value("api_calls"),
        col.json_value("timings"),
        col.json_value("errors"),
        col.json_value("document", nullable=True),
        of_account=True,
        indexes={"ix_scans_account_started": ["account_id", "started_at"]},
    )
    col.create_table(
        "benchmark_runs",
        col.uuid(),
        col.uuid("finding_id"),
        sa.Column("target_instance_type", sa.String(length=64), nullable=False),
        sa.Column("attempt", sa.Integer(), nullable=False),
        sa.Column("role", sa.String(length=16), nullable=False),
        sa.Column("job_queue", sa.String(length=256), nullable=False),
        sa.Column("job_definition", sa.String(length=512), nullable=True),
        sa.Column("job_id", sa.String(length=128), nullable=True),
        sa.Column("job_name", sa.String(length=128), nullable=True),
        sa.Column("status", sa.String(length=12), nullable=False),
        col.json_value("parameters"),
        sa.Column("result_uri", sa.String(length=2048), nullable=True),
        col.json_value("result", nullable=True),
        col.json_value("measured", nullable=True),
        sa.Column("failure_reason", sa.Text(), nullable=True),
        col.timestamp("submitted_at"),
        col.timestamp("finished_at", nullable=True),
        col.timestamp("expires_at", nullable=True),
        refers={"finding_id": "findings.id"},
        unique=("finding_id", "target_instance_type", "attempt"),
        indexes={"ix_benchmark_runs_job": ["job_id"]},
    )
    col.create_table(
        "metric_coverage",
        *col.metric_key(),
        sa.Column("exists", sa.Boolean(), nullable=False),
        sa.Column("hours_with_data", sa.Integer(), nullable=False),
        col.timestamp("window_start"),
        col.timestamp("window_end"),
        col.timestamp("checked_at"),
        refers={"resource_id": "resources.id"},
        unique=("resource_id", "namespace", "metric"),
    )
    col.create_table(
        "metric_rollups",
        *col.metric_key(),
        col.timestamp("hour"),
        sa.Column("average", sa.Float(), nullable=True),
        sa.Column("maximum", sa.Float(), nullable=True),
        sa.Column("sum", sa.Float(), nullable=True),
        sa.Column("sample_count", sa.Float(), nullable=True),
        refers={"resource_id": "resources.id"},
        unique=("resource_id", "namespace", "metric", "hour"),
    )
    col.create_table(
        "recommendations",
        col.serial_id(),
        col.uuid("finding_id"),
        sa.Column("source", sa.String(length=16), nullable=False),
        sa.Column("action", sa.String(length=24), nullable=False),
        sa.Column("target_platform", sa.String(length=16), nullable=True),
        sa.Column("target_instance_type", sa.String(length=64), nullable=True),
        sa.Column("target_count", sa.Integer(), nullable=True),
        col.money("monthly_cost_usd", nullable=True),
        col.money("monthly_savings_usd", nullable=True),
        sa.Column("confidence", sa.String(length=8), nullable=False),
        sa.Column("withdrawn", sa.Boolean(), nullable=False),
        sa.Column("reason", sa.Text(), nullable=True),
        col.uuid("benchmark_run_id", nullable=True),
        col.timestamp("created_at"),
        refers={"finding_id": "findings.id"},
        indexes={"ix_recommendations_finding": ["finding_id", "created_at"]},
    )

    # ### end Alembic commands ###


def downgrade() -> None:
    col.drop_table("recommendations", "ix_recommendations_finding")
    op.drop_table("metric_rollups")
    op.drop_table("metric_coverage")
    col.drop_table("benchmark_runs", "ix_benchmark_runs_job")
    col.drop_table("scans", "ix_scans_account_started")
    col.drop_table("resources", "ix_resources_account_region_kind")
    op.drop_table("plans")
    col.drop_table("findings", "ix_findings_account_status")
    col.drop_table("cost_records", "ix_cost_records_account_type_day")
    col.drop_table("notification_outbox", "ix_outbox_status_next")
    op.drop_table("neuron_rollups")
    op.drop_table("intake_submissions")
    op.drop_table("drafts")
    op.drop_table("accounts")
    # ### end Alembic commands ###
