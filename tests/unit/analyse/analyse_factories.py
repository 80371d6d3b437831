"""Rows for profile tests, written straight into the store (the collector's tables), and a statement counter."""

from __future__ import annotations

import sys
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from datetime import UTC, date, datetime, timedelta
from decimal import Decimal
from pathlib import Path
from typing import Any

from sqlalchemy import event, insert
from sqlalchemy.orm import Session

from chipwise.models.neuron import INSTANCE_RUNTIME_TAG
from chipwise.store.tables import Account, CostRecord, MetricCoverage, MetricRollup, NeuronRollup, Resource

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))  # the repository root: benchmarks/
from benchmarks.bench_rules import estate, neuron_rollups, rollups

ACCOUNT = "123456789012"
REGION = "us-east-1"
NOW = datetime(2026, 11, 20, 12, tzinfo=UTC)
LOOKBACK_DAYS = 14
WINDOW_END = NOW
WINDOW_START = NOW - timedelta(days=LOOKBACK_DAYS)
HOURS = LOOKBACK_DAYS * 24
EMPTY_HINTS: dict[str, Any] = {
    "model_family": None,
    "workload": None,
    "custom_cuda": False,
    "owner": None,
    "image": None,
    "hf_model_id": None,
    "serving_stack": None,
    "neuron_image": False,
    "sources": {},
}


def add_account(session: Session, account_id: str = ACCOUNT) -> None:
    session.add(Account(account_id=account_id))
    session.flush()


def add_resource(
    session: Session,
    name: str,
    *,
    kind: str = "ec2_instance",
    instance_type: str = "inf2.xlarge",
    platform: str = "inferentia",
    count: int = 1,
    state: str = "running",
    account_id: str = ACCOUNT,
    region: str = REGION,
    hints: dict[str, Any] | None = None,
    details: dict[str, Any] | None = None,
    launched_at: datetime | None = None,
    ended_at: datetime | None = None,
) -> int:
    arn = (
        f"arn:aws:ec2:{region}:{account_id}:instance/i-{name}"
        if kind == "ec2_instance"
        else (f"arn:aws:sagemaker:{region}:{account_id}:{kind}/{name}")
    )
    if kind == "ec2_instance":
        details = {"instance_id": f"i-{name}", **(details or {})}
    resource = Resource(
        account_id=account_id,
        region=region,
        arn=arn,
        kind=kind,
        name=name,
        instance_type=instance_type,
        instance_count=count,
        platform=platform,
        state=state,
        hints={**EMPTY_HINTS, **(hints or {})},
        details=details or {},
        launched_at=launched_at,
        ended_at=ended_at,
    )
    session.add(resource)
    session.flush()
    return resource.id


def hours_before(end: datetime, n: int) -> list[datetime]:
    """The ``n`` hours before ``end``, oldest first."""
    return [end - timedelta(hours=n - i) for i in range(n)]


def rollup_rows(
    resource_id: int,
    key: tuple[str, str],
    values: Sequence[float | None],
    column: str = "maximum",
    end: datetime = WINDOW_END,
) -> list[dict[str, Any]]:
    rows = []
    for hour, value in zip(hours_before(end, len(values)), values, strict=True):
        if value is None:
            continue
        row: dict[str, Any] = {"average": None, "maximum": None, "sum": None, "sample_count": None}
        row.update({column: value, "resource_id": resource_id, "namespace": key[0], "metric": key[1], "hour": hour})
        if column == "maximum":
            row["average"] = value
        rows.append(row)
    return rows


def add_rollups(session: Session, rows: Iterable[dict[str, Any]]) -> None:
    batch = list(rows)
    if batch:
        session.execute(insert(MetricRollup), batch)


def add_coverage(session: Session, resource_id: int, key: tuple[str, str], exists: bool, hours: int) -> None:
    session.add(
        MetricCoverage(
            resource_id=resource_id,
            namespace=key[0],
            metric=key[1],
            exists=exists,
            hours_with_data=hours,
            window_start=WINDOW_START,
            window_end=WINDOW_END,
        )
    )


def add_cost(
    session: Session,
    day: date,
    usage_type: str,
    instance_type: str | None,
    unblended: str,
    amortized: str,
    hours: str,
    *,
    service: str = "Amazon Elastic Compute Cloud - Compute",
    region: str | None = None,
) -> None:
    session.add(
        CostRecord(
            account_id=ACCOUNT,
            day=day,
            service=service,
            usage_type=usage_type,
            usage_kind=usage_type.split(":")[0].split("-")[-1] if instance_type else None,
            instance_type=instance_type,
            region=region,
            unblended_cost=Decimal(unblended),
            amortized_cost=Decimal(amortized),
            usage_quantity=Decimal(hours),
        )
    )


def neuron_rows(
    instance_id: str,
    values: Sequence[float],
    *,
    tag: str = INSTANCE_RUNTIME_TAG,
    memory: int = 0,
    executions: int = 0,
    cores: int | None = None,
    average: float | None = None,
    end: datetime = WINDOW_END,
) -> list[dict[str, Any]]:
    return [
        {
            "account_id": ACCOUNT,
            "instance_id": instance_id,
            "runtime_tag": tag,
            "hour": hour,
            "reports": 4,
            "neuroncore_utilization_max": value,
            "neuroncore_utilization_avg": value if average is None else average,
            "cores_in_use": cores,
            "device_memory_used_max": memory,
            "executions_completed": executions,
        }
        for hour, value in zip(hours_before(end, len(values)), values, strict=True)
    ]


def add_neuron(session: Session, rows: Iterable[dict[str, Any]]) -> None:
    batch = list(rows)
    if batch:
        session.execute(insert(NeuronRollup), batch)


@contextmanager
def count_statements(session: Session) -> Iterator[list[str]]:
    """Every SQL statement the session's engine runs inside the block (executemany counts once)."""
    statements: list[str] = []

    def record(_conn: Any, _cursor: Any, statement: str, *_args: Any) -> None:
        statements.append(statement)

    engine = session.get_bind()
    event.listen(engine, "before_cursor_execute", record)
    try:
        yield statements
    finally:
        event.remove(engine, "before_cursor_execute", record)


_ROLLUP = ("resource_id", "namespace", "metric", "hour", "average", "maximum", "sum")
_NEURON = (
    "account_id",
    "instance_id",
    "runtime_tag",
    "hour",
    "neuroncore_utilization_max",
    "neuroncore_utilization_avg",
    "cores_in_use",
    "device_memory_used_max",
    "executions_completed",
)


def write_estate(session: Session, account: str, resources: int, days: int, first_id: int = 1) -> None:
    """The rules benchmark's estate (``benchmarks/bench_rules.py``: every shape the rules look at) for ``account``:
    resources, coverage, costs, hourly rollups and neuron-monitor rollups over ``days``."""
    data = estate(resources, days, account=account, first_id=first_id)
    session.add(Account(account_id=account))
    session.flush()
    for table, rows in ((Resource, data.resources), (MetricCoverage, data.coverage), (CostRecord, data.costs)):
        session.execute(insert(table), rows)
    session.execute(
        insert(MetricRollup), [dict(zip(_ROLLUP, r, strict=True)) for r in rollups(resources, days, first_id=first_id)]
    )
    neuron: list[dict[str, Any]] = [
        {**dict(zip(_NEURON, r, strict=True)), "reports": 4} for r in neuron_rollups(resources, days, account=account)
    ]
    session.execute(insert(NeuronRollup), neuron)
