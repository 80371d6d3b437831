"""``chipwise demo``: the pipeline end to end on the embedded emulator."""

from __future__ import annotations

import time
from pathlib import Path

import typer
from rich.table import Table

from chipwise.cli.common import err, out
from chipwise.errors import ConfigError


def demo(
    output: Path = typer.Option(Path("chipwise-demo"), "--output", "-o", help="Folder for the demo's artifacts."),
) -> None:
    """Run Chipwise on a seeded demo account (local AWS emulator + SQLite) and write its artifacts."""
    try:
        from chipwise.demo import run_demo
    except ImportError as exc:  # moto missing: the demo extra is not installed
        raise ConfigError(f"the demo needs the emulator: pip install 'chipwise[demo]' ({exc})") from exc
    started = time.perf_counter()
    ctx = run_demo(output, err)
    table = Table(title="Chipwise demo", show_header=False, title_justify="left")
    for key, value in ctx.summary:
        table.add_row(f"[bold]{key}[/]", value)
    out.print(table)
    out.print(f"artifacts in [bold]{output}/[/] ({len(ctx.artifacts)} files), {time.perf_counter() - started:.0f}s")


def register(app: typer.Typer) -> None:
    app.command("demo")(demo)
