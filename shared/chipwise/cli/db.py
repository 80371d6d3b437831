"""``chipwise db``: the store's schema."""

from __future__ import annotations

import typer

from chipwise.cli.common import out, settings

db_app = typer.Typer(help="The store: create or upgrade the schema, show its state.", no_args_is_help=True)


@db_app.command("upgrade")
def upgrade_command(revision: str = typer.Argument("head", help="Alembic revision to upgrade to.")) -> None:
    """Create or upgrade the schema (safe to run again)."""
    from chipwise.pipeline._store import store_state, upgrade_store

    url = settings().database_url
    at = upgrade_store(url, revision)
    out.print(f"[green]schema at {at}[/] on {store_state(url).description}")


@db_app.command("status")
def status_command() -> None:
    """Show the database URL, the schema revision and the tables."""
    from chipwise.pipeline._store import store_state

    state = store_state(settings().database_url)
    out.print(f"database: {state.description}")
    out.print(f"revision: {state.revision or '(empty: run chipwise db upgrade)'}")
    out.print(f"tables:   {', '.join(state.tables) or '(none)'}")


@db_app.command("prune")
def prune_command() -> None:
    """Delete what is past its retention: scans, rollups, cost days and resolved findings after
    history_retention_days, sent messages after message_retention_days, the audit after audit_retention_days."""
    from chipwise.pipeline.retention import prune_store

    deleted = prune_store()
    if not deleted:
        out.print("nothing past its retention")
    for table, count in deleted.items():
        out.print(f"{table}: {count:,} rows deleted", highlight=False)


def register(app: typer.Typer) -> None:
    app.add_typer(db_app, name="db")


@db_app.command("revision")
def revision_command(
    message: str = typer.Option(..., "--message", "-m", help="What the migration changes."),
) -> None:
    """Write a new migration from the difference between the ORM models and the migrations (for developers)."""
    from chipwise.pipeline._store import new_revision

    for path in new_revision(message):
        out.print(f"[green]wrote[/] {path}: review it before committing")
