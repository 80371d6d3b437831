"""The ``chipwise`` command.

Each module in this package that defines ``register(app)`` adds its commands; adding a command group
means adding one module, nothing central changes. Installed packages add commands the same way through the
``chipwise.cli`` entry-point group (the development kit adds ``chipwise demo``).
"""

from __future__ import annotations

import importlib
import pkgutil
import sys
from importlib.metadata import entry_points

import typer
from rich.console import Console

from chipwise.errors import ChipwiseError, ConfigError

PLUGIN_GROUP = "chipwise.cli"

app = typer.Typer(
    name="chipwise",
    help="FinOps advisor for AWS AI accelerators: Inferentia, Trainium and NVIDIA GPU spend.",
    no_args_is_help=True,
    rich_markup_mode="rich",
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
    plugged = {entry.name for entry in entry_points(group=PLUGIN_GROUP)}
    for entry in entry_points(group=PLUGIN_GROUP):
        entry.load()(app)
    if "demo" not in plugged:
        app.command("demo", help="The demo (needs the development kit: run `make demo`).")(_demo_unavailable)
    _registered = True


def _demo_unavailable() -> None:
    """``chipwise demo`` without the development kit installed."""
    raise ConfigError(
        "the demo is part of the development kit, which is not installed: run `make demo` from a clone of the "
        "repository (or `pip install -e devkit`)"
    )


def main(argv: list[str] | None = None) -> int:
    """Entry point: every Chipwise error ends as one line on stderr and a non-zero exit."""
    _register_commands()
    err = Console(stderr=True)
    try:
        app(args=argv, standalone_mode=True)  # click prints usage errors itself and exits 2
    except SystemExit as exc:
        return exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
    except ChipwiseError as exc:
        err.print(f"[bold red]chipwise:[/] {exc}", highlight=False, soft_wrap=True)
        return 1
    except KeyboardInterrupt:
        err.print("[yellow]interrupted[/]")
        return 130
    return 0


def run() -> None:
    sys.exit(main())
