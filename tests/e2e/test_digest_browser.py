"""The digest email laid out by a real browser engine: no horizontal overflow at 600 px, the chart drawn.

Chromium through Playwright (tests/e2e/conftest.py finds it; no Playwright browser download).
"""

from __future__ import annotations

import sys
from datetime import timedelta
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest

from chipwise.notify.digest import AccountSnapshot, build_alert, build_digest
from chipwise.render import render

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "unit" / "notify"))
from notify_factories import HOSTILE, NOW, line

pytestmark = pytest.mark.browser


def _digest_html() -> str:
    """A realistic digest with a worst case in it: a 200-character unbroken resource name and markup."""
    open_ = [
        line("chat-mistral-g5", "2400.50"),
        line("x" * 200, "1210", rule="trainium_serving_inference", summary=HOSTILE),
        line(HOSTILE, "554.80", rule="inferentia_idle", action="delete", target=None, hours_ago=72),
        *(line(f"endpoint-{i:02d}", str(100 + i), rule=f"rule_{i % 5}_long_name_for_wrapping") for i in range(14)),
    ]
    resolved = [line("old-endpoint", "700", rule="inferentia_idle", status="resolved")]
    snapshot = AccountSnapshot("123456789012", "Acme AI", NOW - timedelta(days=1), open_, resolved, [])
    return render("email/digest.html.j2", digest=build_digest(snapshot, now=NOW))


@pytest.mark.parametrize("width", [600, 375])
def test_digest_fits_and_draws_the_chart(browser: Any, width: int, tmp_path: Path) -> None:
    # Given the rendered digest, opened as a file (no network)
    page_file = tmp_path / "digest.html"
    page_file.write_text(_digest_html(), encoding="utf-8")
    page = browser.new_page(viewport={"width": width, "height": 900})
    page.route("**/*", lambda route: route.abort() if not route.request.url.startswith("file:") else route.continue_())
    # When laid out at the mail client's width
    page.goto(page_file.as_uri())
    # Then nothing overflows sideways
    scroll_width = page.evaluate("document.documentElement.scrollWidth")
    assert scroll_width <= width, f"horizontal overflow: {scroll_width}px at {width}px"
    # ...the chart is there with one visible bar per rule, the largest the widest
    bars = page.locator('[data-chart="waste-by-rule"] [data-bar]')
    assert bars.count() == 8
    widths = [bars.nth(i).bounding_box()["width"] for i in range(bars.count())]
    assert all(w > 0 for w in widths)
    assert widths[0] == max(widths) and widths[0] > 3 * widths[-1]
    # ...the total is visible and no script from the data ran
    assert page.locator('[data-figure="total-waste"]').inner_text().startswith("$")
    assert page.evaluate("typeof window.alert") == "function"
    assert page.locator("script").count() == 0
    if width == 600:
        page.screenshot(path=str(tmp_path / "digest.png"), full_page=True)
    page.close()


def test_alert_fits_at_600_px(browser: Any, tmp_path: Path) -> None:
    # Given an alert on a resource with a very long name and a hostile summary
    snapshot = AccountSnapshot(
        "123456789012",
        "Acme AI",
        NOW - timedelta(days=1),
        [line("chat-" + "y" * 150, "2400.50", summary=HOSTILE)],
        [],
        [],
    )
    alert = build_alert(snapshot, snapshot.open[0], now=NOW, threshold_usd=Decimal(500))
    page_file = tmp_path / "alert.html"
    page_file.write_text(render("email/alert.html.j2", alert=alert), encoding="utf-8")
    page = browser.new_page(viewport={"width": 600, "height": 900})
    # When laid out / Then it does not overflow and the markup stayed text
    page.goto(page_file.as_uri())
    assert page.evaluate("document.documentElement.scrollWidth") <= 600
    assert page.locator("script").count() == 0
    assert "<script>alert(1)</script>" in page.inner_text("body")
    page.close()


def test_digest_total_matches_the_figures() -> None:
    html = _digest_html()
    total = Decimal("2400.50") + Decimal("1210") + Decimal("554.80") + sum(Decimal(100 + i) for i in range(14))
    assert f"${total:,.0f}" in html
