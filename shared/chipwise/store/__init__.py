"""The store: SQLAlchemy 2.0 tables, sessions, repositories and Alembic migrations."""

from chipwise.store.session import ensure_schema, get_engine, get_session_factory, session_scope, upgrade

__all__ = ["ensure_schema", "get_engine", "get_session_factory", "session_scope", "upgrade"]
