"""The product wheel carries no development machinery: no emulator, no demo, nothing that imports moto."""

from __future__ import annotations

import ast
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DEV_ONLY = ("moto", "werkzeug", "flask", "chipwise_devkit")


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("wheel")
    source = tmp_path_factory.mktemp("source")  # a clean copy: a stale build/ in the checkout must not leak in
    shutil.copy(ROOT / "pyproject.toml", source)
    shutil.copy(ROOT / "README.md", source)
    shutil.copytree(ROOT / "shared", source / "shared", ignore=shutil.ignore_patterns("__pycache__", "*.egg-info"))
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(out), str(source)],
        check=True,
        capture_output=True,
        timeout=300,
    )
    (found,) = out.glob("chipwise-*.whl")
    return found


def _imports(source: str) -> set[str]:
    names: set[str] = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            names.add(node.module)
    return names


def test_no_module_of_the_product_imports_development_tools(wheel: Path) -> None:
    offenders: dict[str, list[str]] = {}
    with zipfile.ZipFile(wheel) as archive:
        modules = [n for n in archive.namelist() if n.endswith(".py")]
        assert "chipwise/pipeline/scan.py" in modules  # the wheel really holds the product
        for name in modules:
            bad = [m for m in _imports(archive.read(name).decode()) if m.split(".")[0] in DEV_ONLY]
            if bad:
                offenders[name] = bad
    assert offenders == {}


def test_the_emulator_demo_and_fakes_are_not_in_the_product(wheel: Path) -> None:
    with zipfile.ZipFile(wheel) as archive:
        names = archive.namelist()
    assert not [n for n in names if n.startswith(("chipwise_devkit/", "chipwise/emulator/", "chipwise/demo/"))]
    assert not [
        n for n in names if "webhook_sink" in n or "ground_truth" in n or n.startswith("chipwise/plan/samples/")
    ]
    assert any(n.startswith("chipwise/store/migrations/versions/") for n in names)
