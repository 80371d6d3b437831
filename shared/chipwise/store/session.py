"""Sessions (one factory per URL), schema upgrades through Alembic. The engines are :mod:`chipwise.store.engine`'s,
which :mod:`chipwise.store.schema` uses too (so the two never import each other's module back)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager
from functools import lru_cache
from importlib import resources
from typing import TYPE_CHECKING

from sqlalchemy import inspect
from sqlalchemy.exc import DBAPIError
from sqlalchemy.orm import Session as Session
from sqlalchemy.orm import sessionmaker

from chipwise.errors import StoreUnavailable
from chipwise.store.engine import check_connection as check_connection
from chipwise.store.engine import describe_url as describe_url
from chipwise.store.engine import get_engine as get_engine

if TYPE_CHECKING:  # Alembic is imported only to migrate, never by a function that only checks the schema
    from alembic.config import Config

# What the code above the store names a session and a session factory by (it imports nothing from sqlalchemy); the
# names chipwise.store offers are listed there, the engine's are re-exported (`as`) for the store's own modules.
SessionFactory = sessionmaker[Session]


@lru_cache(maxsize=8)
def get_session_factory(url: str) -> sessionmaker[Session]:
    return sessionmaker(bind=get_engine(url), expire_on_commit=False)


@contextmanager
def session_scope(url: str) -> Iterator[Session]:
    """A session inside one transaction: committed on success, rolled back on error."""
    factory = get_session_factory(url)
    with factory.begin() as session:
        yield session


@contextmanager
def guarded_scope(url: str, what: str) -> Iterator[Session]:
    """:func:`session_scope`, with a database error raised as StoreUnavailable ("``what`` cannot be used: <the
    driver error's type>"): only its type, never the statement's parameters (they can hold contact data)."""
    try:
        with session_scope(url) as session:
            yield session
    except DBAPIError as exc:
        raise StoreUnavailable(f"{what} cannot be used: {type(exc.orig).__name__}") from None


def transaction(factory: SessionFactory) -> AbstractContextManager[Session]:
    """A session of ``factory`` inside one transaction: committed on success, rolled back on error."""
    return factory.begin()


def reading(factory: SessionFactory) -> AbstractContextManager[Session]:
    """A session of ``factory`` for reads (closed at the end; nothing is committed)."""
    return factory()


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
    """Undo what the session's transaction wrote (a dry run); the records read before stay as they are."""
    session.expunge_all()
    session.rollback()


def alembic_config(url: str) -> Config:
    from alembic.config import Config

    cfg = Config()
    cfg.set_main_option("script_location", str(resources.files("chipwise.store") / "migrations"))
    cfg.set_main_option("sqlalchemy.url", url.replace("%", "%%"))
    return cfg


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


def write_revision(message: str) -> list[str]:
    """Write a new migration from the difference between the ORM models and the schema the existing migrations
    build (on a scratch SQLite database); the paths of the files written."""
    import tempfile

    from alembic import command

    with tempfile.TemporaryDirectory() as tmp:
        url = f"sqlite:///{tmp}/head.db"
        upgrade(url)  # the schema the existing migrations build
        scripts = command.revision(alembic_config(url), message=message, autogenerate=True)
        get_engine(url).dispose()
    return [script.path for script in (scripts if isinstance(scripts, list) else [scripts]) if script is not None]


def ensure_schema(url: str) -> None:
    """Upgrade when the schema is missing or behind (the CLI's convenience; deployed functions only check)."""
    from chipwise.store.schema import schema_status

    if schema_status(url).state in ("empty", "behind"):
        upgrade(url)


def table_names(url: str) -> list[str]:
    return sorted(inspect(get_engine(url)).get_table_names())
