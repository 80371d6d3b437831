"""What every command shares: the consoles, settings, output helpers (tables cut to their top rows, JSON lines).

Nothing here imports rich, pydantic or the store at import time: ``chipwise --help`` loads typer and the command
modules only; a console is built the first time something is printed."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterable
from functools import cache
from typing import TYPE_CHECKING, Annotated, Any, cast

import typer

if TYPE_CHECKING:
    import json

    from rich.console import Console
    from rich.progress import Progress

    from chipwise.settings import Settings

PIPED_WIDTH = 200  # columns of a table written to a pipe or file: wide enough that words stay whole
DEFAULT_LIMIT = 50  # rows a list command shows unless --limit says otherwise


def _build_console(stderr: bool) -> Console:
    """stdout or stderr: the terminal's width; piped or redirected (and no COLUMNS), a wide page so tables keep
    words whole. Decided at each print, not at construction (the same process may print to a terminal and to a
    capture)."""
    from rich.console import Console, ConsoleDimensions

    class _StdoutConsole(Console):
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

    console = _StdoutConsole(stderr=stderr)
    console._width = None  # COLUMNS is read at each print (the property above), not frozen at construction
    return console


class _LazyConsole:
    """Stands for a rich console and builds it on first use (so importing a command module loads no rich)."""

    def __init__(self, stderr: bool) -> None:
        object.__setattr__(self, "_stderr", stderr)
        object.__setattr__(self, "_console", None)

    def _real(self) -> Console:
        console = object.__getattribute__(self, "_console")
        if console is None:
            console = _build_console(object.__getattribute__(self, "_stderr"))
            object.__setattr__(self, "_console", console)
        return cast("Console", console)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._real(), name)

    def __setattr__(self, name: str, value: Any) -> None:
        setattr(self._real(), name, value)

    def __enter__(self) -> Console:  # special methods are not looked up through __getattr__
        return self._real().__enter__()

    def __exit__(self, *exc: Any) -> None:
        self._real().__exit__(*exc)


def real_console(console: Console) -> Console:
    """The rich console itself behind ``out`` or ``err`` (for rich objects that keep a console: Progress, Live)."""
    if isinstance(console, _LazyConsole):
        return console._real()
    return console


out = cast("Console", _LazyConsole(stderr=False))  # data (tables, JSON) goes to stdout
err = cast("Console", _LazyConsole(stderr=True))  # progress and messages go to stderr (the demo's findings table too)


def settings() -> Settings:
    from chipwise.settings import get_settings

    return get_settings()


def progress() -> Progress:
    """A progress display on stderr for long steps."""
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

    return Progress(
        SpinnerColumn(),
        TextColumn("[progress.description]{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=real_console(err),
        transient=False,
    )


def print_json(document: Any) -> None:
    """Machine-readable output on stdout (Decimal and datetime as strings)."""
    import json

    out.print_json(json.dumps(document, default=str), highlight=False)


def print_json_lines(documents: Iterable[Any]) -> None:
    """One JSON document per line on stdout, written as each comes (a list of any length in flat memory)."""
    write = sys.stdout.write
    encode = _line_encoder().encode
    for document in documents:
        write(encode(document) + "\n")
    sys.stdout.flush()


@cache
def _line_encoder() -> json.JSONEncoder:
    """``json.dumps(document, default=str, separators=(",", ":"))``'s encoder, made once (``dumps`` with options
    makes one per document)."""
    import json

    return json.JSONEncoder(default=str, separators=(",", ":"))


def fields(record: Any, names: str) -> dict[str, Any]:
    """The attributes ``names`` (space-separated) of ``record`` as a dict, in that order (a row of --json)."""
    return {name: getattr(record, name) for name in names.split()}


def more_line(
    shown: int, total: int, noun: str, hint: str = "--limit N or --cursor", plural_form: str | None = None
) -> str | None:
    """ "n more" under a table cut to its top rows (None when everything is shown). ``noun`` is one of the rows
    ("finding"): "… and 1 more finding", "… and 2 more findings" (``plural_form`` when not ``noun`` + "s")."""
    rest = total - shown
    if rest <= 0:
        return None
    nouns = noun if rest == 1 else plural_form or f"{noun}s"
    return f"… and {rest:,} more {nouns} (of {total:,}): {hint} to see them"


def no_match_line(noun: str, **filters: object) -> str:
    """What an empty list says when filters left nothing (rather than an empty table): the filters, by option."""
    given = [f"--{name.replace('_', '-')} {value}" for name, value in filters.items() if value not in (None, (), "")]
    return f"no {noun} matches {', '.join(given)}" if given else f"no {noun}"


# --- the options every list command shares ------------------------------------------------------------------------

AccountFilter = Annotated[str | None, typer.Option("--account", help="Only this account (12 digits).")]
TeamFilter = Annotated[
    str | None, typer.Option("--team", help="Only this team (the first team_tag_keys tag the resource carries).")
]
RegionFilter = Annotated[str | None, typer.Option("--region", help="Only this region.")]
LimitOption = Annotated[
    int | None,
    typer.Option("--limit", min=0, help=f"At most this many rows (table default {DEFAULT_LIMIT}; 0: every row)."),
]
CursorOption = Annotated[
    str | None, typer.Option("--cursor", help="Continue after this id (the last one a previous page showed).")
]


def row_limit(limit: int | None, default: int | None = DEFAULT_LIMIT) -> int | None:
    """The rows to show: --limit as given (0: every row), else ``default`` (None: every row)."""
    if limit is None:
        return default
    return None if limit == 0 else limit


def check_account_id(account: str | None, option: str = "--account") -> None:
    from chipwise.errors import InvalidInput
    from chipwise.models.common import is_account_id

    if account is not None and not is_account_id(account):
        raise InvalidInput(f"{option} {account!r} is not a 12-digit AWS account id")


@cache
def known_regions() -> frozenset[str]:
    """Every region botocore's partitions file lists, in every partition: read as a file (no boto3 import)."""
    import importlib.util
    import json
    from pathlib import Path

    spec = importlib.util.find_spec("botocore")
    if spec is None or not spec.submodule_search_locations:  # pragma: no cover - botocore is a dependency
        return frozenset()
    path = Path(next(iter(spec.submodule_search_locations))) / "data" / "partitions.json"
    partitions = json.loads(path.read_text())["partitions"]
    return frozenset(r for p in partitions for r in p["regions"] if not r.endswith("-global"))


def check_region(region: str | None) -> None:
    from chipwise.errors import InvalidInput

    if region is not None and region not in known_regions():
        raise InvalidInput(f"--region {region!r} is not an AWS region (e.g. us-east-1)")
