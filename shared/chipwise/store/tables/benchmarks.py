"""Benchmark runs: one AWS Batch job measuring a finding's target instance type."""

from datetime import datetime
from typing import Any

from sqlalchemy import ForeignKey, Index, String, Text, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column

from chipwise.clock import utcnow
from chipwise.store.base import Base
from chipwise.store.tables.findings import Finding  # noqa: F401  (mapped first: foreign keys name it)


class BenchmarkRun(Base):
    """One AWS Batch benchmark job for (finding, target type); at most one active per pair."""

    __tablename__ = "benchmark_runs"
    __table_args__ = (
        UniqueConstraint("finding_id", "target_instance_type", "attempt"),
        Index("ix_benchmark_runs_job", "job_id"),
    )

    id: Mapped[str] = mapped_column(String(36), primary_key=True)
    finding_id: Mapped[str] = mapped_column(ForeignKey("findings.id", ondelete="CASCADE"))
    target_instance_type: Mapped[str] = mapped_column(String(64))
    attempt: Mapped[int] = mapped_column(default=1)
    role: Mapped[str] = mapped_column(String(16), default="target")  # target|gpu_baseline
    job_queue: Mapped[str] = mapped_column(String(256))
    job_definition: Mapped[str | None] = mapped_column(String(512))
    job_id: Mapped[str | None] = mapped_column(String(128))
    job_name: Mapped[str | None] = mapped_column(String(128))
    status: Mapped[str] = mapped_column(String(12), default="submitted")  # submitted|running|succeeded|failed|expired
    parameters: Mapped[dict[str, Any]] = mapped_column(default=dict)
    result_uri: Mapped[str | None] = mapped_column(String(2048))
    result: Mapped[dict[str, Any] | None]
    measured: Mapped[dict[str, Any] | None]
    failure_reason: Mapped[str | None] = mapped_column(Text)
    submitted_at: Mapped[datetime] = mapped_column(default=utcnow)
    finished_at: Mapped[datetime | None]
    expires_at: Mapped[datetime | None]
