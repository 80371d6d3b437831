"""What every catalog data file's model shares: frozen, unknown keys refused, validated on first use, and its
source codes checked against the file's ``sources``."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TypeVar

from pydantic import BaseModel, ConfigDict, ValidationError

from chipwise.catalog.instances import Source, load_data_file
from chipwise.errors import ConfigError

_M = TypeVar("_M", bound=BaseModel)


class FrozenData(BaseModel):
    model_config = ConfigDict(defer_build=True, frozen=True, extra="forbid")


def load_document(model: type[_M], name: str) -> _M:
    """The data file ``name`` validated as ``model``; an invalid file is a configuration error."""
    try:
        return model.model_validate(load_data_file(name))
    except ValidationError as exc:
        raise ConfigError(f"catalog data file {name} is invalid: {exc}") from exc


def check_sources(used: Iterable[str], sources: dict[str, Source]) -> None:
    missing = sorted(set(used) - set(sources))
    if missing:
        raise ValueError(f"source codes without a sources entry: {', '.join(missing)}")
