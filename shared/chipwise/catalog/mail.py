"""Public mailbox providers (``public_mail_domains.json``): domains where anyone can open an address."""

from datetime import date
from functools import lru_cache
from typing import Self

from pydantic import Field, model_validator

from chipwise.catalog.loading import FrozenData, Source, check_sources, load_document


class PublicMailDomains(FrozenData):
    """Domains where anyone can open an address (``public_mail_domains.json``): never owner mail by default."""

    schema_version: int
    description: str
    as_of: date
    sources: dict[str, Source]
    source: str
    domains: frozenset[str] = Field(min_length=1)

    @model_validator(mode="after")
    def _sourced(self) -> Self:
        check_sources([self.source], self.sources)
        return self

    def __contains__(self, domain: object) -> bool:
        return isinstance(domain, str) and domain.lower().rstrip(".") in self.domains


@lru_cache(maxsize=1)
def get_public_mail_domains() -> PublicMailDomains:
    """The shipped ``public_mail_domains.json`` (read once)."""
    return load_document(PublicMailDomains, "public_mail_domains.json")
