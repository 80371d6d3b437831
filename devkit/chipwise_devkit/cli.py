"""``chipwise demo``: the pipeline end to end on the embedded emulator (registered through the ``chipwise.cli``
entry point of this development kit)."""

from __future__ import annotations

import time
from pathlib import Path

import typer

from chipwise.cli.common import err, out


def demo(
    output: Path = typer.Option(Path("chipwise-demo"), "--output", "-o", help="Folder for the demo's artifacts."),
) -> None:
    """Run Chipwise on a seeded demo account (local AWS emulator + SQLite) and write its artifacts."""
    from rich.table import Table

    from chipwise.cli.findings import demo_findings_command
    from chipwise_devkit.demo import run_demo

    started = time.perf_counter()
    ctx = run_demo(output, err)
    table = Table(title="Chipwise demo", show_header=False, title_justify="left")
    for key, value in ctx.summary:
        table.add_row(f"[bold]{key}[/]", value)
    out.print(table)
    out.print(f"artifacts in [bold]{output}/[/] ({len(ctx.artifacts)} files), {time.perf_counter() - started:.0f}s")
    report = next((p for p in ctx.artifacts if p.suffix == ".html" and p.name.startswith("chipwise-report-")), None)
    if report is not None:
        out.print(f"the visual report: {report}", highlight=False, markup=False, soft_wrap=True)
    # the last line: the demo keeps its own store; this is how the CLI reads it
    command = demo_findings_command(output / "chipwise-demo.db")
    out.print(f"the demo's findings from the CLI: {command}", highlight=False, markup=False, soft_wrap=True)


def register(app: typer.Typer) -> None:
    app.command("demo")(demo)
