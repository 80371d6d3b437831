"""The HTML scan report in headless Chromium: no horizontal overflow at desktop and phone widths, charts drawn,
no script, nothing fetched (the page makes no request besides itself)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from chipwise.report.build import build_report, find_scan, write_report
from chipwise.store.engine import get_engine
from chipwise.store.session import get_session_factory

pytestmark = pytest.mark.browser

NOW = datetime(2026, 11, 20, 6, tzinfo=UTC)  # TWO_SCANS_NOW in tests/conftest.py: the scans the store holds


@pytest.fixture
def report_file(scan_demo_twice: Callable[[str], None], built_stores: Any, tmp_path: Path) -> Iterator[Path]:
    """The report of two scans of the demo account, a day apart: the store is the one the report's integration
    tests use (``built_stores``' "two_scans", built once per test process), each width's test given its own copy."""
    url = built_stores.copy("two_scans", "sqlite", scan_demo_twice, into=tmp_path)
    with get_session_factory(url)() as session:
        view = build_report(session, find_scan(session), now=NOW + timedelta(days=1, hours=1))
    yield write_report(view, tmp_path)
    get_engine(url).dispose()


@pytest.mark.parametrize("width", [1280, 390])
def test_the_report_fits_and_fetches_nothing(browser: Any, report_file: Path, width: int) -> None:
    context = browser.new_context(viewport={"width": width, "height": 900}, java_script_enabled=True)
    page = context.new_page()
    requests: list[str] = []
    page.on("request", lambda request: requests.append(request.url))
    page.goto(report_file.as_uri())
    # No horizontal overflow: the page is no wider than the window, and no element sticks out of it
    scroll_width = page.evaluate("document.documentElement.scrollWidth")
    assert scroll_width <= width, f"page is {scroll_width}px wide at {width}px"
    wide = page.evaluate(
        "[...document.querySelectorAll('body *')].filter(e => e.getBoundingClientRect().right > window.innerWidth + 1)"
        ".map(e => e.tagName + (e.id ? '#' + e.id : ''))"
    )
    assert wide == []
    # The charts are drawn: the rule bars, the trend, at least one heat-map, each with a size on screen
    svgs = page.locator("svg")
    assert svgs.count() >= 3
    for index in range(svgs.count()):
        box = svgs.nth(index).bounding_box()
        assert box is not None and 0 < box["width"] <= width
    assert page.locator("section#trend polyline").count() >= 1
    assert page.locator("article.finding").count() >= 1
    assert page.locator("[data-figure=total]").inner_text().startswith("$")
    # No script, and the only request was the file itself
    assert page.locator("script").count() == 0
    assert requests == [report_file.as_uri()]
    context.close()
