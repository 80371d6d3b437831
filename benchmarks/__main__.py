"""`python -m benchmarks [NAME...]`: run the benchmark modules and print their figures (a NAME matches a module's
name, ``-`` for ``_``: ``bill-scale`` runs ``bench_bill_scale``)."""

from __future__ import annotations

import importlib
import json
import pkgutil
import sys
import time
from datetime import UTC, datetime
from pathlib import Path

from rich.console import Console
from rich.table import Table

from benchmarks.harness import BenchResult
from benchmarks.page import ModuleRun, load_average, render, run_info

PAGE = Path("docs/performance-run.md")  # the README's Performance page of a whole run


def main(selected: list[str]) -> int:
    console = Console(width=None if sys.stdout.isatty() else 160)  # piped (make bench | tee): wide enough to read
    here = Path(__file__).parent
    started = datetime.now(UTC)
    runs: list[ModuleRun] = []
    results: list[BenchResult] = []
    for module in sorted(pkgutil.iter_modules([str(here)]), key=lambda m: m.name):
        if not module.name.startswith("bench_"):
            continue
        if selected and not any(s.replace("-", "_") in module.name for s in selected):
            continue
        console.print(f"[bold]{module.name}[/]")
        run = ModuleRun(module.name, datetime.now(UTC), 0.0, load_average(), 0.0)
        wall = time.perf_counter()
        mod = importlib.import_module(f"benchmarks.{module.name}")
        run.results = mod.run()
        run.wall_seconds, run.load_end = time.perf_counter() - wall, load_average()
        runs.append(run)
        results.extend(run.results)
    if not results:
        names = sorted(m.name for m in pkgutil.iter_modules([str(here)]) if m.name.startswith("bench_"))
        console.print(f"no benchmark matches {' '.join(selected)}; there are: {', '.join(names)}")
        return 2
    table = Table("benchmark", "figures", "ratio to baseline", show_lines=True)
    for r in results:
        ratio = f"{r.ratio:.2f}× {r.baseline}" if r.ratio is not None else ""
        figures = "\n".join(f"{key} = {value}" for key, value in r.figures.items())
        table.add_row(r.name, figures, ratio)
    console.print(table)
    goals = [r for r in results if r.goal is not None and r.ratio is not None]
    if goals:
        summary = Table("ratio with a goal (this run)", "ratio", "goal", "met", title="goals", title_justify="left")
        for r in goals:
            assert r.ratio is not None and r.goal is not None
            met = "[green]yes[/]" if r.ratio <= r.goal else "[red]no[/]"
            summary.add_row(f"{r.name} / {r.baseline}", f"{r.ratio:.2f}", f"≤ {r.goal:g}", met)
        console.print(summary)
    Path("benchmarks/last-run.json").write_text(json.dumps([r.__dict__ for r in results], default=str, indent=2))
    page = render(runs, run_info(started))
    Path("benchmarks/last-run.md").write_text(page)
    if not selected:
        PAGE.write_text(page)
        console.print(f"every module ran: the page is {PAGE}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
