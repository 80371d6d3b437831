"""The planner's own assumptions (``plan/data/planner.json``): sizing rules, thresholds and defaults.

Prices, throughput ratios, porting costs and credit amounts are catalog facts (``chipwise.catalog``); this file
holds only what the planner decides with, each figure with its unit, source and date, read once.
"""

from __future__ import annotations

from decimal import Decimal
from functools import lru_cache

from pydantic import BaseModel, ConfigDict, Field, model_validator

from chipwise.catalog import Figure, Source
from chipwise.catalog.loading import SourcedDocument, check_sources, load_document
from chipwise.models.common import Effort


class _FrozenFigures(BaseModel):
    model_config = ConfigDict(defer_build=True, frozen=True, extra="forbid")


class PlannerFigures(_FrozenFigures):
    inference_bytes_per_parameter: Figure
    training_bytes_per_parameter: Figure
    small_model_max_params_billion: Figure
    large_training_min_params_billion: Figure
    max_payback_months: Figure
    spiky_peak_to_average: Figure
    default_tokens_per_request: Figure
    output_token_share: Figure
    default_runs_per_month: Figure


class PlannerDefaults(_FrozenFigures):
    inference_instance_type: str
    training_instance_type: str
    source: str
    note: str | None = None


class PlannerTargets(_FrozenFigures):
    """Neuron families per decision-table row, in order of preference."""

    inference_large: tuple[str, ...] = Field(min_length=1)
    inference_small: tuple[str, ...] = Field(min_length=1)
    inference_on_trainium: tuple[str, ...] = Field(min_length=1)
    training: tuple[str, ...] = Field(min_length=1)
    training_large: tuple[str, ...] = Field(min_length=1)
    bedrock_effort: Effort
    bedrock_default_model: str
    source: str
    note: str | None = None


class PlannerData(SourcedDocument):
    figures: PlannerFigures
    defaults: PlannerDefaults
    targets: PlannerTargets

    @model_validator(mode="after")
    def _sources_known(self) -> PlannerData:
        used = {figure.source for _, figure in self.figures}
        check_sources(used | {self.defaults.source, self.targets.source}, self.sources)
        return self

    def value(self, name: str) -> Decimal:
        figure: Figure = getattr(self.figures, name)
        return figure.value

    def source_of(self, figure: Figure) -> Source:
        return self.sources[figure.source]


@lru_cache(maxsize=1)
def get_planner_data() -> PlannerData:
    """The shipped ``planner.json`` (read once)."""
    return load_document(PlannerData, "planner.json", "chipwise.plan")
