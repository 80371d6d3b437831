"""Cold imports of each Lambda handler from the built layer, and the layer's size.

The layer is built with ``make build-ChipwiseLayer`` twice: for this machine's architecture (to import it) and for
the template's arm64 (the deployed artifact, whose unzipped size is reported against the 80 MB budget). Each
figure is the median of RUNS fresh interpreters (``python -I -S``: no site-packages, ``sys.path`` = the function's
folder and the layer's ``python/`` only, as on Lambda) timing ``import app``. The function folders are
functions/<name>/ (``sam build`` copies them as they are). Baselines in the same runs:

- Powertools + boto3: ``import boto3; from aws_lambda_powertools import Logger, Metrics, Tracer`` (the goal is a
  handler within 2x of it);
- the store floor: that plus pydantic, SQLAlchemy's ORM and its PostgreSQL and SQLite dialects, which every
  handler that touches the database imports before any Chipwise code;
- each handler's own floor (issue 22: the goal is a handler within 1.3x of it): every module outside ``chipwise``
  that ``import app`` loads (its third-party dependencies and the standard library modules they and Chipwise
  need), imported alone in a fresh interpreter. What the handler takes above it is Chipwise's own import work.
  Each run times the floor and the handler back to back, so the machine's load weighs on both alike.
"""

from __future__ import annotations

import os
import platform
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from benchmarks.harness import BenchResult

ROOT = Path(__file__).resolve().parent.parent
RUNS = 9
FLOOR_GOAL = 1.3  # a handler's cold import at most 1.3x its dependencies' (issue 22)
POWERTOOLS_BOTO3 = "import boto3; from aws_lambda_powertools import Logger, Metrics, Tracer"
STORE_FLOOR = (
    POWERTOOLS_BOTO3 + "; import pydantic, sqlalchemy.orm, sqlalchemy.dialects.postgresql, sqlalchemy.dialects.sqlite"
)
_TIMER = """
import sys, time
sys.path[:0] = sys.argv[1:]
started = time.perf_counter()
{statement}
print(time.perf_counter() - started)
"""


# Libraries only some paths of a handler use (templates, outgoing HTTP, migrations, the terminal): not part of any
# handler's floor, so a handler that imports one eagerly pays for it in its ratio.
PATH_ONLY = ("jinja2", "markupsafe", "httpx", "httpcore", "h11", "anyio", "sniffio", "alembic", "mako", "rich", "click")
# The modules ``import app`` loads beyond a bare interpreter's, minus chipwise's own, the handler module and the
# path-only libraries.
_LOADED = """
import sys
sys.path[:0] = sys.argv[2:]
skip = set(sys.argv[1].split(",")) | {"chipwise"}
before = set(sys.modules)
import app
for name in list(sys.modules):
    if name not in before and name != "app" and name.split(".")[0] not in skip:
        print(name)
"""
# Import those alone (in the order the handler loaded them): the handler's floor.
_FLOOR = """
import importlib
for name in {names!r}:
    try:
        importlib.import_module(name)
    except Exception:  # a module only its parent can import (a lazy attribute, a platform shim): its parent counts
        pass
"""


def host_arch() -> str:
    return "arm64" if platform.machine().lower() in ("aarch64", "arm64") else "x86_64"


def build_layer(arch: str, artifacts: Path) -> Path:
    """``make build-ChipwiseLayer`` for ``arch`` into ``artifacts``; returns the layer's ``python/``."""
    env = {**os.environ, "ARTIFACTS_DIR": str(artifacts), "LAYER_ARCH": arch}
    subprocess.run(
        ["make", "--no-print-directory", "build-ChipwiseLayer"], cwd=ROOT, env=env, check=True, capture_output=True
    )
    return artifacts / "python"


def layer_size(python_dir: Path) -> tuple[int, int]:
    """Unzipped bytes and file count."""
    files = [p for p in python_dir.rglob("*") if p.is_file()]
    return sum(p.stat().st_size for p in files), len(files)


def cold_import(statement: str, paths: list[Path], runs: int = RUNS) -> float:
    """Median seconds of ``statement`` in ``runs`` fresh isolated interpreters seeing only ``paths``."""
    code = _TIMER.format(statement=statement)
    env = {"PATH": os.environ.get("PATH", ""), "AWS_DEFAULT_REGION": "us-east-1"}
    times = []
    for _ in range(runs):
        done = subprocess.run(
            [sys.executable, "-I", "-S", "-c", code, *map(str, paths)],
            env=env,
            check=True,
            capture_output=True,
            text=True,
        )
        times.append(float(done.stdout.strip().splitlines()[-1]))
    return statistics.median(times)


def dependencies_of(function: Path, host: Path) -> list[str]:
    """Every module outside chipwise that ``import app`` loads for ``function``, in load order."""
    env = {"PATH": os.environ.get("PATH", ""), "AWS_DEFAULT_REGION": "us-east-1"}
    done = subprocess.run(
        [sys.executable, "-I", "-S", "-c", _LOADED, ",".join(PATH_ONLY), str(function), str(host)],
        env=env,
        check=True,
        capture_output=True,
        text=True,
    )
    return done.stdout.split()


def handler_and_floor(function: Path, host: Path, runs: int = RUNS) -> tuple[float, float]:
    """Median seconds of ``import app`` and of its floor, each run timing both back to back."""
    floor_statement = _FLOOR.format(names=dependencies_of(function, host))
    handler, floor = [], []
    for _ in range(runs):
        floor.append(cold_import(floor_statement, [host], runs=1))
        handler.append(cold_import("import app", [function, host], runs=1))
    return statistics.median(handler), statistics.median(floor)


def run() -> list[BenchResult]:
    functions = sorted(p.parent for p in (ROOT / "functions").glob("*/app.py"))
    results: list[BenchResult] = []
    with tempfile.TemporaryDirectory() as tmp:
        host = build_layer(host_arch(), Path(tmp) / "host")
        deployed = host if host_arch() == "arm64" else build_layer("arm64", Path(tmp) / "arm64")
        size, count = layer_size(deployed)
        results.append(
            BenchResult("layer (arm64, unzipped)", {"MB": round(size / 1e6, 1), "files": count, "budget_MB": 80})
        )
        base = cold_import(POWERTOOLS_BOTO3, [host])
        floor = cold_import(STORE_FLOOR, [host])
        results.append(BenchResult("cold import: Powertools + boto3", {"median_s": round(base, 3), "runs": RUNS}))
        results.append(
            BenchResult(
                "cold import: store floor",
                {"median_s": round(floor, 3)},
                baseline="Powertools + boto3",
                ratio=floor / base,
            )
        )
        for function in functions:
            seconds, own_floor = handler_and_floor(function, host)
            results.append(
                BenchResult(
                    f"cold import: {function.name}",
                    {
                        "median_s": round(seconds, 3),
                        "its_floor_s": round(own_floor, 3),
                        "vs_powertools_boto3": round(seconds / base, 2),
                        "vs_store_floor": round(seconds / floor, 2),
                    },
                    baseline="its dependencies alone",
                    ratio=seconds / own_floor,
                    goal=FLOOR_GOAL,
                )
            )
    return results
