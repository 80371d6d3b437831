"""Rows in and out of the store as records: a repository copies a row's columns into a frozen dataclass of the same
field names (:func:`record_of`) and builds a row from one (:func:`values_of`). Nothing above the store holds a row.
Every repository is a :class:`Repository`: a class over the session it is given."""

from __future__ import annotations

from dataclasses import fields
from typing import TYPE_CHECKING, Any, TypeVar

if TYPE_CHECKING:
    from _typeshed import DataclassInstance
    from sqlalchemy.orm import Session

RecordT = TypeVar("RecordT", bound="DataclassInstance")


def record_of(kind: type[RecordT], row: object) -> RecordT:
    """The record ``kind`` of ``row``: each field from the row's attribute of the same name."""
    return kind(**{f.name: getattr(row, f.name) for f in fields(kind)})


def values_of(record: DataclassInstance) -> dict[str, Any]:
    """The record's fields by name (a row's constructor takes them)."""
    return {f.name: getattr(record, f.name) for f in fields(record)}


class Repository:
    """The verbs and reads of one part of the store, over the session (one unit of work) it is given."""

    def __init__(self, session: Session) -> None:
        self.session = session
