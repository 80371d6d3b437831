"""The browser tests' Chromium: found, not downloaded.

Looked for in order: ``CHIPWISE_CHROMIUM`` (an explicit path), Debian's ``/usr/bin/chromium``, then ``chromium``,
``chromium-browser`` or ``google-chrome`` on PATH. Without one the browser tests skip with the reason and how to
install it, except where ``CHIPWISE_REQUIRE_BROWSER=1`` (``.ci/run`` sets it): there a missing browser fails.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

DEBIAN_CHROMIUM = "/usr/bin/chromium"
ON_PATH = ("chromium", "chromium-browser", "google-chrome")
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
HOW = "run `make browser` (Debian, as root) or install Chromium and set CHIPWISE_CHROMIUM=/path/to/chromium"


def find_chromium() -> str | None:
    """The Chromium to drive, or None."""
    explicit = os.environ.get("CHIPWISE_CHROMIUM")
    if explicit:
        return explicit if Path(explicit).is_file() else None
    if Path(DEBIAN_CHROMIUM).is_file():
        return DEBIAN_CHROMIUM
    for name in ON_PATH:
        found = shutil.which(name)
        if found:
            return found
    return None


def require_chromium() -> str:
    """The Chromium path; skips the test (fails it under CHIPWISE_REQUIRE_BROWSER=1) when there is none."""
    found = find_chromium()
    if found is not None:
        return found
    explicit = os.environ.get("CHIPWISE_CHROMIUM")
    reason = f"CHIPWISE_CHROMIUM={explicit} is not a file" if explicit else "no Chromium found"
    if os.environ.get("CHIPWISE_REQUIRE_BROWSER") == "1":
        pytest.fail(f"{reason} and CHIPWISE_REQUIRE_BROWSER=1: {HOW}")
    pytest.skip(f"{reason}: {HOW}")


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    """Headless Chromium through Playwright (no Playwright browser download)."""
    executable = require_chromium()
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=executable, args=CHROMIUM_ARGS)
        yield launched
        launched.close()
