"""Runs the demo stages in order and writes the summary."""

from __future__ import annotations

import importlib
import os
import pkgutil
import shutil
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rich.console import Console

from chipwise.aws import base_session
from chipwise.settings import get_settings
from chipwise.store.session import get_engine, get_session_factory, upgrade

DEMO_ACCOUNT_ID = "123456789012"
DEMO_REGION = "us-east-1"


@dataclass
class DemoContext:
    """What the stages share: where to write, the store, the emulator and each stage's results."""

    out_dir: Path
    database_url: str
    emulator: Any  # chipwise_devkit.emulator.Emulator (the demo extra); typed loosely to keep moto optional
    console: Console
    account_id: str = DEMO_ACCOUNT_ID
    region: str = DEMO_REGION
    results: dict[str, Any] = field(default_factory=dict)
    summary: list[tuple[str, str]] = field(default_factory=list)
    artifacts: list[Path] = field(default_factory=list)

    def write(self, relative: str, content: str) -> Path:
        """Write an artifact under the output folder and remember it."""
        path = self.out_dir / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(content, encoding="utf-8")
        self.artifacts.append(path)
        return path


@dataclass(frozen=True)
class Stage:
    title: str
    run: Callable[[DemoContext], None]


def discover_stages() -> list[Stage]:
    from chipwise_devkit.demo import stages

    found: list[Stage] = []
    for module in sorted(pkgutil.iter_modules(stages.__path__), key=lambda m: m.name):
        if module.name.startswith("_"):
            continue
        stage = getattr(importlib.import_module(f"{stages.__name__}.{module.name}"), "STAGE", None)
        if isinstance(stage, Stage):
            found.append(stage)
    return found


@contextmanager
def _demo_environment(env: dict[str, str], database_url: str) -> Iterator[None]:
    saved = {key: os.environ.get(key) for key in [*env, "CHIPWISE_DATABASE_URL"]}
    os.environ.update(env)
    os.environ["CHIPWISE_DATABASE_URL"] = database_url
    base_session.cache_clear()
    get_settings.cache_clear()
    try:
        yield
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value
        base_session.cache_clear()
        get_settings.cache_clear()


def run_demo(out_dir: Path, console: Console) -> DemoContext:
    """Start the emulator, run every stage, write ``summary.md``; returns the context for inspection."""
    from chipwise_devkit.emulator import Emulator  # the demo extra; production never imports it

    if out_dir.exists():
        shutil.rmtree(out_dir)
    out_dir.mkdir(parents=True)
    database_url = f"sqlite:///{(out_dir / 'chipwise-demo.db').resolve()}"
    with Emulator() as emulator, _demo_environment(emulator.env(DEMO_REGION), database_url):
        upgrade(database_url)
        ctx = DemoContext(out_dir=out_dir, database_url=database_url, emulator=emulator, console=console)
        for stage in discover_stages():
            started = time.perf_counter()
            with console.status(f"{stage.title}…"):
                stage.run(ctx)
            console.print(f"[green]✓[/] {stage.title} [dim]({time.perf_counter() - started:.1f}s)[/]")
        get_engine(database_url).dispose()
        get_engine.cache_clear()
        get_session_factory.cache_clear()
    lines = ["# Chipwise demo", "", *(f"- **{k}**: {v}" for k, v in ctx.summary), ""]
    lines += ctx.results.get("summary_sections", [])  # the demo's own checks (its ground truth), never the report
    ctx.write("summary.md", "\n".join(lines))
    return ctx
