"""What the planner reads and what it records: the data (catalog, economics, planner assumptions) for one plan,
and the ledger of every figure used with its source. Also the small number helpers the planner shares.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from decimal import ROUND_CEILING, Decimal

from chipwise.catalog import (
    Assumptions,
    Catalog,
    Figure,
    InstanceType,
    ModelFamilies,
    ModelFamily,
    Source,
    get_assumptions,
    get_catalog,
    get_model_families,
)
from chipwise.economics import porting_cost, usd_per_hour
from chipwise.models.common import Effort
from chipwise.plan.document import FigureSource
from chipwise.plan.figures import PlannerData, get_planner_data

HOURS_PER_DAY = Decimal(24)
SECONDS_PER_DAY = Decimal(86400)
BILLION = Decimal(1_000_000_000)
BYTES_PER_GIB = Decimal(2**30)
ZERO = Decimal(0)
CENT = Decimal("0.01")


def short_name(family: ModelFamily) -> str:
    """ "Llama" from "Llama (Meta Llama 2/3/3.1, Llama-based fine-tunes)"."""
    return family.name.split(" (")[0]


def plain(value: Decimal) -> str:
    """A decimal without trailing zeros or exponent: 1.006, 21.5, 730."""
    return format(value.normalize(), "f")


def label(name: str) -> str:
    """ "Engineer week cost usd" from "engineer_week_cost_usd": a figure's name as the plan lists it."""
    return name.replace("_", " ").capitalize()


def ceil_div(numerator: Decimal, denominator: Decimal) -> int:
    """Whole instances (at least one) to carry ``numerator`` at ``denominator`` each."""
    return max(1, int((numerator / denominator).to_integral_value(rounding=ROUND_CEILING)))


# How a figure's confidence reads next to its source in a plan.
CONFIDENCE_WORDS = {
    "verified": "",
    "corroborated": " (several public sources agree)",
    "single": " (one public source: treat as an estimate)",
    "derived": " (derived from the figures above)",
    "none": " (an assumption: replace it with your own figure or a benchmark)",
}


@dataclass
class SourceLedger:
    """The figures a plan used, with their sources, in first-use order (each listed once)."""

    sources: dict[str, FigureSource] = field(default_factory=dict)

    def add(self, figure: str, value: str, source: Source) -> None:
        citation = f"{source.title}: {source.citation}" + (f" ({source.url})" if source.url else "")
        citation += CONFIDENCE_WORDS[source.confidence]
        self.sources.setdefault(
            figure, FigureSource(figure=figure, value=value, source=citation, as_of=source.as_of.isoformat())
        )


@dataclass(frozen=True)
class Context:
    """The data the planner reads, loaded once per plan."""

    catalog: Catalog
    assumptions: Assumptions
    families: ModelFamilies
    data: PlannerData
    region: str
    ledger: SourceLedger

    @classmethod
    def load(cls, region: str) -> Context:
        return cls(get_catalog(), get_assumptions(), get_model_families(), get_planner_data(), region, SourceLedger())

    def figure(self, name: str, figure: Figure) -> Decimal:
        """An economics figure's value, recorded with its source."""
        self.ledger.add(label(name), f"{figure.value} ({figure.unit})", self.assumptions.sources[figure.source])
        return figure.value

    def planning(self, name: str) -> Decimal:
        """A planner assumption's value, recorded with its source."""
        figure: Figure = getattr(self.data.figures, name)
        self.ledger.add(label(name), f"{figure.value} ({figure.unit})", self.data.sources[figure.source])
        return figure.value

    def price(self, instance: InstanceType) -> Decimal | None:
        """USD/hour in the plan's region, recorded with its source; None when the catalog has no price."""
        price = self.catalog.price(instance.name, self.region)
        source = self.catalog.source_of(instance)
        if price is not None and source is not None:
            self.ledger.add(f"{instance.name} on-demand price, {self.region}", usd_per_hour(price), source)
        return price

    @property
    def hours_per_month(self) -> Decimal:
        return self.figure("hours_per_month", self.assumptions.hours_per_month)

    def engineer_weeks(self, effort: Effort) -> Decimal:
        weeks = self.assumptions.effort_engineer_weeks
        self.ledger.add(
            "porting effort in engineer-weeks",
            f"days {weeks.days}, weeks {weeks.weeks}, months {weeks.months}",
            self.assumptions.sources[weeks.source],
        )
        return self.assumptions.engineer_weeks(effort)

    def porting_cost(self, effort: Effort) -> Decimal:
        if effort == "none":
            return ZERO
        weekly = self.figure("engineer_week_cost_usd", self.assumptions.engineer_week_cost_usd)
        return porting_cost(self.engineer_weeks(effort), weekly)
