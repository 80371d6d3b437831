"""Engines (one per database URL) and the reachability check: what sessions and the schema check both use."""

from __future__ import annotations

import atexit
import warnings
import weakref
from functools import lru_cache
from pathlib import Path
from typing import Any

from sqlalchemy import Engine, create_engine, event
from sqlalchemy.engine import make_url
from sqlalchemy.exc import ArgumentError, OperationalError

from chipwise.errors import ConfigError, StoreUnavailable
from chipwise.store.base import dump_json

warnings.filterwarnings("ignore", message=r"Dialect sqlite\+pysqlite does \*not\* support Decimal")


def _sqlite_pragmas(dbapi_connection: Any, _record: Any) -> None:
    cursor = dbapi_connection.cursor()
    cursor.execute("PRAGMA foreign_keys=ON")
    cursor.execute("PRAGMA journal_mode=WAL")
    cursor.execute("PRAGMA synchronous=NORMAL")
    cursor.close()


# Every engine made, closed at exit: a process that ends with ``os._exit`` after the atexit handlers (the command
# line's :func:`chipwise.cli.finish`) closes its connections all the same (SQLite checkpoints its WAL on the last
# close; PostgreSQL sees a clean disconnect).
_ENGINES: weakref.WeakSet[Engine] = weakref.WeakSet()


@atexit.register
def dispose_engines() -> None:
    """Close the pooled connections of every engine still alive."""
    for engine in list(_ENGINES):
        engine.dispose()


@lru_cache(maxsize=8)
def get_engine(url: str) -> Engine:
    """One engine per database URL (SQLite file by default, PostgreSQL in production)."""
    engine = _new_engine(url)
    _ENGINES.add(engine)
    return engine


def _new_engine(url: str) -> Engine:
    try:
        parsed = make_url(url)
    except ArgumentError as exc:
        raise ConfigError(f"invalid setting database_url (CHIPWISE_DATABASE_URL): {url!r} is not a URL") from exc
    if parsed.get_backend_name() == "sqlite":
        engine = create_engine(parsed, connect_args={"timeout": 30}, json_serializer=dump_json)
        event.listen(engine, "connect", _sqlite_pragmas)
        return engine
    if parsed.get_backend_name() == "postgresql" and parsed.drivername == "postgresql":
        parsed = parsed.set(drivername="postgresql+psycopg")
    return create_engine(parsed, pool_pre_ping=True, json_serializer=dump_json)


def describe_url(url: str) -> str:
    """The URL with any password hidden, for messages."""
    return make_url(url).render_as_string(hide_password=True)


def sqlite_folder(url: str) -> Path | None:
    """The folder a SQLite file URL puts its database in (None: not SQLite, or in memory)."""
    parsed = make_url(url)
    if parsed.get_backend_name() != "sqlite" or parsed.database in (None, "", ":memory:"):
        return None
    if parsed.database.startswith("file:"):  # a URI filename: SQLite resolves it
        return None
    return Path(parsed.database).parent


def check_connection(url: str) -> None:
    """Raise StoreUnavailable with a one-line fix when the database cannot be reached."""
    folder = sqlite_folder(url)
    if folder is not None and not folder.is_dir():
        raise StoreUnavailable(
            f"the folder of the SQLite store {describe_url(url)} does not exist: create {folder} "
            "or point CHIPWISE_DATABASE_URL elsewhere"
        )
    try:
        with get_engine(url).connect():
            pass
    except OperationalError as exc:
        reason = str(exc.orig).strip().splitlines()[0] if exc.orig else str(exc)
        raise StoreUnavailable(
            f"cannot reach the database at {describe_url(url)}: {reason} "
            "(check CHIPWISE_DATABASE_URL and that the server is running)"
        ) from exc
