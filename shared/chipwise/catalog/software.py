"""Which Neuron software each chip family serves and trains with, and its status (``neuron_software.json``)."""

from functools import lru_cache
from typing import Literal, Self

from pydantic import Field, model_validator

from chipwise.catalog.loading import FrozenData, SourcedDocument, check_sources, load_document

SoftwareStatus = Literal["active", "maintenance", "legacy", "transition"]


class ChipSoftware(FrozenData):
    """The Neuron stacks one chip family serves and trains with, and their status."""

    serving: str | None
    serving_status: SoftwareStatus | None
    training: str | None
    training_status: SoftwareStatus | None
    sources: tuple[str, ...] = Field(min_length=1)


class NeuronSoftware(SourcedDocument):
    """``neuron_software.json``: which software path a migration assumes (from the Neuron documentation)."""

    families: dict[str, ChipSoftware]
    status_words: dict[SoftwareStatus, str]

    @model_validator(mode="after")
    def _sources_known(self) -> Self:
        check_sources([s for f in self.families.values() for s in f.sources], self.sources)
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
    return load_document(NeuronSoftware, "neuron_software.json")
