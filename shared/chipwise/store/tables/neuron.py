"""Hourly neuron-monitor rollups of EC2 Neuron instances, from the reports the Neuron agent writes to S3."""

from datetime import datetime
from typing import Any

from sqlalchemy import BigInteger, Float, String, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column

from chipwise.store.base import Base


class NeuronRollup(Base):
    """One hour of neuron-monitor telemetry for one instance (from S3 reports); ``runtime_tag`` is
    ``(instance)`` (rows of other tags were written per runtime by earlier versions and are not read)."""

    __tablename__ = "neuron_rollups"
    __table_args__ = (UniqueConstraint("account_id", "instance_id", "runtime_tag", "hour"),)

    id: Mapped[int] = mapped_column(primary_key=True, autoincrement=True)
    account_id: Mapped[str] = mapped_column(String(12))
    instance_id: Mapped[str] = mapped_column(String(64))
    instance_type: Mapped[str | None] = mapped_column(String(64))
    runtime_tag: Mapped[str] = mapped_column(String(255))
    hour: Mapped[datetime]
    reports: Mapped[int] = mapped_column(default=0)
    neuroncore_utilization_avg: Mapped[float | None] = mapped_column(Float)
    neuroncore_utilization_max: Mapped[float | None] = mapped_column(Float)
    cores_in_use: Mapped[int | None]
    device_memory_used_max: Mapped[int | None] = mapped_column(BigInteger)
    host_memory_used_max: Mapped[int | None] = mapped_column(BigInteger)
    executions_completed: Mapped[int] = mapped_column(BigInteger, default=0)
    executions_failed: Mapped[int] = mapped_column(BigInteger, default=0)
    latency_p50_s: Mapped[float | None] = mapped_column(Float)
    latency_p99_s: Mapped[float | None] = mapped_column(Float)
    errors: Mapped[int] = mapped_column(default=0)
    # Reports whose driver or device failed: utilisation unknown (never 0 %).
    reports_missing: Mapped[int] = mapped_column(default=0, server_default="0")
    # The partial sums of each S3 object that reported on this hour, by object key: the figures above are merged
    # from them, so an hour split across objects adds up and ingesting an object twice changes nothing.
    parts: Mapped[dict[str, Any] | None]
