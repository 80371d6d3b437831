"""One `chipwise demo` run shared by the demo's end-to-end test modules (per test process): the demo takes most
of a minute, and every module reads its artifacts and store without changing them (a test that writes copies the
store first)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

CHIPWISE = Path(sys.executable).with_name("chipwise")


@pytest.fixture(scope="session")
def demo_artifacts(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The folder `chipwise demo -o` wrote (its store is ``chipwise-demo.db`` inside)."""
    out = tmp_path_factory.mktemp("demo") / "artifacts"
    env = {"PATH": "/usr/bin:/bin", "HOME": str(out.parent), "CHIPWISE_DATABASE_URL": f"sqlite:///{out.parent}/x.db"}
    result = subprocess.run(
        [str(CHIPWISE), "demo", "-o", str(out)], capture_output=True, text=True, timeout=600, env=env, check=False
    )
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    return out
