"""Engines and sessions (built once per URL), schema upgrades through Alembic."""

from __future__ import annotations

import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from functools import lru_cache
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sqlalchemy import Engine, create_engine, event, inspect
from sqlalchemy.engine import make_url
from sqlalchemy.exc import ArgumentError, OperationalError
from sqlalchemy.orm import Session, sessionmaker

from chipwise.errors import ConfigError, StoreUnavailable

if TYPE_CHECKING:  # Alembic is imported only to migrate, never by a function that only checks the schema
    from alembic.config import Config

warnings.filterwarnings("ignore", message=r"Dialect sqlite\+pysqlite does \*not\* support Decimal")


def _sqlite_pragmas(dbapi_connection: Any, _record: Any) -> None:
    cursor = dbapi_connection.cursor()
    cursor.execute("PRAGMA foreign_keys=ON")
    cursor.execute("PRAGMA journal_mode=WAL")
    cursor.execute("PRAGMA synchronous=NORMAL")
    cursor.close()


@lru_cache(maxsize=8)
def get_engine(url: str) -> Engine:
    """One engine per database URL (SQLite file by default, PostgreSQL in production)."""
    try:
        parsed = make_url(url)
    except ArgumentError as exc:
        raise ConfigError(f"invalid setting database_url (CHIPWISE_DATABASE_URL): {url!r} is not a URL") from exc
    if parsed.get_backend_name() == "sqlite":
        engine = create_engine(parsed, connect_args={"timeout": 30})
        event.listen(engine, "connect", _sqlite_pragmas)
        return engine
    if parsed.get_backend_name() == "postgresql" and parsed.drivername == "postgresql":
        parsed = parsed.set(drivername="postgresql+psycopg")
    return create_engine(parsed, pool_pre_ping=True)


@lru_cache(maxsize=8)
def get_session_factory(url: str) -> sessionmaker[Session]:
    return sessionmaker(bind=get_engine(url), expire_on_commit=False)


@contextmanager
def session_scope(url: str) -> Iterator[Session]:
    """A session inside one transaction: committed on success, rolled back on error."""
    factory = get_session_factory(url)
    with factory.begin() as session:
        yield session


def alembic_config(url: str) -> Config:
    from alembic.config import Config

    cfg = Config()
    cfg.set_main_option("script_location", str(resources.files("chipwise.store") / "migrations"))
    cfg.set_main_option("sqlalchemy.url", url.replace("%", "%%"))
    return cfg


def sqlite_folder(url: str) -> Path | None:
    """The folder a SQLite file URL puts its database in (None: not SQLite, or in memory)."""
    parsed = make_url(url)
    if parsed.get_backend_name() != "sqlite" or parsed.database in (None, "", ":memory:"):
        return None
    if parsed.database.startswith("file:"):  # a URI filename: SQLite resolves it
        return None
    return Path(parsed.database).parent


def describe_url(url: str) -> str:
    """The URL with any password hidden, for messages."""
    return make_url(url).render_as_string(hide_password=True)


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


def upgrade(url: str, revision: str = "head", *, lock_timeout: float | None = None) -> None:
    """Bring the schema to ``revision`` (creates every table on an empty database), holding the migration lock so
    concurrent upgrades of one database run one after the other (:mod:`chipwise.store.schema`)."""
    from alembic import command

    from chipwise.store.schema import DEFAULT_LOCK_TIMEOUT_SECONDS, migration_transaction

    check_connection(url)
    cfg = alembic_config(url)
    with migration_transaction(url, lock_timeout or DEFAULT_LOCK_TIMEOUT_SECONDS) as connection:
        cfg.attributes["connection"] = connection
        command.upgrade(cfg, revision)


def current_revision(url: str) -> str | None:
    from alembic.runtime.migration import MigrationContext

    with get_engine(url).connect() as connection:
        return MigrationContext.configure(connection).get_current_revision()


def ensure_schema(url: str) -> None:
    """Upgrade when the schema is missing or behind (the CLI's convenience; deployed functions only check)."""
    from chipwise.store.schema import schema_status

    if schema_status(url).state in ("empty", "behind"):
        upgrade(url)


def table_names(url: str) -> list[str]:
    return sorted(inspect(get_engine(url)).get_table_names())
