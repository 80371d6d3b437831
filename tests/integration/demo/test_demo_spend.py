"""The demo's spend, end to end through `chipwise demo` (issue 35, items 1-3): one spend figure on every surface
(the bill's), `findings evaluate` on an unchanged store reproduces the scan's findings byte for byte, and every
point of the trend is the same measure with its basis named."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

CHIPWISE = Path(sys.executable).with_name("chipwise")

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("demo") / "artifacts"
    env = {"PATH": "/usr/bin:/bin", "HOME": str(out.parent), "CHIPWISE_DATABASE_URL": f"sqlite:///{out.parent}/x.db"}
    result = subprocess.run(
        [str(CHIPWISE), "demo", "-o", str(out)], capture_output=True, text=True, timeout=600, env=env, check=False
    )
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    (out / "stdout.txt").write_text(result.stdout)
    return out


def _chipwise(database: Path, *args: str) -> str:
    env = {"PATH": "/usr/bin:/bin", "HOME": str(database.parent), "CHIPWISE_DATABASE_URL": f"sqlite:///{database}"}
    result = subprocess.run([str(CHIPWISE), *args], capture_output=True, text=True, env=env, timeout=300, check=False)
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-2000:]
    return result.stdout


def test_findings_evaluate_on_a_copy_of_the_store_reproduces_the_csv_byte_for_byte(demo: Path, tmp_path: Path) -> None:
    copy = tmp_path / "copy.db"
    shutil.copyfile(demo / "chipwise-demo.db", copy)
    before = _chipwise(copy, "findings", "--format", "csv")
    before_json = _chipwise(copy, "findings", "--format", "json")
    _chipwise(copy, "findings", "evaluate")
    assert _chipwise(copy, "findings", "--format", "csv") == before
    assert _chipwise(copy, "findings", "--format", "json") == before_json
    assert len(before.splitlines()) > 20  # the demo's findings, not an empty list twice


def _money(text: str) -> set[str]:
    return set(re.findall(r"\$[\d,]+(?:\.\d\d)?", text))
