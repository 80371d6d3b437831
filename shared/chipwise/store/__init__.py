"""The store: SQLAlchemy 2.0 tables, sessions, repositories and Alembic migrations.

Nothing above the store imports ``sqlalchemy`` (an import contract): it names a session ``chipwise.store.Session``,
opens one with :func:`session_scope` (or :func:`guarded_scope`) and reads and writes through
``chipwise.store.repositories``.
"""

from chipwise.store.session import (
    Session,
    SessionFactory,
    ensure_schema,
    get_engine,
    get_session_factory,
    guarded_scope,
    reading,
    session_scope,
    transaction,
    upgrade,
)

__all__ = [
    "Session",
    "SessionFactory",
    "ensure_schema",
    "get_engine",
    "get_session_factory",
    "guarded_scope",
    "reading",
    "session_scope",
    "transaction",
    "upgrade",
]
