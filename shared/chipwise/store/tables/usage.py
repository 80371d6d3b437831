"""What resources cost and how busy they were: daily costs and hourly metric rollups (Neuron rollups: tables.neuron)."""

from datetime import date, datetime
from decimal import Decimal

from sqlalchemy import BigInteger, Float, ForeignKey, Index, LargeBinary, String, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column

from chipwise.clock import utcnow
from chipwise.store.base import Base
from chipwise.store.tables.inventory import Resource  # noqa: F401  (mapped first: foreign keys name it)


class CostRecord(Base):
    """One Cost Explorer group on one day: (service, usage type) with unblended/amortized cost and usage."""

    __tablename__ = "cost_records"
    __table_args__ = (
        UniqueConstraint("account_id", "day", "service", "usage_type"),
        Index("ix_cost_records_account_type_day", "account_id", "instance_type", "day"),
    )

    id: Mapped[int] = mapped_column(primary_key=True, autoincrement=True)
    account_id: Mapped[str] = mapped_column(ForeignKey("accounts.account_id"))
    day: Mapped[date]
    service: Mapped[str] = mapped_column(String(128))
    usage_type: Mapped[str] = mapped_column(String(256))
    usage_kind: Mapped[str | None] = mapped_column(String(32))  # BoxUsage, UnusedBox, Processing, ..., unknown
    instance_type: Mapped[str | None] = mapped_column(String(64))
    region: Mapped[str | None] = mapped_column(String(32))
    unblended_cost: Mapped[Decimal]
    amortized_cost: Mapped[Decimal]
    usage_quantity: Mapped[Decimal]
    estimated: Mapped[bool] = mapped_column(default=False)
    fetched_at: Mapped[datetime] = mapped_column(default=utcnow)


class ResourceMetric:
    """The leading columns of a table per (resource, namespace, metric): its own id, the resource (its rows go with
    it), the CloudWatch namespace and metric (first in each table: ``sort_order``)."""

    id: Mapped[int] = mapped_column(primary_key=True, autoincrement=True, sort_order=-1)
    resource_id: Mapped[int] = mapped_column(ForeignKey("resources.id", ondelete="CASCADE"), sort_order=-1)
    namespace: Mapped[str] = mapped_column(String(128), sort_order=-1)
    metric: Mapped[str] = mapped_column(String(128), sort_order=-1)


class MetricRollup(ResourceMetric, Base):
    """One hour of one CloudWatch metric for one resource (max across GPUs/cores already taken)."""

    __tablename__ = "metric_rollups"
    __table_args__ = (UniqueConstraint("resource_id", "namespace", "metric", "hour"),)

    hour: Mapped[datetime]
    average: Mapped[float | None] = mapped_column(Float)
    maximum: Mapped[float | None] = mapped_column(Float)
    sum: Mapped[float | None] = mapped_column(Float)
    sample_count: Mapped[float | None] = mapped_column(Float)


class MetricSeries(ResourceMetric, Base):
    """The hourly rollups of one (resource, namespace, metric) packed into one row, kept in step with
    ``metric_rollups`` by the only code that writes those (``save_rollups``): what a profile reads instead of
    hundreds of rows per series. Hours are counted from the epoch (hour ``first_hour + i`` is element ``i``);
    ``present`` holds one byte of flags per hour (1: a row, 2: average, 4: maximum, 8: sum set), the value columns
    little-endian float64 per hour (0 where unset). ``since_hour``: the hour from which the packed form holds every
    row of the series (None: all of them; older hours are dropped once the series grows past the longest window)."""

    __tablename__ = "metric_series"
    __table_args__ = (UniqueConstraint("resource_id", "namespace", "metric"),)

    first_hour: Mapped[int] = mapped_column(BigInteger)
    since_hour: Mapped[int | None] = mapped_column(BigInteger)
    present: Mapped[bytes] = mapped_column(LargeBinary)
    average: Mapped[bytes] = mapped_column(LargeBinary)
    maximum: Mapped[bytes] = mapped_column(LargeBinary)
    sum: Mapped[bytes] = mapped_column(LargeBinary)


class MetricCoverage(ResourceMetric, Base):
    """Whether a metric exists for a resource over a window, and how many hours had datapoints.

    ``exists`` False means telemetry is missing (never "idle"); True with ``hours_with_data`` below the
    window means hours without datapoints (for SageMaker invocations: zero traffic).
    """

    __tablename__ = "metric_coverage"
    __table_args__ = (UniqueConstraint("resource_id", "namespace", "metric"),)

    exists: Mapped[bool]
    hours_with_data: Mapped[int] = mapped_column(default=0)
    window_start: Mapped[datetime]
    window_end: Mapped[datetime]
    checked_at: Mapped[datetime] = mapped_column(default=utcnow)
