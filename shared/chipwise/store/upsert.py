"""Idempotent bulk writes: INSERT ... ON CONFLICT DO UPDATE on SQLite and PostgreSQL alike."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from sqlalchemy import Table
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.orm import DeclarativeBase, Session

# SQLite allows 32,766 bound parameters per statement; stay well below for both databases.
_MAX_PARAMS = 30_000


def upsert(
    session: Session,
    model: type[DeclarativeBase],
    rows: Sequence[dict[str, Any]],
    conflict: Sequence[str],
    update: Sequence[str] | None = None,
) -> int:
    """Insert ``rows`` or, when ``conflict`` columns match an existing row, update ``update`` columns.

    ``update=None`` updates every column given in the rows except the conflict columns; ``update=[]``
    leaves existing rows untouched (insert-if-absent). Returns the number of rows sent.
    """
    if not rows:
        return 0
    table: Table = model.__table__  # type: ignore[assignment]
    dialect = session.get_bind().dialect.name
    insert = postgresql.insert if dialect == "postgresql" else sqlite.insert
    columns = list(rows[0])
    to_update = [c for c in columns if c not in conflict] if update is None else list(update)
    stmt = insert(table)
    if to_update:
        stmt = stmt.on_conflict_do_update(index_elements=list(conflict), set_={c: stmt.excluded[c] for c in to_update})
    else:
        stmt = stmt.on_conflict_do_nothing(index_elements=list(conflict))
    # One statement, compiled once, executed with many parameter sets (executemany): an order of magnitude
    # faster than compiling a multi-row VALUES clause per chunk for the large rollup writes.
    chunk = max(1, _MAX_PARAMS // max(1, len(columns)))
    for start in range(0, len(rows), chunk):
        session.execute(stmt, list(rows[start : start + chunk]))
    return len(rows)
