"""What every command shares: consoles, settings and the store."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from rich.console import Console, ConsoleDimensions
from rich.progress import BarColumn, MofNCompleteColumn, Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

from chipwise.settings import Settings, get_settings
from chipwise.store import Session, ensure_schema, session_scope

PIPED_WIDTH = 200  # columns of a table written to a pipe or file: wide enough that words stay whole


class _StdoutConsole(Console):
    """stdout or stderr: the terminal's width; piped or redirected (and no COLUMNS), a wide page so tables keep
    words whole. Decided at each print, not at import (the same process may print to a terminal and to a capture)."""

    @property
    def size(self) -> ConsoleDimensions:
        measured = super().size
        columns = os.environ.get("COLUMNS", "")
        if self._width is None and columns.isdigit():
            return ConsoleDimensions(int(columns), measured.height)
        if self._width is None and not self.is_terminal:
            return ConsoleDimensions(PIPED_WIDTH, measured.height)
        return measured

    @size.setter
    def size(self, new_size: tuple[int, int]) -> None:
        self._width, self._height = new_size


def _stdout_console(stderr: bool = False) -> Console:
    console = _StdoutConsole(stderr=stderr)
    console._width = None  # COLUMNS is read at each print (the property above), not frozen at import
    return console


out = _stdout_console()  # data (tables, JSON) goes to stdout
err = _stdout_console(stderr=True)  # progress and messages go to stderr (the demo's findings table too)


def settings() -> Settings:
    return get_settings()


def store_url() -> str:
    """The configured store's URL, its schema created or upgraded first (for a pipeline function that opens its own
    transactions)."""
    url = get_settings().database_url
    ensure_schema(url)
    return url


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
