"""One `chipwise demo` run shared by the demo's end-to-end test modules: the demo takes most of a minute, and every
module reads its artifacts and store without changing them (a test that writes copies the store first).

Under xdist (`make test` runs `-n 2 --dist loadfile`) the modules can land on different workers; the first worker
to ask runs the demo into the run's shared temporary folder while holding a lock, and the others wait for it and
read the same artifacts, so the demo runs once per test run rather than once per worker."""

from __future__ import annotations

import fcntl
import subprocess
import sys
from pathlib import Path

import pytest

CHIPWISE = Path(sys.executable).with_name("chipwise")


def _run_demo(out: Path) -> None:
    env = {"PATH": "/usr/bin:/bin", "HOME": str(out.parent), "CHIPWISE_DATABASE_URL": f"sqlite:///{out.parent}/x.db"}
    result = subprocess.run(
        [str(CHIPWISE), "demo", "-o", str(out)], capture_output=True, text=True, timeout=600, env=env, check=False
    )
    (out.parent / "demo.log").write_text(result.stdout[-3000:] + result.stderr[-3000:], encoding="utf-8")
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    (out.parent / "done").touch()


@pytest.fixture(scope="session")
def demo_artifacts(tmp_path_factory: pytest.TempPathFactory, worker_id: str) -> Path:
    """The folder `chipwise demo -o` wrote (its store is ``chipwise-demo.db`` inside)."""
    if worker_id == "main":  # no xdist: this process is the only one
        folder = tmp_path_factory.mktemp("demo")
        _run_demo(folder / "artifacts")
        return folder / "artifacts"
    folder = tmp_path_factory.getbasetemp().parent / "demo"  # shared by the run's workers
    folder.mkdir(exist_ok=True)
    with (folder / "lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # held while the first worker runs the demo
        try:
            if not (folder / "done").exists():
                if (folder / "demo.log").exists():  # the worker before failed: fail the same way, not silently
                    pytest.fail("chipwise demo failed on another worker:\n" + (folder / "demo.log").read_text())
                _run_demo(folder / "artifacts")
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)
    return folder / "artifacts"
