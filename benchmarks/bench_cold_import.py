"""Cold imports of each Lambda handler from the built layer, and the layer's size.

The layer is built with ``make build-ChipwiseLayer`` twice: for this machine's architecture (to import it) and for
the template's arm64 (the deployed artifact, whose unzipped size is reported against the 80 MB budget). Each
figure is the median of RUNS fresh interpreters (``python -I -S``: no site-packages, ``sys.path`` = the function's
folder and the layer's ``python/`` only, as on Lambda) timing ``import app``. The function folders are
functions/<name>/ (``sam build`` copies them as they are). Baselines in the same runs:

- Powertools + boto3: ``import boto3; from aws_lambda_powertools import Logger, Metrics, Tracer`` (the goal is a
  handler within 2x of it);
- the store floor: that plus pydantic, SQLAlchemy's ORM and its PostgreSQL and SQLite dialects, which every
  handler that touches the database imports before any Chipwise code.
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
            seconds = cold_import("import app", [function, host])
            results.append(
                BenchResult(
                    f"cold import: {function.name}",
                    {"median_s": round(seconds, 3), "vs_store_floor": round(seconds / floor, 2)},
                    baseline="Powertools + boto3",
                    ratio=seconds / base,
                )
            )
    return results
