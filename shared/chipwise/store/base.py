"""Declarative base, naming convention and the column types every table shares."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from decimal import Decimal
from typing import Any

from sqlalchemy import JSON, DateTime, MetaData, Numeric
from sqlalchemy.dialects.postgresql import JSONB
from sqlalchemy.engine import Dialect
from sqlalchemy.orm import DeclarativeBase
from sqlalchemy.types import TypeDecorator

MICRO = Decimal("0.000001")


class SerializedJson(str):
    """A JSON document serialised already (pydantic's ``model_dump_json``, in Rust): a JSON column takes it as it
    is, instead of a dict that ``json.dumps`` serialises again (a scan's document: 0.1 s of its CPU)."""


def dump_json(value: Any) -> str:
    """Every engine's JSON serialiser: :class:`SerializedJson` as it is, anything else with ``json.dumps``."""
    return str(value) if isinstance(value, SerializedJson) else json.dumps(value)


NAMING_CONVENTION = {
    "ix": "ix_%(column_0_label)s",
    "uq": "uq_%(table_name)s_%(column_0_N_name)s",
    "ck": "ck_%(table_name)s_%(constraint_name)s",
    "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
    "pk": "pk_%(table_name)s",
}


class UTCDateTime(TypeDecorator[datetime]):
    """A timestamp stored as UTC and always returned timezone-aware (SQLite forgets the zone)."""

    impl = DateTime(timezone=True)
    cache_ok = True

    def process_bind_param(self, value: datetime | None, dialect: Dialect) -> datetime | None:
        if value is None:
            return None
        if value.tzinfo is None:
            raise ValueError(f"naive datetime {value!r}: Chipwise stores timezone-aware UTC only")
        return value.astimezone(UTC)

    def process_result_value(self, value: datetime | None, dialect: Dialect) -> datetime | None:
        if value is None:
            return None
        return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)


class Money(TypeDecorator[Decimal]):
    """US dollars as NUMERIC(18, 6), returned as a Decimal quantized to 6 places on every database."""

    impl = Numeric(18, 6, asdecimal=True)
    cache_ok = True

    def process_bind_param(self, value: Decimal | None, dialect: Dialect) -> Decimal | None:
        return None if value is None else Decimal(value).quantize(MICRO)

    def process_result_value(self, value: Any, dialect: Dialect) -> Decimal | None:
        if value is None:
            return None
        # a Decimal (what Numeric returns) as it is; through str() it would be parsed again for the same value
        return (value if isinstance(value, Decimal) else Decimal(str(value))).quantize(MICRO)


JSONType = JSON().with_variant(JSONB(), "postgresql")


class Base(DeclarativeBase):
    """Every Chipwise table."""

    metadata = MetaData(naming_convention=NAMING_CONVENTION)
    type_annotation_map = {datetime: UTCDateTime(), Decimal: Money(), dict[str, Any]: JSONType, list[Any]: JSONType}
