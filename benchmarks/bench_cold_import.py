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

The command line's start (issue 37), first and without the layer (``python -m benchmarks cold-import``): CPU time
(user + system, from ``wait4``) of whole processes running what the installed ``chipwise`` script runs
(``chipwise.console:run``, its exit included), the best of CLI_RUNS, each run timing the baseline and the
command back to back, with bytecode cached (one warm-up run first; ``PYTHONDONTWRITEBYTECODE`` is dropped, as an
installed package has its bytecode):

- ``chipwise --help`` against ``python -c "import typer"`` (goal ≤ 1.5);
- each read command on a copy of the demo's store (``chipwise-demo/chipwise-demo.db``; ``chipwise demo`` is run
  first when it is missing) against its own floor: every module outside ``chipwise`` that the command loads (its
  third-party dependencies, the modules they load while it runs, and the standard library modules Chipwise needs),
  imported alone in a fresh interpreter in the order the command loaded them (goal ≤ 1.5). What a command takes
  above it is Chipwise's own modules and its own work (queries, ranking, rendering). The console script ends
  without the interpreter's teardown (``chipwise.cli.finish``) while the floor's plain process pays it, so each
  row also gives the floor ended the same way (``os._exit`` after its imports) and the command's ratio to that:
  Chipwise's own cost on top of the same imports, exits alike (no goal: the issue's floor is the plain import).
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
CLI_RUNS = 7
CLI_GOAL = 1.5  # issue 37: --help within 1.5x of importing typer; a read command within 1.5x of its floor
DEMO_ACCOUNT = "123456789012"
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

# The floor ended as the console script ends (chipwise.cli.finish: no interpreter teardown): the goal's floor is a
# plain process importing the modules, which pays the teardown the command skips; this one does not, so the
# command's ratio to it is what Chipwise's own modules and work cost on top of the same imports, exit alike.
_QUICK_EXIT = "\nimport os, sys\nsys.stdout.flush()\nos._exit(0)\n"


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


# --- the command line ------------------------------------------------------------------------------------------

# What the installed ``chipwise`` script runs (its entry point, chipwise.console:run), with the arguments after -c.
_CLI = "from chipwise.console import run\nrun()\n"
# The modules a command loads beyond a bare interpreter's, in load order, minus chipwise's own (printed on stderr,
# the command's own output going to stdout).
_CLI_LOADED = """
import sys
before = set(sys.modules)
from chipwise.cli import main
try:
    main(sys.argv[1:])
finally:
    loaded = [n for n in sys.modules if n not in before and n.split(".")[0] not in ("chipwise", "chipwise_devkit")]
    print(repr(loaded), file=sys.stderr)
"""


def read_commands(out: Path) -> dict[str, list[str]]:
    """The read commands of issue 37 on the demo's store, by name."""
    return {
        "findings": ["findings"],
        "findings --json": ["findings", "--json"],
        "resources": ["resources"],
        "findings realised": ["findings", "realised"],
        "report": ["report", "-o", str(out / "report")],
        "notify --dry-run": ["notify", "--dry-run"],
        "bill show": ["bill", "show"],
        "drafts ACCOUNT": ["drafts", DEMO_ACCOUNT, "-o", str(out / "drafts")],
    }


def _cli_env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE" and not k.startswith("CHIPWISE_")}
    return {**env, "COLUMNS": "160", "CHIPWISE_EMAIL_RECIPIENTS": "finops@example.com", **extra}


def process_cpu(argv: list[str], env: dict[str, str], cwd: Path) -> float:
    """CPU seconds (user + system) of one process, which must succeed."""
    with tempfile.TemporaryFile() as errors:
        process = subprocess.Popen(argv, env=env, cwd=cwd, stdout=subprocess.DEVNULL, stderr=errors)
        _, status, usage = os.wait4(process.pid, 0)
        if os.waitstatus_to_exitcode(status) != 0:
            errors.seek(0)
            raise RuntimeError(f"{' '.join(argv[3:])} failed: {errors.read().decode().strip()[-300:]}")
    return usage.ru_utime + usage.ru_stime


def best_of(argvs: list[list[str]], env: dict[str, str], cwd: Path) -> list[float]:
    """The best CPU of each process over CLI_RUNS runs, each run timing them all back to back (one warm-up first:
    bytecode written, files cached)."""
    for argv in argvs:
        process_cpu(argv, env, cwd)
    runs = [[process_cpu(argv, env, cwd) for argv in argvs] for _ in range(CLI_RUNS)]
    return [min(run[i] for run in runs) for i in range(len(argvs))]


def command_floor(args: list[str], env: dict[str, str], cwd: Path) -> list[str]:
    """Every module outside chipwise that ``chipwise ARGS`` loads, in load order."""
    done = subprocess.run(
        [sys.executable, "-c", _CLI_LOADED, *args], env=env, cwd=cwd, capture_output=True, text=True, check=False
    )
    names: list[str] = eval(done.stderr.strip().splitlines()[-1])
    return names


def demo_store(tmp: Path) -> Path:
    """A copy of the demo's store (the commands write drafts and read-marks into it): ``chipwise demo`` first when
    there is none."""
    store = ROOT / "chipwise-demo" / "chipwise-demo.db"
    if not store.is_file():
        subprocess.run([sys.executable, "-c", _CLI, "demo"], cwd=ROOT, env=_cli_env(), check=True, capture_output=True)
    copy = tmp / "demo.db"
    copy.write_bytes(store.read_bytes())
    return copy


def cli_start(tmp: Path) -> list[BenchResult]:
    """``chipwise --help`` against importing typer, and each read command on the demo store against its floor."""
    env = _cli_env()
    helped, typer_cpu, quick_typer_cpu = best_of(
        [
            [sys.executable, "-c", _CLI, "--help"],
            [sys.executable, "-c", "import typer"],
            [sys.executable, "-c", "import typer" + _QUICK_EXIT],
        ],
        env,
        tmp,
    )
    results = [
        BenchResult(
            "chipwise --help",
            {
                "cpu_s": round(helped, 3),
                "import_typer_cpu_s": round(typer_cpu, 3),
                "runs": CLI_RUNS,
                "import_typer_ended_as_the_command_s": round(quick_typer_cpu, 3),
                "ratio_to_that": round(helped / quick_typer_cpu, 2),
            },
            baseline="import typer",
            ratio=helped / typer_cpu,
            goal=CLI_GOAL,
        )
    ]
    demo_env = _cli_env(CHIPWISE_DATABASE_URL=f"sqlite:///{demo_store(tmp)}")
    for name, args in read_commands(tmp / "out").items():
        floor = command_floor(args, demo_env, tmp)
        statement = _FLOOR.format(names=floor)
        cpu, floor_cpu, quick_floor_cpu = best_of(
            [
                [sys.executable, "-c", _CLI, *args],
                [sys.executable, "-c", statement],
                [sys.executable, "-c", statement + _QUICK_EXIT],
            ],
            demo_env,
            tmp,
        )
        results.append(
            BenchResult(
                f"chipwise {name} (demo store)",
                {
                    "cpu_s": round(cpu, 3),
                    "its_floor_s": round(floor_cpu, 3),
                    "floor_modules": len(floor),
                    "its_floor_ended_as_the_command_s": round(quick_floor_cpu, 3),
                    "ratio_to_that": round(cpu / quick_floor_cpu, 2),
                },
                baseline="its dependencies alone",
                ratio=cpu / floor_cpu,
                goal=CLI_GOAL,
            )
        )
    return results


def run() -> list[BenchResult]:
    results: list[BenchResult] = []
    with tempfile.TemporaryDirectory() as tmp:
        results += cli_start(Path(tmp))
    functions = sorted(p.parent for p in (ROOT / "functions").glob("*/app.py"))
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
