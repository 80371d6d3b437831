"""Facts from outside, each with its source and as-of date: instance types and prices, Neuron model support,
representative economics and credit programs.

Everything is read from the data files in ``chipwise/catalog/data/`` on first use (cached factories, no I/O at
import). Logic elsewhere asks these objects for figures and never carries its own.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from datetime import date
from decimal import Decimal
from functools import lru_cache
from typing import Literal, TypeVar

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from chipwise.catalog.instances import (
    CATALOG_FILE_ENV,
    Catalog,
    InstanceType,
    Platform,
    PriceConfidence,
    Region,
    Regions,
    Source,
    UnknownInstanceType,
    get_catalog,
    get_regions,
    load_data_file,
    platform_of,
)
from chipwise.catalog.usage_types import (
    ParsedUsageType,
    UsageClass,
    UsageKind,
    UsageKindInfo,
    UsageKinds,
    classify_usage_type,
    get_usage_kinds,
    parse_usage_type,
)
from chipwise.economics import porting_cost
from chipwise.errors import ConfigError
from chipwise.models.common import Effort

__all__ = [
    "CATALOG_FILE_ENV",
    "Assumptions",
    "BedrockPrice",
    "Catalog",
    "CompanyStage",
    "CreditProgram",
    "CreditProgramId",
    "Eligibility",
    "Figure",
    "InstanceType",
    "ModelFamilies",
    "ModelFamily",
    "NeuronSoftware",
    "ParsedUsageType",
    "Platform",
    "PortingEffort",
    "PriceConfidence",
    "PublicMailDomains",
    "Region",
    "Regions",
    "Source",
    "SupportLevel",
    "UnknownInstanceType",
    "UsageClass",
    "UsageKind",
    "UsageKindInfo",
    "UsageKinds",
    "classify_usage_type",
    "get_assumptions",
    "get_catalog",
    "get_credit_programs",
    "get_model_families",
    "get_neuron_software",
    "get_public_mail_domains",
    "get_regions",
    "get_usage_kinds",
    "parse_usage_type",
    "platform_of",
]

SupportLevel = Literal["drop_in", "supported", "needs_work", "unsupported"]
PortingEffort = Literal["days", "weeks", "months"]
CompanyStage = Literal["bootstrapped", "pre_seed", "seed", "series_a", "series_b", "later"]
CreditProgramId = Literal["activate_founders", "activate_portfolio", "genai_poc_funding", "genai_accelerator", "map"]

_M = TypeVar("_M", bound=BaseModel)


class _FrozenData(BaseModel):
    model_config = ConfigDict(defer_build=True, frozen=True, extra="forbid")


def _load(model: type[_M], name: str) -> _M:
    try:
        return model.model_validate(load_data_file(name))
    except ValidationError as exc:
        raise ConfigError(f"catalog data file {name} is invalid: {exc}") from exc


def _check_sources(used: Iterable[str], sources: dict[str, Source]) -> None:
    missing = sorted(set(used) - set(sources))
    if missing:
        raise ValueError(f"source codes without a sources entry: {', '.join(missing)}")


# --- model families --------------------------------------------------------------------------------------------


class ModelFamily(_FrozenData):
    """Neuron support for one model family, and how to recognise it in model ids, image names and tags."""

    id: str = Field(pattern=r"^[a-z0-9][a-z0-9-]*$")
    name: str
    training_support: SupportLevel
    inference_support: SupportLevel
    porting_effort: PortingEffort
    bedrock_available: bool = Field(description="Amazon Bedrock serves the family as a managed foundation model.")
    typical_params_billion: Decimal | None = Field(gt=0)
    aliases: tuple[str, ...]
    sources: tuple[str, ...]
    note: str | None = None

    def support(self, stage: Literal["training", "inference"]) -> SupportLevel:
        return self.training_support if stage == "training" else self.inference_support


class PortingEffortByWorkload(_FrozenData):
    """Porting effort by what the workload is (drop-in serving of a supported model is days; distributed
    pretraining on many instances is months)."""

    source: str
    as_of: date
    note: str
    drop_in_inference: Effort
    supported_inference: Effort
    drop_in_fine_tuning: Effort
    fine_tuning: Effort
    pretraining: Effort
    pretraining_multi_node: Effort
    multi_node_min_instances: int = Field(ge=2)


class KnownModels(_FrozenData):
    """Parameter counts of model ids that do not state their size."""

    source: str
    as_of: date
    note: str
    params_billion: dict[str, Decimal]


class _ModelFamiliesDocument(_FrozenData):
    schema_version: Literal[1]
    description: str
    as_of: date
    levels: dict[SupportLevel, str]
    efforts: dict[PortingEffort, str]
    sources: dict[str, Source]
    families: tuple[ModelFamily, ...]
    known_models: KnownModels

    @model_validator(mode="after")
    def _valid(self) -> _ModelFamiliesDocument:
        ids = [f.id for f in self.families]
        if len(ids) != len(set(ids)):
            raise ValueError("model family ids must be unique")
        if "custom" not in ids:
            raise ValueError("a 'custom' fallback family is required")
        owners: dict[str, str] = {}
        for family in self.families:
            for alias in family.aliases:
                if alias != alias.lower() or not alias.strip():
                    raise ValueError(f"{family.id}: alias {alias!r} must be lowercase text")
                if owners.setdefault(alias, family.id) != family.id:
                    raise ValueError(f"alias {alias!r} belongs to both {owners[alias]} and {family.id}")
        _check_sources((s for f in self.families for s in f.sources), self.sources)
        return self


class ModelFamilies:
    """The model-family table: look up by id, or recognise a family in free text."""

    def __init__(self, document: _ModelFamiliesDocument) -> None:
        self.as_of: date = document.as_of
        self.sources: dict[str, Source] = dict(document.sources)
        self.levels: dict[SupportLevel, str] = dict(document.levels)
        self._families = list(document.families)
        self._by_id = {f.id: f for f in self._families}
        self.known_models = document.known_models
        # Longest names first, so "gpt2-medium" wins over "gpt2"; no letter, digit or dot right after the name.
        self._known = [
            (re.compile(rf"(?<![a-z0-9]){re.escape(known)}(?![a-z0-9.]|-?\d)"), params)
            for known, params in sorted(document.known_models.params_billion.items(), key=lambda kv: -len(kv[0]))
        ]
        self._known_by_name: dict[str, Decimal | None] = {}  # a fleet names few models, each on many resources
        # Word start before the alias; no letter right after it (digits may follow: llama3, qwen2, gpt2).
        self._patterns = [
            (re.compile(rf"(?<![a-z0-9]){re.escape(alias)}(?![a-z])"), len(alias), family)
            for family in self._families
            for alias in family.aliases
        ]

    def get(self, family_id: str) -> ModelFamily | None:
        return self._by_id.get(family_id.strip().lower())

    def all(self) -> list[ModelFamily]:
        return list(self._families)

    @property
    def custom(self) -> ModelFamily:
        """The fallback for models nothing matches."""
        return self._by_id["custom"]

    def known_params(self, model_id: str) -> Decimal | None:
        """Parameters (billions) of a well-known model id that does not state its size (``bert-base-uncased``)."""
        name = model_id.strip().lower().rsplit("/", 1)[-1]
        if name not in self._known_by_name:
            self._known_by_name[name] = next((params for pattern, params in self._known if pattern.search(name)), None)
        return self._known_by_name[name]

    def match(self, text: str) -> ModelFamily | None:
        """The family named in a Hugging Face id (``meta-llama/Llama-3.1-8B-Instruct``), an image name or a tag
        value, case-insensitively. The last path segment is tried first, then the others from right to left;
        within a segment the longest matching alias wins. None when nothing matches."""
        segments = [s for s in text.strip().lower().split("/") if s]
        for segment in reversed(segments):
            best: tuple[int, ModelFamily] | None = None
            for pattern, length, family in self._patterns:
                if (best is None or length > best[0]) and pattern.search(segment):
                    best = (length, family)
            if best is not None:
                return best[1]
        return None


@lru_cache(maxsize=1)
def get_model_families() -> ModelFamilies:
    """The shipped ``model_families.json`` (read once)."""
    return ModelFamilies(_load(_ModelFamiliesDocument, "model_families.json"))


# --- economics -------------------------------------------------------------------------------------------------


class Figure(_FrozenData):
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
    def _in_range(self) -> Figure:
        if self.low is not None and self.value < self.low:
            raise ValueError(f"value {self.value} is below its low {self.low}")
        if self.high is not None and self.value > self.high:
            raise ValueError(f"value {self.value} is above its high {self.high}")
        return self


class EffortWeeks(_FrozenData):
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


class BedrockPrice(_FrozenData):
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


class BedrockPrices(_FrozenData):
    region: str
    unit: str
    prices: tuple[BedrockPrice, ...]


class InferenceWorkedExample(_FrozenData):
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


class TrainingWorkedExample(_FrozenData):
    source: str
    note: str | None = None
    instance_type: str
    hours: Decimal
    expected_cost_usd: Decimal
    tolerance: Decimal


class WorkedExamples(_FrozenData):
    """The sources' worked figures, for tests of the economics (reproduce them within ``tolerance``)."""

    inference_10m_requests_per_day: InferenceWorkedExample
    training_7b_100h_p4d: TrainingWorkedExample


class Assumptions(_FrozenData):
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
    def _sources_known(self) -> Assumptions:
        used = [value.source for _, value in self if isinstance(value, Figure | EffortWeeks)]
        used += [p.source for p in self.bedrock_on_demand.prices]
        used += [self.worked_examples.inference_10m_requests_per_day.source]
        used += [self.worked_examples.training_7b_100h_p4d.source]
        _check_sources(used, self.sources)
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
    return _load(Assumptions, "assumptions.json")


# --- Neuron software by chip family -----------------------------------------------------------------------------

SoftwareStatus = Literal["active", "maintenance", "legacy", "transition"]


class ChipSoftware(_FrozenData):
    """The Neuron stacks one chip family serves and trains with, and their status."""

    serving: str | None
    serving_status: SoftwareStatus | None
    training: str | None
    training_status: SoftwareStatus | None
    sources: tuple[str, ...] = Field(min_length=1)


class NeuronSoftware(_FrozenData):
    """``neuron_software.json``: which software path a migration assumes (from the Neuron documentation)."""

    schema_version: Literal[1]
    description: str
    as_of: date
    sources: dict[str, Source]
    families: dict[str, ChipSoftware]
    status_words: dict[SoftwareStatus, str]

    @model_validator(mode="after")
    def _sources_known(self) -> NeuronSoftware:
        _check_sources([s for f in self.families.values() for s in f.sources], self.sources)
        return self

    def serving_path(self, family: str) -> str | None:
        """ "vLLM Neuron plugin (actively developed)" for ``trn2``; None for a family without a Neuron stack."""
        chip = self.families.get(family)
        if chip is None or chip.serving is None or chip.serving_status is None:
            return None
        return f"{chip.serving} on {family} ({self.status_words[chip.serving_status]})"

    def training_path(self, family: str) -> str | None:
        chip = self.families.get(family)
        if chip is None or chip.training is None or chip.training_status is None:
            return None
        return f"{chip.training} on {family} ({self.status_words[chip.training_status]})"

    def serving_status(self, family: str) -> SoftwareStatus | None:
        chip = self.families.get(family)
        return chip.serving_status if chip else None


@lru_cache(maxsize=1)
def get_neuron_software() -> NeuronSoftware:
    """The shipped ``neuron_software.json`` (read once)."""
    return _load(NeuronSoftware, "neuron_software.json")


# --- public mailbox providers ---------------------------------------------------------------------------------


class PublicMailDomains(_FrozenData):
    """Domains where anyone can open an address (``public_mail_domains.json``): never owner mail by default."""

    schema_version: int
    description: str
    as_of: date
    sources: dict[str, Source]
    source: str
    domains: frozenset[str] = Field(min_length=1)

    @model_validator(mode="after")
    def _sourced(self) -> PublicMailDomains:
        _check_sources([self.source], self.sources)
        return self

    def __contains__(self, domain: object) -> bool:
        return isinstance(domain, str) and domain.lower().rstrip(".") in self.domains


@lru_cache(maxsize=1)
def get_public_mail_domains() -> PublicMailDomains:
    """The shipped ``public_mail_domains.json`` (read once)."""
    return _load(PublicMailDomains, "public_mail_domains.json")


# --- credit programs -------------------------------------------------------------------------------------------


class Eligibility(_FrozenData):
    """Who a credit program is for, as data."""

    stages: tuple[CompanyStage, ...] = Field(min_length=1)
    requires_provider_org_id: bool
    requires_institutional_funding: bool
    self_funded_only: bool
    ai_first: bool = Field(description="Only for AI-first startups.")
    requires_existing_workload_migration: bool
    requires_partner: bool = Field(description="Filed or run by an AWS partner (not a blocker, a route).")
    invite_only: bool
    competitive: bool = Field(False, description="Awards are chosen among applicants (a cohort, a committee).")
    min_monthly_spend_usd: Decimal | None = Field(ge=0)
    max_company_age_years: int | None = Field(ge=1)
    notes: str | None = None

    def unmet(
        self,
        *,
        stage: CompanyStage | None,
        institutional_funding: bool | None,
        has_provider_org_id: bool,
        ai_first: bool | None,
        migrating_existing_workload: bool = False,
        monthly_spend_usd: Decimal | None = None,
    ) -> list[str]:
        """Why a company does not qualify (empty when it may). An unknown fact (None) never disqualifies."""
        reasons: list[str] = []
        if stage is not None and stage not in self.stages:
            reasons.append(f"open to {', '.join(self.stages)} companies, not {stage}")
        if self.requires_provider_org_id and not has_provider_org_id:
            reasons.append("needs an Org ID from an AWS Activate Provider (VC, accelerator, angel group)")
        if self.requires_institutional_funding and institutional_funding is False:
            reasons.append("needs institutional funding (VC, accelerator or angel group)")
        if self.self_funded_only and institutional_funding:
            reasons.append("for bootstrapped or self-funded companies only")
        if self.ai_first and ai_first is False:
            reasons.append("for AI-first startups only")
        if self.requires_existing_workload_migration and not migrating_existing_workload:
            reasons.append("only for migrating existing workloads, not new builds")
        if self.invite_only:
            reasons.append("by invitation only")
        minimum = self.min_monthly_spend_usd
        if minimum is not None and monthly_spend_usd is not None and monthly_spend_usd < minimum:
            reasons.append(f"needs at least ${self.min_monthly_spend_usd} a month of AWS spend")
        return reasons


class CreditProgram(_FrozenData):
    """One AWS credit or funding program, with its amount, eligibility and provenance."""

    id: CreditProgramId
    name: str
    max_amount_usd: Decimal | None = Field(gt=0, description="None: no fixed cap (scaled to spend).")
    min_amount_usd: Decimal | None = Field(gt=0)
    typical_amount_usd: Decimal | None = Field(gt=0)
    amount_note: str
    eligibility: Eligibility
    how_to_apply: str
    url: str
    source: str
    as_of: date
    estimate: bool = Field(description="The amount rests on third-party pages only.")
    caveat: str | None = Field(None, description="What the sources disagree on, said wherever the program fits.")
    source_strength: Literal["aws_page", "third_party"] = Field(
        description="aws_page: the program and amount are on an AWS page (or an AWS-authored copy); third_party: "
        "only other sites describe it."
    )

    @model_validator(mode="after")
    def _amounts(self) -> CreditProgram:
        amounts = [a for a in (self.min_amount_usd, self.typical_amount_usd, self.max_amount_usd) if a is not None]
        if amounts != sorted(amounts):
            raise ValueError(f"{self.id}: amounts must satisfy min <= typical <= max")
        return self


class _CreditProgramsDocument(_FrozenData):
    schema_version: Literal[1]
    description: str
    as_of: date
    programs: tuple[CreditProgram, ...]

    @model_validator(mode="after")
    def _unique(self) -> _CreditProgramsDocument:
        ids = [p.id for p in self.programs]
        if len(ids) != len(set(ids)):
            raise ValueError("credit program ids must be unique")
        return self


@lru_cache(maxsize=1)
def _credit_programs() -> tuple[CreditProgram, ...]:
    return _load(_CreditProgramsDocument, "credit_programs.json").programs


def get_credit_programs() -> list[CreditProgram]:
    """The shipped ``credit_programs.json`` (read once), in file order."""
    return list(_credit_programs())


get_credit_programs.cache_clear = _credit_programs.cache_clear  # type: ignore[attr-defined]
