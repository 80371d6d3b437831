"""What every command shares: consoles, settings and the store."""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, SpinnerColumn, TextColumn, TimeElapsedColumn
from sqlalchemy.orm import Session

from chipwise.settings import Settings, get_settings
from chipwise.store import ensure_schema, session_scope

PIPED_WIDTH = 200  # columns of a table written to a pipe or file: wide enough that words stay whole


def _stdout_console() -> Console:
    """stdout: the terminal's width, or (piped, no COLUMNS) a wide page so tables do not break words."""
    if sys.stdout.isatty() or os.environ.get("COLUMNS"):
        return Console()
    return Console(width=PIPED_WIDTH)


out = _stdout_console()  # data (tables, JSON) goes to stdout
err = Console(stderr=True)  # progress and messages go to stderr


def settings() -> Settings:
    return get_settings()


@contextmanager
def store_session(migrate: bool = True) -> Iterator[Session]:
    """A transaction on the configured store, creating or upgrading the schema first."""
    url = get_settings().database_url
    if migrate:
        ensure_schema(url)
    with session_scope(url) as session:
        yield session


def progress() -> Progress:
    """A progress display on stderr for long steps."""
    return Progress(
        SpinnerColumn(),
        TextColumn("[progress.description]{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=err,
        transient=False,
    )


def print_json(document: Any) -> None:
    """Machine-readable output on stdout (Decimal and datetime as strings)."""
    out.print_json(json.dumps(document, default=str), highlight=False)
