"""Chart geometry for the HTML report: pure functions from figures to SVG shapes (the template draws them).

Every chart is an inline ``<svg>`` with a ``viewBox`` and ``width="100%"``, so it scales to the page at any width
(no horizontal scrolling on a phone) and needs no script or outside asset.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import date, datetime
from decimal import Decimal

HOURS = 24
HEAT_CELL = 12  # viewBox units per hour cell
HEAT_LABEL = 64  # room for the day labels on the left
HEAT_TOP = 16  # room for the hour labels on top


@dataclass(frozen=True)
class Bar:
    label: str
    value: Decimal
    width: float  # 0-100: percent of the largest bar
    detail: str = ""


def bars(items: Sequence[tuple[str, Decimal, str]]) -> list[Bar]:
    """Horizontal bars scaled to the largest value (a value of 0 draws no bar)."""
    largest = max((value for _, value, _ in items), default=Decimal(0))
    if largest <= 0:
        return [Bar(label, value, 0.0, detail) for label, value, detail in items]
    return [Bar(label, value, round(float(value / largest) * 100, 2), detail) for label, value, detail in items]


@dataclass(frozen=True)
class HeatCell:
    x: int
    y: int
    value: float
    fill: str
    title: str


@dataclass(frozen=True)
class HeatMap:
    """Hours (columns, UTC) × days (rows) of one utilisation metric; empty cells are hours with no data."""

    source: str  # what was measured, e.g. "NeuronCoreUtilization (Chipwise/Neuron)"
    unit_max: float  # the top of the colour scale (100 for percentages; more for summed GPU utilisation)
    days: list[str]
    cells: list[HeatCell]
    width: int
    height: int
    hours_with_data: int
    mean: float | None
    note: str = ""
    hour_ticks: list[tuple[int, str]] = field(default_factory=list)


def _shade(value: float, top: float) -> str:
    """White (idle) to deep teal (busy), on a scale of 0 to ``top``."""
    share = 0.0 if top <= 0 else max(0.0, min(1.0, value / top))
    light, dark = (240, 249, 255), (3, 105, 161)
    r, g, b = (round(lo + (hi - lo) * share) for lo, hi in zip(light, dark, strict=True))
    return f"#{r:02x}{g:02x}{b:02x}"


def heat_map(
    values: dict[datetime, float], *, start: date, end: date, source: str, unit_max: float = 100.0, note: str = ""
) -> HeatMap:
    """The grid of ``values`` (hourly averages keyed by the hour, UTC) for the days ``[start, end)``."""
    days = [date.fromordinal(d) for d in range(start.toordinal(), end.toordinal())]
    index = {day: row for row, day in enumerate(days)}
    top = max(unit_max, max(values.values(), default=0.0))
    cells = []
    for hour, value in sorted(values.items()):
        row = index.get(hour.date())
        if row is None:
            continue
        x = HEAT_LABEL + hour.hour * HEAT_CELL
        y = HEAT_TOP + row * HEAT_CELL
        title = f"{hour:%Y-%m-%d %H}:00 UTC: {value:.1f}"
        cells.append(HeatCell(x, y, value, _shade(value, top), title))
    inside = [c.value for c in cells]
    return HeatMap(
        source=source,
        unit_max=top,
        days=[f"{d:%a %d %b}" for d in days],
        cells=cells,
        width=HEAT_LABEL + HOURS * HEAT_CELL + 4,
        height=HEAT_TOP + len(days) * HEAT_CELL + 4,
        hours_with_data=len(inside),
        mean=sum(inside) / len(inside) if inside else None,
        note=note,
        hour_ticks=[(HEAT_LABEL + h * HEAT_CELL + HEAT_CELL // 2, f"{h:02d}") for h in range(0, HOURS, 3)],
    )


@dataclass(frozen=True)
class TrendPoint:
    label: str
    spend: Decimal | None
    savings: Decimal
    x: float
    spend_y: float | None
    savings_y: float


@dataclass(frozen=True)
class Trend:
    points: list[TrendPoint]
    width: int
    height: int
    top: Decimal  # the value at the top of the scale
    spend_path: str
    savings_path: str
    grid: list[tuple[float, str]]


TREND_W, TREND_H, TREND_LEFT, TREND_PAD = 600, 220, 72, 24


def trend(rows: Sequence[tuple[str, Decimal | None, Decimal]], money: object) -> Trend:
    """Spend and savings per scan (oldest first) as two lines on one scale; ``money`` formats the axis."""
    values = [v for _, spend, savings in rows for v in (spend, savings) if v is not None]
    top = max(values, default=Decimal(0))
    top = top if top > 0 else Decimal(1)
    inner_w = TREND_W - TREND_LEFT - TREND_PAD
    inner_h = TREND_H - 2 * TREND_PAD

    def y_of(value: Decimal) -> float:
        return round(TREND_PAD + inner_h - float(value / top) * inner_h, 2)

    step = inner_w / (len(rows) - 1) if len(rows) > 1 else 0.0
    points = []
    for i, (label, spend, savings) in enumerate(rows):
        x = round(TREND_LEFT + (i * step if len(rows) > 1 else inner_w / 2), 2)
        points.append(TrendPoint(label, spend, savings, x, None if spend is None else y_of(spend), y_of(savings)))
    spend_path = " ".join(f"{p.x},{p.spend_y}" for p in points if p.spend_y is not None)
    savings_path = " ".join(f"{p.x},{p.savings_y}" for p in points)
    fmt = money if callable(money) else str
    grid = [(y_of(top * Decimal(k) / 4), str(fmt(top * Decimal(k) / 4))) for k in range(5)]
    return Trend(points, TREND_W, TREND_H, top, spend_path, savings_path, grid)
