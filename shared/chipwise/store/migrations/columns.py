"""What the migrations in ``versions/`` share: the column types they store, the surrogate key most tables have, and
one call that creates a table with its constraints named by the store's naming convention (then its indexes), and
one that drops it.

These helpers are part of every migration that calls them: what a helper emits for given arguments must never
change, or an old migration would build another schema than it did (tests/unit/store/test_store.py compares the
migrated schema with the tables). A migration that needs something else calls Alembic itself or a new helper.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

from chipwise.store.base import Money, UTCDateTime

JSON = sa.JSON().with_variant(postgresql.JSONB(astext_type=sa.Text()), "postgresql")
MONEY = Money(precision=18, scale=6)
UTC = UTCDateTime(timezone=True)


def serial_id() -> sa.Column[int]:
    """The surrogate key most tables have: an autoincrementing integer ``id``."""
    return sa.Column("id", sa.Integer(), autoincrement=True, nullable=False)


def timestamp(name: str, *, nullable: bool = False) -> sa.Column[Any]:
    """A moment, stored in UTC and read back timezone-aware (the tables' ``Mapped[datetime]``)."""
    return sa.Column(name, UTC, nullable=nullable)


def money(name: str, *, nullable: bool = False) -> sa.Column[Any]:
    """An amount of money or a quantity to the micro-unit (the tables' ``Mapped[Decimal]``)."""
    return sa.Column(name, MONEY, nullable=nullable)


def json_value(name: str, *, nullable: bool = False) -> sa.Column[Any]:
    """A JSON document or list: JSONB on PostgreSQL (the tables' ``Mapped[dict[str, Any]]``, ``Mapped[list[Any]]``)."""
    return sa.Column(name, JSON, nullable=nullable)


def uuid(name: str = "id", *, nullable: bool = False) -> sa.Column[str]:
    """A key Chipwise makes (a UUID as text: a finding's, a scan's, a benchmark run's) or a reference to one."""
    return sa.Column(name, sa.String(length=36), nullable=nullable)


def account_id(*, nullable: bool = False) -> sa.Column[str]:
    """The AWS account a row belongs to (12 digits)."""
    return sa.Column("account_id", sa.String(length=12), nullable=nullable)


def region(*, nullable: bool = False) -> sa.Column[str]:
    """An AWS Region's code."""
    return sa.Column("region", sa.String(length=32), nullable=nullable)


def instance_type() -> sa.Column[str]:
    """An EC2 instance type, where the row has one."""
    return sa.Column("instance_type", sa.String(length=64), nullable=True)


def seen() -> tuple[sa.Column[Any], ...]:
    """When a scan first and last saw a row's subject (a resource, a finding)."""
    return timestamp("first_seen"), timestamp("last_seen")


def metric_key() -> tuple[sa.Column[Any], ...]:
    """The leading columns of a table per (resource, namespace, metric): the rollups, the packed series and the
    coverage (each refers to ``resources.id`` and is unique on the three)."""
    return (
        serial_id(),
        sa.Column("resource_id", sa.Integer(), nullable=False),
        sa.Column("namespace", sa.String(length=128), nullable=False),
        sa.Column("metric", sa.String(length=128), nullable=False),
    )


def bill_part() -> tuple[sa.Column[Any], ...]:
    """The leading columns of what a billing period yields (each refers to ``bill_periods.id``)."""
    return serial_id(), sa.Column("period_id", sa.Integer(), nullable=False)


def create_table(
    name: str,
    *columns: sa.Column[Any],
    key: str = "id",
    refers: Mapping[str, str] | None = None,
    cascade: bool = True,
    of_account: bool = False,
    unique: Sequence[str] = (),
    indexes: Mapping[str, Sequence[str]] | None = None,
) -> None:
    """``op.create_table`` with the constraints in the order the store's naming convention names them:
    ``refers`` (column -> "table.column", each a foreign key, ``ON DELETE CASCADE`` unless ``cascade`` is False;
    ``of_account``: ``account_id`` refers to ``accounts.account_id``, never cascading), the primary key on ``key``,
    a unique constraint on ``unique``; then ``indexes`` (name -> columns)."""
    foreign = [(column, target, cascade) for column, target in (refers or {}).items()]
    if of_account:
        foreign.insert(0, ("account_id", "accounts.account_id", False))
    constraints: list[sa.Constraint] = []
    for column, target, cascading in foreign:
        constraints.append(
            sa.ForeignKeyConstraint(
                [column],
                [target],
                name=op.f(f"fk_{name}_{column}_{target.split('.')[0]}"),
                ondelete="CASCADE" if cascading else None,
            )
        )
    constraints.append(sa.PrimaryKeyConstraint(key, name=op.f(f"pk_{name}")))
    if unique:
        constraints.append(sa.UniqueConstraint(*unique, name=op.f(f"uq_{name}_{'_'.join(unique)}")))
    op.create_table(name, *columns, *constraints)
    if indexes:
        with op.batch_alter_table(name, schema=None) as batch_op:
            for index, indexed in indexes.items():
                batch_op.create_index(index, list(indexed), unique=False)


def drop_table(name: str, *indexes: str) -> None:
    """``op.drop_table``, after dropping ``indexes`` (the reverse of :func:`create_table`)."""
    if indexes:
        with op.batch_alter_table(name, schema=None) as batch_op:
            for index in indexes:
                batch_op.drop_index(index)
    op.drop_table(name)
