"""The ``chipwise`` console script. The command line's packages (typer, rich) come with the ``cli`` extra, not with
the bare package (what Lambda runs): installed without it, the script says in one line which extra to install
instead of dying with ``ModuleNotFoundError: typer``."""

from __future__ import annotations

import gc
import sys

# The young generation's collection threshold for the whole command (CPython's is 700): importing a command's
# modules makes hundreds of thousands of objects that all live to the end, and each collection walks the ones still
# alive (a tenth of a read command's CPU on the demo store). A collection still runs every YOUNG_THRESHOLD
# allocations, so cyclic garbage is still freed; the same figure as the use cases' own (chipwise.pipeline._gc).
YOUNG_THRESHOLD = 20_000
CLI_EXTRA_HINT = "chipwise: the command line needs its extra: pip install 'chipwise[cli]'"
CLI_PACKAGES = frozenset({"typer", "rich", "click", "shellingham"})


def run() -> None:
    """Run the command line, or say which extra to install (exit 1) when its packages are missing."""
    young, *older = gc.get_threshold()
    gc.set_threshold(max(young, YOUNG_THRESHOLD), *older)
    try:
        from chipwise.cli import run as run_cli
    except ModuleNotFoundError as exc:
        if (exc.name or "").split(".", 1)[0] not in CLI_PACKAGES:
            raise
        sys.stderr.write(CLI_EXTRA_HINT + "\n")
        sys.exit(1)
    run_cli()
