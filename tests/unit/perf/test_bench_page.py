"""The Performance page of one `make bench` run lists every goal, met or not, with the run's figures."""

from __future__ import annotations

from datetime import UTC, datetime

from benchmarks.harness import BenchResult
from benchmarks.page import ModuleRun, RunInfo, render

START = datetime(2026, 11, 29, 17, 0, tzinfo=UTC)


def _page() -> str:
    org = ModuleRun(
        "bench_org",
        START,
        600.0,
        0.4,
        1.8,
        [
            BenchResult("resources at 50,000", {"cpu_s": 1.2, "note": "a | b"}, "5,000 resources", 2.41, 3.0),
            BenchResult("findings --json at 50,000", {"cpu_s": 4.4}, "5,000 resources", 4.42, 3.0),
            BenchResult("store after 30 days", {"bytes": 123}),
        ],
    )
    bill = ModuleRun("bench_bill_scale", START, 1200.0, 1.8, 2.0, [BenchResult("bill at 10 M", {"per_cpu_s": 1})])
    info = RunInfo(START, datetime(2026, 11, 29, 17, 30, tzinfo=UTC), "abc1234", 2, "3.11.7")
    return render([org, bill], info)


def test_every_goal_is_listed_with_whether_it_was_met() -> None:
    page = _page()
    assert "Goals met: **1 of 2**" in page
    assert "| bench_org | resources at 50,000 | 5,000 resources | 2.41 | ≤ 3 | yes |" in page
    assert "| bench_org | findings --json at 50,000 | 5,000 resources | 4.42 | ≤ 3 | **no** |" in page
    assert "store after 30 days |" not in page.split("## Modules")[0]  # no goal: a figure, not a goal row


def test_the_run_and_each_module_say_when_where_and_at_what_load() -> None:
    page = _page()
    assert "2026-11-29 17:00–17:30 UTC (30 min), commit `abc1234`" in page
    assert "| bench_org | 17:00 | 10.0 min | 0.4, 1.8 |" in page
    assert "| bench_bill_scale | 17:00 | 20.0 min | 1.8, 2.0 |" in page


def test_figures_are_escaped_for_the_table() -> None:
    page = _page()
    assert "note = a \\| b" in page
    assert "| store after 30 days | bytes = 123 |  |" in page
