"""The demo's spend, end to end through `chipwise demo` (issue 35, items 1-3): one spend figure on every surface
(the bill's), `findings evaluate` on an unchanged store reproduces the scan's findings byte for byte, and every
point of the trend is the same measure with its basis named."""

from __future__ import annotations

import json
import re
import shutil
import sqlite3
import subprocess
import sys
from decimal import Decimal
from html import unescape as html_unescape
from pathlib import Path

import pytest

from chipwise.models.scan import ScanDocument
from chipwise.spend import document_spend

CHIPWISE = Path(sys.executable).with_name("chipwise")

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def demo(demo_artifacts: Path) -> Path:
    return demo_artifacts


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


# Where a surface states the account's spend (a month): the phrases each surface uses, never "spend after" a change
SPEND_PHRASES = (
    r"compute spend:? \**(?:about )?\$([\d,]+(?:\.\d\d)?)",
    r"\bSpend \$([\d,]+(?:\.\d\d)?) a month",
    r"spends about \$([\d,]+(?:\.\d\d)?)",
    r"compute spend \$([\d,]+(?:\.\d\d)?)/mo",
    r'data-figure="spend">\$([\d,]+(?:\.\d\d)?)<',
    r'"monthly_accelerator_spend_usd": "([\d.]+)"',
)


def _spend_figures(text: str) -> list[Decimal]:
    return [Decimal(m.replace(",", "")) for p in SPEND_PHRASES for m in re.findall(p, text)]


def test_every_surface_prints_one_spend_figure_the_bills(demo: Path) -> None:
    with sqlite3.connect(demo / "chipwise-demo.db") as db:
        (raw,) = db.execute("select document from scans where status = 'succeeded' order by window_end desc").fetchone()
    spend = document_spend(ScanDocument.model_validate_json(raw))
    assert spend is not None and spend.from_bill  # the demo's bill covers the latest scan's window
    surfaces = {
        "summary.md": demo / "summary.md",
        "report.md": demo / "report.md",
        "digest (email, text)": demo / "digest.txt",
        "digest (email, HTML)": demo / "digest.html",
        "credits application": demo / "drafts" / "credits-application.md",
        "credits application (JSON)": demo / "drafts" / "credits-application.json",
        "partner email": demo / "drafts" / "partner-referral-email.txt",
        "ACE JSON": demo / "drafts" / "ace-create-opportunity.json",
        "HTML report": next(demo.glob("chipwise-report-*.html")),
        **{f"Slack {p.name}": p for p in sorted((demo / "slack").glob("*digest*.json"))},
    }
    for surface, path in surfaces.items():
        text = html_unescape(path.read_text())
        if path.suffix == ".json" and "slack" in str(path):
            text = json.dumps(json.loads(text), ensure_ascii=False).replace("\\n", "\n")
        found = _spend_figures(text)
        assert found, f"{surface} states no spend"
        for figure in found:  # to the cent, or the same figure rounded to the dollar
            assert figure in (spend.monthly_usd, spend.monthly_usd.quantize(Decimal(1))), (surface, figure)


def test_the_trend_points_share_one_basis_named_per_point(demo: Path) -> None:
    html = html_unescape(next(demo.glob("chipwise-report-*.html")).read_text())
    bases = re.findall(r"data-trend-basis>([^<]*)<", html)
    assert len(bases) == 3  # the demo's three daily scans
    measure = "the bill, AWS Data Exports 2026-11; the bill's monthly run rate over "
    assert all(b.startswith(measure) for b in bases), bases
    assert all(re.fullmatch(r"\d+ days?", b.removeprefix(measure)) for b in bases), bases
