"""Alembic environment: runs on the connection Chipwise hands over, or on the configured URL."""

from __future__ import annotations

from alembic import context
from sqlalchemy import Connection, create_engine

from chipwise.store.tables import all_tables

config = context.config
target_metadata = all_tables()


def _run(connection: Connection) -> None:
    context.configure(
        connection=connection,
        target_metadata=target_metadata,
        compare_type=True,
        render_as_batch=connection.dialect.name == "sqlite",
    )
    with context.begin_transaction():
        context.run_migrations()


def run_migrations_online() -> None:
    connection = config.attributes.get("connection")
    if connection is not None:
        _run(connection)
        return
    engine = create_engine(config.get_main_option("sqlalchemy.url") or "sqlite:///chipwise.db")
    with engine.begin() as conn:
        _run(conn)


def run_migrations_offline() -> None:
    context.configure(url=config.get_main_option("sqlalchemy.url"), target_metadata=target_metadata)
    with context.begin_transaction():
        context.run_migrations()


if context.is_offline_mode():
    run_migrations_offline()
else:
    run_migrations_online()
