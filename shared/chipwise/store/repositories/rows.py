"""Rows the caller built or changed: add them, look one up by its key, flush, delete. The unit of work stays the
caller's (it owns the session and its transaction)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any, TypeVar

from sqlalchemy.orm import Session

from chipwise.store.base import Base

RowT = TypeVar("RowT", bound=Base)


def add(session: Session, *rows: Base, flush: bool = False) -> None:
    """Add ``rows`` to the session; with ``flush``, write them now (their keys are then set and rows added later
    can refer to them)."""
    session.add_all(rows)
    if flush:
        session.flush()


def get(session: Session, table: type[RowT], key: Any) -> RowT | None:
    """The row of ``table`` with this primary key, None when there is none."""
    return session.get(table, key)


def flush(session: Session) -> None:
    """Write the session's pending changes (inside the caller's transaction)."""
    session.flush()


def delete(session: Session, row: Base) -> None:
    session.delete(row)


@contextmanager
def savepoint(session: Session) -> Iterator[None]:
    """A nested transaction: what the block wrote is kept when it ends normally, undone when it raises (the
    exception goes on; the outer transaction and what it wrote before stay)."""
    nested = session.begin_nested()
    try:
        yield
    except BaseException:
        nested.rollback()
        raise
    nested.commit()


def discard(session: Session) -> None:
    """Undo what the session's transaction wrote (a dry run); the rows it loaded stay readable, detached."""
    session.expunge_all()
    session.rollback()
