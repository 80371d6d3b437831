"""The store: SQLAlchemy 2.0 tables, sessions, repositories and Alembic migrations.

Nothing above the store imports ``sqlalchemy``, a table's class, the engine or the session module (import
contracts): it names a session ``chipwise.store.Session`` only to hand it to a repository, opens a unit of work
with :func:`session_scope` (or :func:`guarded_scope`, :func:`transaction`, :func:`reading`) and reads and writes
through ``chipwise.store.repositories``, whose classes return records and offer verbs.
"""

from chipwise.store.session import (
    Session,
    SessionFactory,
    current_revision,
    describe_url,
    discard,
    ensure_schema,
    get_session_factory,
    guarded_scope,
    reading,
    savepoint,
    session_scope,
    table_names,
    transaction,
    upgrade,
    write_revision,
)

__all__ = [
    "Session",
    "SessionFactory",
    "current_revision",
    "describe_url",
    "discard",
    "ensure_schema",
    "get_session_factory",
    "guarded_scope",
    "reading",
    "savepoint",
    "session_scope",
    "table_names",
    "transaction",
    "upgrade",
    "write_revision",
]
