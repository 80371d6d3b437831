"""The Performance page of one `make bench` run: every goal with this run's ratio, then every figure.

`python -m benchmarks` writes it to ``benchmarks/last-run.md`` after every run and, when every module ran (no
name given: `make bench`), to ``docs/performance-run.md`` as well, the page the README links, so the goals shown
there are always one run's, on one machine, at the load printed beside each module.
"""

from __future__ import annotations

import os
import platform
import subprocess
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime

from benchmarks.harness import BenchResult


@dataclass
class ModuleRun:
    """One benchmark module's run: its wall time and the load average (1 minute) as it started and ended."""

    name: str
    started: datetime
    wall_seconds: float
    load_start: float
    load_end: float
    results: list[BenchResult] = field(default_factory=list)


@dataclass
class RunInfo:
    started: datetime
    finished: datetime
    commit: str
    cores: int
    python: str


def run_info(started: datetime) -> RunInfo:
    """Where and when the run happened (the commit is ``git describe`` of the working tree, ``-dirty`` included)."""
    try:
        commit = subprocess.run(
            ["git", "describe", "--always", "--dirty"], capture_output=True, text=True, check=True, timeout=10
        ).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        commit = "unknown (not a git checkout)"
    return RunInfo(started, datetime.now(UTC), commit, os.cpu_count() or 0, platform.python_version())


def load_average() -> float:
    return os.getloadavg()[0]


def _cell(value: object) -> str:
    return str(value).replace("|", "\\|").replace("\n", " ")


def _ratio(result: BenchResult) -> str:
    return f"{result.ratio:.2f}" if result.ratio is not None else ""


def render(modules: Sequence[ModuleRun], info: RunInfo) -> str:
    """The page: the run's header, the goals (met or not, none left out), then each module's figures."""
    minutes = (info.finished - info.started).total_seconds() / 60
    goals = [(m, r) for m in modules for r in m.results if r.goal is not None and r.ratio is not None]
    met = sum(1 for _, r in goals if r.ratio is not None and r.goal is not None and r.ratio <= r.goal)
    lines = [
        "# Performance: one `make bench` run",
        "",
        "Written by `make bench` (`benchmarks/page.py`): every figure below comes from the one run described here;",
        "nothing is copied from another run. Ratios are CPU against a baseline measured in the same run, or a",
        "measure against its bound (at most 1.0 where the goal is a bound). [Performance](performance.md) says what",
        "each benchmark measures; [at an organisation's size](performance-org.md) describes the organisation's store.",
        "",
        f"- Run: {info.started:%Y-%m-%d %H:%M}–{info.finished:%H:%M} UTC ({minutes:.0f} min), commit `{info.commit}`,",
        f"  {info.cores} cores, Python {info.python}.",
        f"- Goals met: **{met} of {len(goals)}**.",
        "",
        "## Goals",
        "",
        "| module | ratio with a goal | baseline | ratio | goal | met |",
        "| --- | --- | --- | --- | --- | --- |",
    ]
    for module, r in goals:
        assert r.ratio is not None and r.goal is not None
        lines.append(
            f"| {module.name} | {_cell(r.name)} | {_cell(r.baseline or '')} | {r.ratio:.2f} | ≤ {r.goal:g} | "
            f"{'yes' if r.ratio <= r.goal else '**no**'} |"
        )
    lines += ["", "## Modules", "", "| module | started (UTC) | wall | load average (1 min) at start, end |"]
    lines.append("| --- | --- | --- | --- |")
    for m in modules:
        lines.append(
            f"| {m.name} | {m.started:%H:%M} | {m.wall_seconds / 60:.1f} min | {m.load_start:.1f}, {m.load_end:.1f} |"
        )
    for m in modules:
        lines += ["", f"## {m.name}", "", "| benchmark | figures | ratio to baseline |", "| --- | --- | --- |"]
        for r in m.results:
            figures = "<br>".join(f"{_cell(k)} = {_cell(v)}" for k, v in r.figures.items())
            ratio = f"{_ratio(r)}× {_cell(r.baseline)}" if r.ratio is not None else ""
            lines.append(f"| {_cell(r.name)} | {figures} | {ratio} |")
    return "\n".join(lines) + "\n"
