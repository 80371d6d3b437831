"""The demo's ledger, end to end through `chipwise demo`: every measurement inside its plausible range."""

from __future__ import annotations

import sqlite3
import subprocess
import sys
from decimal import Decimal
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
    return out


def test_every_demo_measurement_is_inside_its_plausible_range(demo: Path) -> None:
    with sqlite3.connect(demo / "chipwise-demo.db") as db:
        rows = db.execute(
            "select target_instance_type, json_extract(measured, '$.verdict'), "
            "json_extract(measured, '$.measured_saving_fraction'), json_extract(measured, '$.plausible_low'), "
            "json_extract(measured, '$.plausible_high'), json_extract(measured, '$.rate_basis') "
            "from benchmark_runs where measured is not null"
        ).fetchall()
    assert len(rows) >= 8
    ranged = 0
    for target, verdict, fraction, low, high, basis in rows:
        assert verdict != "needs_review", target
        if verdict in ("confirmed", "withdrawn"):
            assert basis in ("account", "catalog"), target  # never a fallback rate
        if fraction is not None and low is not None:
            ranged += 1
            assert Decimal(low) <= Decimal(str(fraction)) <= Decimal(high), target
    assert ranged >= 4  # both training runs and both GPU → Inferentia runs with a baseline were held to a range
