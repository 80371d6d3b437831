"""The report's chart geometry, with figures worked out by hand."""

from __future__ import annotations

from datetime import UTC, date, datetime
from decimal import Decimal

from chipwise.economics import usd
from chipwise.report.charts import HEAT_CELL, HEAT_LABEL, HEAT_TOP, bars, heat_map, trend


def test_bars_scale_to_the_largest() -> None:
    drawn = bars([("a", Decimal("400"), ""), ("b", Decimal("100"), ""), ("c", Decimal("0"), "")])
    assert [b.width for b in drawn] == [100.0, 25.0, 0.0]


def test_bars_of_nothing_draw_nothing() -> None:
    assert [b.width for b in bars([("a", Decimal(0), "")])] == [0.0]


def test_heat_map_places_each_hour_in_its_day_row_and_hour_column() -> None:
    # Given two days and three hourly averages (one outside the window)
    values = {
        datetime(2026, 11, 20, 0, tzinfo=UTC): 0.0,
        datetime(2026, 11, 21, 13, tzinfo=UTC): 50.0,
        datetime(2026, 11, 22, 5, tzinfo=UTC): 99.0,  # the window ends on the 22nd (exclusive)
    }
    grid = heat_map(values, start=date(2026, 11, 20), end=date(2026, 11, 22), source="test")
    # Then two rows, two cells: (col 0, row 0) and (col 13, row 1); mean (0 + 50) / 2 = 25
    assert grid.days == ["Fri 20 Nov", "Sat 21 Nov"]
    assert [(c.x, c.y) for c in grid.cells] == [
        (HEAT_LABEL, HEAT_TOP),
        (HEAT_LABEL + 13 * HEAT_CELL, HEAT_TOP + HEAT_CELL),
    ]
    assert grid.hours_with_data == 2 and grid.mean == 25.0
    # ...idle is the lightest shade; half busy is half-way between #f0f9ff and #0369a1, channel by channel
    assert grid.cells[0].fill == "#f0f9ff"
    assert grid.cells[1].fill == "#7ab1d0"  # (240+3)/2=121.5→0x7a, (249+105)/2=177=0xb1, (255+161)/2=208=0xd0
    assert grid.width == HEAT_LABEL + 24 * HEAT_CELL + 4 and grid.height == HEAT_TOP + 2 * HEAT_CELL + 4


def test_a_summed_gpu_metric_widens_the_scale() -> None:
    grid = heat_map(
        {datetime(2026, 11, 20, 1, tzinfo=UTC): 400.0}, start=date(2026, 11, 20), end=date(2026, 11, 21), source="g"
    )
    assert grid.unit_max == 400.0 and grid.cells[0].fill == "#0369a1"


def test_trend_puts_spend_and_savings_on_one_scale() -> None:
    # Given two scans: spend $1,000 then $800 a month, savings $500 then $200
    chart = trend([("a", Decimal(1000), Decimal(500)), ("b", Decimal(800), Decimal(200))], lambda v: usd(v, 0))
    # Then the scale tops at $1,000; inner height 220 - 2*24 = 172, so $1,000 is at y=24 and $500 at 24+86=110
    first, second = chart.points
    assert (first.x, first.spend_y, first.savings_y) == (72, 24.0, 110.0)
    assert (second.x, second.spend_y) == (600 - 24, 24 + 172 * 0.2)
    assert chart.grid[0] == (196.0, "$0") and chart.grid[-1] == (24.0, "$1,000")


def test_a_scan_without_costs_draws_no_spend_point() -> None:
    chart = trend([("only", None, Decimal(300))], str)
    assert chart.points[0].spend_y is None and chart.spend_path == ""
    assert chart.points[0].x == 72 + (600 - 72 - 24) / 2
