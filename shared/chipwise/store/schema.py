"""The schema's revision: upgraded once per deploy under a lock, checked (never migrated) by the functions.

A deployment runs the migrations once, from the ``migrate`` function (a CloudFormation custom resource), before
the other functions are updated; locally ``chipwise db upgrade`` does. The scan and the ingest call
:func:`require_current_schema` and refuse an empty or older schema with the fix in the message. A schema newer
than the code (a rolled-back deploy) is accepted with a warning: migrations only add until the code that used
what they drop has been gone for a release (iac/README.md, "Rolling back").

The code's revisions are read from the migration files with :mod:`ast`, not through Alembic, so a function that
only checks never imports Alembic (tests keep the two readings equal).
"""

from __future__ import annotations

import ast
import hashlib
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from pathlib import Path
from typing import Literal

from sqlalchemy import Connection, inspect, text
from sqlalchemy.engine import make_url

from chipwise.errors import StoreUnavailable
from chipwise.observability import logger
from chipwise.store.engine import check_connection, describe_url, get_engine

SchemaState = Literal["current", "empty", "behind", "ahead"]
VERSION_TABLE = "alembic_version"
# PostgreSQL advisory lock key shared by every Chipwise migration (any 64-bit number no other tool uses).
ADVISORY_LOCK_KEY = int.from_bytes(hashlib.sha256(b"chipwise.store.schema").digest()[:8], "big", signed=True)
LOCK_POLL_SECONDS = 0.2
DEFAULT_LOCK_TIMEOUT_SECONDS = 600.0
FIX = "run the migration: a deploy does (functions/migrate), locally `chipwise db upgrade`"


@dataclass(frozen=True)
class CodeRevisions:
    """The migrations this code ships: the head and every revision in its history."""

    head: str
    known: frozenset[str]


@dataclass(frozen=True)
class SchemaStatus:
    url: str
    database: str | None  # the database's revision; None: no schema
    code: str  # the head this code needs
    state: SchemaState

    def describe(self) -> str:
        where = describe_url(self.url)
        if self.state == "empty":
            return f"the database at {where} has no Chipwise schema (this code needs {self.code}): {FIX}"
        if self.state == "behind":
            return f"the database at {where} is at schema {self.database}, this code needs {self.code}: {FIX}"
        if self.state == "ahead":
            return f"the database at {where} is at schema {self.database}, newer than this code's {self.code}"
        return f"the database at {where} is at schema {self.code}"


def _literal(tree: ast.Module, name: str) -> object:
    """The value of a module-level ``name = <literal>`` (or ``name: type = <literal>``)."""
    for node in tree.body:
        targets: list[ast.expr]
        if isinstance(node, ast.AnnAssign) and node.value is not None:
            targets, value = [node.target], node.value
        elif isinstance(node, ast.Assign):
            targets, value = node.targets, node.value
        else:
            continue
        if any(isinstance(t, ast.Name) and t.id == name for t in targets):
            return ast.literal_eval(value)
    raise ValueError(f"no literal {name} =")


def _identifiers(source: str, name: str) -> tuple[object, object]:
    """A migration's ``revision`` and ``down_revision`` literals. Alembic's template states them at the top, before
    the first function, so only that head is parsed (the whole file when the head does not hold them): every
    command that opens the store checks the schema, and parsing each migration whole took most of that check."""
    try:
        head = ast.parse(source.split("\ndef ", 1)[0], name)
        return _literal(head, "revision"), _literal(head, "down_revision")
    except (SyntaxError, ValueError):
        tree = ast.parse(source, name)
        return _literal(tree, "revision"), _literal(tree, "down_revision")


@lru_cache(maxsize=1)
def code_revisions() -> CodeRevisions:
    """The revisions in ``chipwise/store/migrations/versions`` (``revision`` and ``down_revision`` literals)."""
    parents: dict[str, tuple[str, ...]] = {}
    versions = resources.files("chipwise.store") / "migrations" / "versions"
    for entry in versions.iterdir():
        if not entry.name.endswith(".py") or entry.name.startswith("_"):
            continue
        source = entry.read_text(encoding="utf-8")
        try:
            revision, down = _identifiers(source, entry.name)
        except ValueError as exc:
            raise StoreUnavailable(f"migration {entry.name} has {exc}") from exc
        parents[str(revision)] = tuple(str(d) for d in (down if isinstance(down, tuple | list) else [down]) if d)
    referenced = {parent for downs in parents.values() for parent in downs}
    heads = sorted(set(parents) - referenced)
    if len(heads) != 1:
        raise StoreUnavailable(f"the migrations have {len(heads)} heads ({', '.join(heads)}); merge them")
    return CodeRevisions(head=heads[0], known=frozenset(parents))


def database_revision(connection: Connection) -> str | None:
    """The revision stamped in the database, None when it has no schema."""
    if not inspect(connection).has_table(VERSION_TABLE):
        return None
    rows = [str(r[0]) for r in connection.execute(text(f"SELECT version_num FROM {VERSION_TABLE}"))]
    if len(rows) > 1:
        raise StoreUnavailable(f"the database is at several schema heads ({', '.join(sorted(rows))})")
    return rows[0] if rows else None


def schema_status(url: str) -> SchemaStatus:
    """Where the database's schema stands against this code's migrations."""
    check_connection(url)
    code = code_revisions()
    with get_engine(url).connect() as connection:
        current = database_revision(connection)
    state: SchemaState
    if current is None:
        state = "empty"
    elif current == code.head:
        state = "current"
    elif current in code.known:
        state = "behind"
    else:
        state = "ahead"
    return SchemaStatus(url=url, database=current, code=code.head, state=state)


def require_current_schema(url: str) -> SchemaStatus:
    """Raise StoreUnavailable (naming the fix) unless the schema is this code's, or newer (with a warning)."""
    status = schema_status(url)
    if status.state in ("empty", "behind"):
        raise StoreUnavailable(status.describe())
    if status.state == "ahead":
        logger().warning("schema newer than the code", extra={"database": status.database, "code": status.code})
    return status


def _sqlite_lock_path(url: str) -> Path | None:
    parsed = make_url(url)
    if parsed.get_backend_name() != "sqlite" or not parsed.database or parsed.database == ":memory:":
        return None
    return Path(f"{parsed.database}.migrate-lock")


def _busy(url: str, timeout: float) -> StoreUnavailable:
    return StoreUnavailable(
        f"another migration of {describe_url(url)} has held the lock for over {timeout:.0f}s; try again later"
    )


@contextmanager
def _file_lock(url: str, timeout: float) -> Iterator[None]:
    """SQLite: an exclusive ``flock`` on a file beside the database, held until the transaction has committed."""
    path = _sqlite_lock_path(url)
    if path is None:
        yield
        return
    import fcntl

    deadline = time.monotonic() + timeout
    with path.open("a") as handle:
        while True:
            try:
                fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() > deadline:
                    raise _busy(url, timeout) from None
                time.sleep(LOCK_POLL_SECONDS)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def _advisory_lock(url: str, connection: Connection, timeout: float) -> None:
    """PostgreSQL: a transaction-level advisory lock, released by the commit itself."""
    deadline = time.monotonic() + timeout
    query = text("SELECT pg_try_advisory_xact_lock(:key)")
    while not connection.execute(query, {"key": ADVISORY_LOCK_KEY}).scalar():
        if time.monotonic() > deadline:
            raise _busy(url, timeout)
        time.sleep(LOCK_POLL_SECONDS)


@contextmanager
def migration_transaction(url: str, timeout: float = DEFAULT_LOCK_TIMEOUT_SECONDS) -> Iterator[Connection]:
    """A transaction holding the database's migration lock: concurrent migrations wait for it (up to ``timeout``
    seconds, then StoreUnavailable) and see the schema the previous one committed."""
    with _file_lock(url, timeout), get_engine(url).connect() as connection:
        if connection.dialect.name != "sqlite":
            with connection.begin():
                _advisory_lock(url, connection, timeout)
                yield connection
            return
        # SQLite rebuilds a table to alter it (Alembic's batch mode): with foreign keys on, dropping the old table
        # would cascade to its children (a finding's history, a resource's rollups). SQLite's documented way is
        # foreign keys off outside the transaction, then foreign_key_check before the commit.
        connection.exec_driver_sql("PRAGMA foreign_keys=OFF")
        connection.commit()
        try:
            with connection.begin():
                yield connection
                broken = connection.exec_driver_sql("PRAGMA foreign_key_check").fetchall()
                if broken:
                    raise StoreUnavailable(f"the migration would break {len(broken)} foreign keys: rolled back")
        finally:
            connection.exec_driver_sql("PRAGMA foreign_keys=ON")
            connection.commit()
