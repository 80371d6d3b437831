"""The ``chipwise`` command.

Each module in this package that defines ``register(app)`` adds its commands, and ``_table.py`` names the module
of each top-level command with its first sentence: ``chipwise --help`` reads the table and imports no command
module; a command's module is imported when the command runs. Installed packages add commands through the
``chipwise.cli`` entry-point group (the development kit adds ``chipwise demo``), imported when listed or run.
"""

from __future__ import annotations

import atexit
import importlib
import os
import sys
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, NoReturn

import typer
import typer.main

from chipwise.cli._errors import explain, redact, take_debug_flag, unexpected
from chipwise.cli._help import ChipwiseGroup, polish
from chipwise.cli._table import COMMANDS
from chipwise.errors import ConfigError

if TYPE_CHECKING:
    from rich.console import Console
    from typer._click import Command, Context

PLUGIN_GROUP = "chipwise.cli"
DEMO_UNAVAILABLE = "The demo (needs the development kit: run `make demo`)."


class LazyGroup(ChipwiseGroup):
    """The root command: lists the commands from :data:`chipwise.cli._table.COMMANDS` (and the plugins' names) and
    imports a command's module only when that command is looked up (to run it, or for its own help)."""

    def list_commands(self, ctx: Context) -> list[str]:
        return sorted({*self.commands, *COMMANDS, *plugin_entries(), "demo"})

    def get_command(self, ctx: Context, cmd_name: str) -> Command | None:
        if cmd_name not in self.commands:
            self.commands.update(load_commands(cmd_name))
        return self.commands.get(cmd_name)

    def summary_of(self, ctx: Context, name: str) -> str | None:
        entry = COMMANDS.get(name)
        if entry is not None and name not in self.commands:
            return entry.summary  # the table's sentence: nothing imported
        return super().summary_of(ctx, name)


def load_commands(name: str) -> dict[str, Command]:
    """The click commands of the module that defines ``name`` (a module may define several), or of the plugin
    of that name; empty for an unknown name."""
    holder = typer.Typer(rich_markup_mode=None, pretty_exceptions_enable=False)
    holder.callback()(_nothing)  # a group, whatever the module registers
    entry = COMMANDS.get(name)
    plugged = plugin_entries() if entry is None else {}
    if entry is not None:
        for module in entry.also:  # they add subcommands to the group when imported
            importlib.import_module(f"{__name__}.{module}")
        importlib.import_module(f"{__name__}.{entry.module}").register(holder)
    elif name in plugged:
        module_name, _, attribute = plugged[name].partition(":")
        getattr(importlib.import_module(module_name.strip()), attribute.strip())(holder)
    elif name == "demo":
        holder.command("demo", help=DEMO_UNAVAILABLE)(_demo_unavailable)
    else:
        return {}
    polish(holder)
    return dict(typer.main.get_group(holder).commands)


def _nothing() -> None:
    """A group's callback: the group itself does nothing before its command."""


def root_command() -> ChipwiseGroup:
    """The root click group with every command loaded (for tests and tools that walk the whole tree)."""
    root = typer.main.get_command(app)
    assert isinstance(root, LazyGroup)
    context = root.make_context("chipwise", ["--help"], resilient_parsing=True)
    for name in root.list_commands(context):
        root.get_command(context, name)
    return root


app = typer.Typer(
    name="chipwise",
    help="FinOps advisor for AWS AI accelerators: Inferentia, Trainium and NVIDIA GPU spend. "
    "Add --debug anywhere (or set CHIPWISE_DEBUG=1) to see the traceback of a failure.",
    no_args_is_help=True,
    rich_markup_mode=None,  # help text is plain: brackets such as [rules.<rule_id>] stay as written
    pretty_exceptions_enable=False,
    cls=LazyGroup,
)
app.callback()(_nothing)  # the root is a group whose commands load on demand (LazyGroup)


@cache
def plugin_entries(group: str = PLUGIN_GROUP) -> dict[str, str]:
    """The ``group`` entry points of the installed distributions (name → "module:attribute"), read from their
    ``*.dist-info/entry_points.txt`` on ``sys.path``: :mod:`importlib.metadata` would cost ``chipwise --help`` a
    fifth of its time (it imports the email package), and so would configparser: the file is INI lines
    (``[group]`` then ``name = module:attribute``), read here directly."""
    found: dict[str, str] = {}
    header = f"[{group}]"
    for folder in sys.path:
        try:
            infos = sorted(e.path for e in os.scandir(folder or ".") if e.name.endswith(".dist-info"))
        except OSError:
            continue
        for info in infos:
            try:
                text = Path(info, "entry_points.txt").read_text(encoding="utf-8")
            except (OSError, UnicodeDecodeError):
                continue
            if header in text:
                for name, target in _section(text, header):
                    found.setdefault(name, target)
    return found


def _section(text: str, header: str) -> list[tuple[str, str]]:
    """The ``name = target`` lines under ``header`` in an entry_points.txt (comments and blank lines skipped)."""
    entries: list[tuple[str, str]] = []
    inside = False
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line.startswith(("#", ";")):
            continue
        if line.startswith("["):
            inside = line == header
        elif inside and "=" in line:
            name, _, target = line.partition("=")
            entries.append((name.strip(), target.strip()))
    return entries


def _demo_unavailable() -> None:
    """``chipwise demo`` without the development kit installed."""
    raise ConfigError(
        "the demo is part of the development kit, which is not installed: run `make demo` from a clone of the "
        "repository (or `pip install -e devkit`)"
    )


def main(argv: list[str] | None = None) -> int:
    """Entry point: every expected failure ends as one or two lines on stderr and exit 1; a bug as "unexpected
    X: …". ``--debug`` (anywhere on the line) or ``CHIPWISE_DEBUG=1`` prints the traceback as well."""
    args, debug = take_debug_flag(list(sys.argv[1:] if argv is None else argv))
    debug = debug or os.environ.get("CHIPWISE_DEBUG", "").lower() in {"1", "true", "yes"}
    try:
        app(args=args, standalone_mode=True)  # click prints usage errors itself and exits 2
    except SystemExit as exc:
        if isinstance(exc.code, str):  # SystemExit("reason"), e.g. from the neuron agent: say it
            from rich.text import Text

            _stderr().print(Text(redact(exc.code)), highlight=False, soft_wrap=True)
            return 1
        return exc.code if isinstance(exc.code, int) else 0
    except KeyboardInterrupt:
        _stderr().print("interrupted", style="yellow", markup=False)
        return 130
    except Exception as exc:
        if debug:
            import traceback

            traceback.print_exc()
        message = explain(exc)
        _say(_stderr(), message if message is not None else unexpected(exc))
        return 1
    return 0


def _stderr() -> Console:
    from rich.console import Console

    return Console(stderr=True)


def _say(err: Console, message: str) -> None:
    """``chipwise: message`` on stderr: no markup (brackets stay), no wrapping (one line stays one line)."""
    from rich.text import Text

    line = Text("chipwise: ", style="bold red")
    line.append(message)
    err.print(line, highlight=False, soft_wrap=True)


def run() -> NoReturn:
    """The console script: :func:`main`, then :func:`finish` with its exit code."""
    finish(main())


def finish(code: int) -> NoReturn:
    """End the process with ``code`` once the command is done, without tearing the interpreter down.

    CPython's own exit frees every module and object one by one and runs a last full garbage collection: for a read
    command on the demo store that was a quarter of its CPU, spent after its output was written. Here the
    process ends as it would, less that teardown: the atexit handlers run (logging's flush, temporary folders'
    removal, the store's engines closing their connections, registered where they are made), stdout and stderr are
    flushed, then ``os._exit``. Product code writes its files in ``with`` blocks (ruff's SIM115), so none waits
    for the teardown to be flushed. When another thread is still running (the interpreter would wait for it) or
    a stream cannot be flushed (a closed pipe: the interpreter reports it, exit 120), the usual exit runs."""
    threading = sys.modules.get("threading")
    if threading is None or threading.active_count() == 1:
        atexit._run_exitfuncs()
        try:
            sys.stdout.flush()
            sys.stderr.flush()
        except (OSError, ValueError, AttributeError):  # a closed pipe or stream, or none (None)
            pass  # the interpreter's exit reports it, as without this
        else:
            os._exit(code & 0xFF)
    sys.exit(code)
