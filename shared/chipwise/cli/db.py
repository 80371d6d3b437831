"""``chipwise db``: the store's schema."""

from __future__ import annotations

import typer

from chipwise.cli.common import out, settings
from chipwise.store import current_revision, describe_url, table_names, upgrade, write_revision

db_app = typer.Typer(help="The store: create or upgrade the schema, show its state.", no_args_is_help=True)


@db_app.command("upgrade")
def upgrade_command(revision: str = typer.Argument("head", help="Alembic revision to upgrade to.")) -> None:
    """Create or upgrade the schema (safe to run again)."""
    url = settings().database_url
    upgrade(url, revision)
    out.print(f"[green]schema at {current_revision(url)}[/] on {describe_url(url)}")


@db_app.command("status")
def status_command() -> None:
    """Show the database URL, the schema revision and the tables."""
    url = settings().database_url
    upgrade_needed = current_revision(url)
    out.print(f"database: {describe_url(url)}")
    out.print(f"revision: {upgrade_needed or '(empty: run chipwise db upgrade)'}")
    out.print(f"tables:   {', '.join(table_names(url)) or '(none)'}")


def register(app: typer.Typer) -> None:
    app.add_typer(db_app, name="db")


@db_app.command("revision")
def revision_command(
    message: str = typer.Option(..., "--message", "-m", help="What the migration changes."),
) -> None:
    """Write a new migration from the difference between the ORM models and the migrations (for developers)."""
    for path in write_revision(message):
        out.print(f"[green]wrote[/] {path}: review it before committing")
