"""What every catalog data file shares: how it is read (numbers as Decimal), its ``sources`` table of public
:class:`Source` entries that its figures cite by code, and a frozen model that refuses unknown keys."""

import json
import re
from collections.abc import Iterable
from datetime import date
from decimal import Decimal
from importlib import resources
from typing import Any, Literal, Self, TypeVar

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, ValidationError, model_validator

from chipwise.errors import ConfigError

_M = TypeVar("_M", bound=BaseModel)


class FrozenData(BaseModel):
    model_config = ConfigDict(defer_build=True, frozen=True, extra="forbid")


PriceConfidence = Literal["verified", "corroborated", "single", "derived", "none"]
_LOCAL_PATH = re.compile(
    r"(?:^|[\s(:'\"])(?:/work/|/home/|/tmp/|/Users/|~/|[A-Za-z]:\\)|\bshared/(?:reference|seeds)/|\bseeds/\d"
)
_NOT_PUBLIC_WORDS = re.compile(r"\b(?:recalled|unverified|recollection)\b", re.IGNORECASE)


class Source(FrozenData):
    """Where figures come from: one entry of a data file's ``sources`` table, keyed by its short code.

    Sources are public (a URL, or a public repository path at a commit): customer-facing documents cite them, so a
    local path or a figure "recalled" from memory is rejected when the data file loads.
    """

    title: str
    citation: str
    url: str | None = None
    as_of: date
    confidence: PriceConfidence = Field(
        description="verified (authoritative or matched), corroborated (several independent sources), single (one "
        "public source, e.g. a vendor claim or a third party), derived (computed from other figures), none."
    )
    note: str | None = None

    @model_validator(mode="after")
    def _public(self) -> Self:
        for name in ("title", "citation", "url", "note"):
            value = getattr(self, name) or ""
            if _LOCAL_PATH.search(value):
                raise ValueError(f"source {self.title!r}: {name} names a local path, not a public source: {value!r}")
            if _NOT_PUBLIC_WORDS.search(value):
                raise ValueError(f"source {self.title!r}: {name} says the figure is not from a source: {value!r}")
        if self.url is not None and not self.url.startswith("https://"):
            raise ValueError(f"source {self.title!r}: url must be https, not {self.url!r}")
        return self

    @property
    def estimate(self) -> bool:
        """Figures from this source are not verified (one source, a derivation or none)."""
        return self.confidence not in ("verified", "corroborated")


class DataDocument(FrozenData):
    """What every shipped data file opens with: its schema version, what it holds and as of when."""

    schema_version: Literal[1]
    description: str
    as_of: date


class SourcedDocument(DataDocument):
    """A data file whose figures cite its ``sources`` table by code."""

    sources: dict[str, Source]


def keyed_by(field: str) -> BeforeValidator:
    """For a table of entries keyed by name (``{"us-east-1": {...}}``) whose entries carry the name too: each
    entry's ``field`` is set from its key."""

    def name_entries(table: Any) -> Any:
        if isinstance(table, dict):
            return {key: {field: key, **entry} for key, entry in table.items()}
        return table

    return BeforeValidator(name_entries)


def load_data_file(name: str, package: str = "chipwise.catalog") -> Any:
    """A shipped data file (``<package>/data/<name>``), numbers as Decimal (never float)."""
    text = resources.files(package).joinpath("data", name).read_text(encoding="utf-8")
    return json.loads(text, parse_float=Decimal)


def load_document(model: type[_M], name: str, package: str = "chipwise.catalog") -> _M:
    """The data file ``name`` of ``package`` validated as ``model``; an invalid file is a configuration error."""
    try:
        return model.model_validate(load_data_file(name, package))
    except ValidationError as exc:
        raise ConfigError(f"{package.rsplit('.', 1)[-1]} data file {name} is invalid: {exc}") from exc


def check_sources(used: Iterable[str], sources: dict[str, Source]) -> None:
    missing = sorted(set(used) - set(sources))
    if missing:
        raise ValueError(f"source codes without a sources entry: {', '.join(missing)}")
