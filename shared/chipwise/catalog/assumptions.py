"""The representative economics (``assumptions.json``): ratios and assumptions with their ranges and sources,
the engineer-week cost of porting, and Bedrock token prices."""

from datetime import date
from decimal import Decimal
from functools import lru_cache
from typing import Literal, Self

from pydantic import Field, model_validator

from chipwise.catalog.families import PortingEffortByWorkload
from chipwise.catalog.loading import FrozenData, PriceConfidence, Source, check_sources, load_document
from chipwise.economics import porting_cost
from chipwise.models.common import Effort


class Figure(FrozenData):
    """One representative figure with its range and provenance."""

    value: Decimal
    low: Decimal | None = None
    high: Decimal | None = None
    unit: str
    source: str
    as_of: date
    estimate: bool
    note: str | None = None

    @model_validator(mode="after")
    def _in_range(self) -> Self:
        if self.low is not None and self.value < self.low:
            raise ValueError(f"value {self.value} is below its low {self.low}")
        if self.high is not None and self.value > self.high:
            raise ValueError(f"value {self.value} is above its high {self.high}")
        return self


class EffortWeeks(FrozenData):
    """Porting effort level -> engineer-weeks."""

    none: Decimal = Field(ge=0)
    days: Decimal = Field(ge=0)
    weeks: Decimal = Field(ge=0)
    months: Decimal = Field(ge=0)
    source: str
    as_of: date
    note: str | None = None

    def of(self, effort: Effort) -> Decimal:
        weeks: Decimal = getattr(self, effort)
        return weeks


class BedrockPrice(FrozenData):
    """On-demand price of one Bedrock model, USD per million tokens."""

    model_id: str
    name: str
    model_family: str | None
    input_per_million: Decimal = Field(ge=0)
    output_per_million: Decimal | None = Field(ge=0)
    source: str
    as_of: date
    confidence: PriceConfidence

    @property
    def estimate(self) -> bool:
        """The price is not verified."""
        return self.confidence not in ("verified", "corroborated")


class BedrockPrices(FrozenData):
    region: str
    unit: str
    prices: tuple[BedrockPrice, ...]


class InferenceWorkedExample(FrozenData):
    source: str
    note: str | None = None
    requests_per_day: Decimal
    gpu_instance_type: str
    gpu_requests_per_second: Decimal
    neuron_instance_type: str
    neuron_requests_per_second: Decimal
    expected_gpu_instances: int
    expected_neuron_instances: int
    expected_gpu_monthly_usd: Decimal
    expected_neuron_monthly_usd: Decimal
    expected_monthly_saving_usd: Decimal
    tolerance: Decimal


class TrainingWorkedExample(FrozenData):
    source: str
    note: str | None = None
    instance_type: str
    hours: Decimal
    expected_cost_usd: Decimal
    tolerance: Decimal


class WorkedExamples(FrozenData):
    """The sources' worked figures, for tests of the economics (reproduce them within ``tolerance``)."""

    inference_10m_requests_per_day: InferenceWorkedExample
    training_7b_100h_p4d: TrainingWorkedExample


class Assumptions(FrozenData):
    """``assumptions.json``: the representative ratios, assumptions and Bedrock token prices."""

    schema_version: Literal[1]
    description: str
    as_of: date
    sources: dict[str, Source]
    trainium_training_price_performance_gain: Figure
    inferentia2_inference_throughput_ratio: Figure
    inferentia2_single_request_latency_penalty: Figure
    inferentia2_inference_cost_reduction: Figure
    inf2_vs_inf1_throughput_ratio: Figure
    inferentia2_max_params_billion: Figure
    engineer_week_cost_usd: Figure
    effort_engineer_weeks: EffortWeeks
    hours_per_month: Figure
    memory_headroom_factor: Figure
    core_headroom_factor: Figure
    bedrock_on_demand: BedrockPrices
    worked_examples: WorkedExamples
    porting_effort_by_workload: PortingEffortByWorkload
    capacity_cold_start_minutes: Figure
    measurement_plausibility_margin: Figure

    @model_validator(mode="after")
    def _sources_known(self) -> Self:
        used = [value.source for _, value in self if isinstance(value, Figure | EffortWeeks)]
        used += [p.source for p in self.bedrock_on_demand.prices]
        used += [self.worked_examples.inference_10m_requests_per_day.source]
        used += [self.worked_examples.training_7b_100h_p4d.source]
        check_sources(used, self.sources)
        return self

    def figures(self) -> dict[str, Figure]:
        """Every single-valued figure by name (for listings and tests)."""
        return {name: value for name, value in self if isinstance(value, Figure)}

    def engineer_weeks(self, effort: Effort) -> Decimal:
        return self.effort_engineer_weeks.of(effort)

    def porting_cost_usd(self, effort: Effort) -> Decimal:
        """One-time porting cost: engineer-weeks for the effort x the loaded weekly cost."""
        return porting_cost(self.engineer_weeks(effort), self.engineer_week_cost_usd.value)

    def bedrock_price(self, model_id: str) -> BedrockPrice | None:
        return next((p for p in self.bedrock_on_demand.prices if p.model_id == model_id), None)

    def bedrock_prices_for_family(self, family_id: str) -> list[BedrockPrice]:
        return [p for p in self.bedrock_on_demand.prices if p.model_family == family_id]


@lru_cache(maxsize=1)
def get_assumptions() -> Assumptions:
    """The shipped ``assumptions.json`` (read once)."""
    return load_document(Assumptions, "assumptions.json")
