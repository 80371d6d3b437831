"""The intake integration tests: the Lambda handler loaded from functions/intake/app.py, the unit factories."""

from __future__ import annotations

import importlib.util
import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(ROOT / "tests" / "unit" / "plan"))


def _handler() -> Callable[[dict[str, Any], Any], dict[str, Any]]:
    spec = importlib.util.spec_from_file_location("intake_function_app", ROOT / "functions" / "intake" / "app.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    handler: Callable[[dict[str, Any], Any], dict[str, Any]] = module.handler
    return handler


@pytest.fixture(scope="session")
def intake_handler() -> Callable[[dict[str, Any], Any], dict[str, Any]]:
    return _handler()


@pytest.fixture
def invoke(
    intake_handler: Callable[[dict[str, Any], Any], dict[str, Any]], lambda_context: Any, use_db: str
) -> Callable[[dict[str, Any]], dict[str, Any]]:
    """Call the Lambda handler with an event (a dict) on the test store; returns the API Gateway response."""

    def call(event: dict[str, Any]) -> dict[str, Any]:
        return intake_handler(json.loads(json.dumps(event)), lambda_context)

    return call


PUBLIC_BASE_URL = "https://plans.example"


@pytest.fixture(autouse=True)
def _public_base_url(monkeypatch: pytest.MonkeyPatch) -> None:
    """Links in emails come from this setting only (never from the request's headers)."""
    from chipwise.settings import get_settings

    monkeypatch.setenv("CHIPWISE_PUBLIC_BASE_URL", PUBLIC_BASE_URL)
    get_settings.cache_clear()
