"""Load a Lambda handler module from functions/<name>/app.py (each is a plain file, not a package)."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType

FUNCTIONS = Path(__file__).resolve().parents[3] / "functions"


def load_handler(name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(f"chipwise_lambda_{name}", FUNCTIONS / name / "app.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module
