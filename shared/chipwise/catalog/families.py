"""Neuron support by model family (``model_families.json``): how to recognise a family in model ids, image names
and tags, and the porting effort by workload."""

import re
from datetime import date
from decimal import Decimal
from functools import lru_cache
from typing import Literal, Self

from pydantic import Field, model_validator

from chipwise.catalog.loading import FrozenData, Source, SourcedDocument, check_sources, load_document
from chipwise.models.common import Effort

SupportLevel = Literal["drop_in", "supported", "needs_work", "unsupported"]
PortingEffort = Literal["days", "weeks", "months"]


class ModelFamily(FrozenData):
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


class PortingEffortByWorkload(FrozenData):
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


class KnownModels(FrozenData):
    """Parameter counts of model ids that do not state their size."""

    source: str
    as_of: date
    note: str
    params_billion: dict[str, Decimal]


class _ModelFamiliesDocument(SourcedDocument):
    levels: dict[SupportLevel, str]
    efforts: dict[PortingEffort, str]
    families: tuple[ModelFamily, ...]
    known_models: KnownModels

    @model_validator(mode="after")
    def _valid(self) -> Self:
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
        check_sources((s for f in self.families for s in f.sources), self.sources)
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
    return ModelFamilies(load_document(_ModelFamiliesDocument, "model_families.json"))
