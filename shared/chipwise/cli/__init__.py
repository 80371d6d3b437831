"""The ``chipwise`` command.

Each module in this package that defines ``register(app)`` adds its commands; adding a command group
means adding one module, nothing central changes. Installed packages add commands the same way through the
``chipwise.cli`` entry-point group (the development kit adds ``chipwise demo``).
"""

from __future__ import annotations

import importlib
import os
import pkgutil
import sys
from pathlib import Path
from typing import TYPE_CHECKING

import typer

from chipwise.cli._errors import explain, redact, take_debug_flag, unexpected
from chipwise.cli._help import polish
from chipwise.errors import ConfigError

if TYPE_CHECKING:
    from rich.console import Console

PLUGIN_GROUP = "chipwise.cli"

app = typer.Typer(
    name="chipwise",
    help="FinOps advisor for AWS AI accelerators: Inferentia, Trainium and NVIDIA GPU spend. "
    "Add --debug anywhere (or set CHIPWISE_DEBUG=1) to see the traceback of a failure.",
    no_args_is_help=True,
    rich_markup_mode=None,  # help text is plain: brackets such as [rules.<rule_id>] stay as written
    pretty_exceptions_enable=False,
)

_registered = False


def _register_commands() -> None:
    global _registered
    if _registered:
        return
    for module in sorted(pkgutil.iter_modules(__path__), key=lambda m: m.name):
        if module.name.startswith("_") or module.name == "common":
            continue
        mod = importlib.import_module(f"{__name__}.{module.name}")
        register = getattr(mod, "register", None)
        if register is not None:
            register(app)
    plugged = plugin_entries()
    for target in plugged.values():
        module_name, _, attribute = target.partition(":")
        getattr(importlib.import_module(module_name.strip()), attribute.strip())(app)
    if "demo" not in plugged:
        app.command("demo", help="The demo (needs the development kit: run `make demo`).")(_demo_unavailable)
    polish(app)
    _registered = True


def plugin_entries(group: str = PLUGIN_GROUP) -> dict[str, str]:
    """The ``group`` entry points of the installed distributions (name → "module:attribute"), read from their
    ``*.dist-info/entry_points.txt`` on ``sys.path``: :mod:`importlib.metadata` would cost ``chipwise --help`` a
    fifth of its time (it imports the email package)."""
    import configparser

    found: dict[str, str] = {}
    for folder in sys.path:
        try:
            infos = sorted(e.path for e in os.scandir(folder or ".") if e.name.endswith(".dist-info"))
        except OSError:
            continue
        for info in infos:
            parser = configparser.RawConfigParser(delimiters=("=",))
            parser.optionxform = str  # type: ignore[assignment,method-assign]  # names keep their case
            try:
                parser.read(Path(info) / "entry_points.txt", encoding="utf-8")
            except (configparser.Error, OSError, UnicodeDecodeError):
                continue
            if parser.has_section(group):
                for name, target in parser.items(group):
                    found.setdefault(name, target)
    return found


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
        _register_commands()
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


def run() -> None:
    sys.exit(main())
