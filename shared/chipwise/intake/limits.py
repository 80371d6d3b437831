"""Rate limits for the public intake, kept in the database so they hold across Lambda instances and races.

Each limit is a counter row per (scope, key, window). Taking one is an insert-if-absent followed by one
conditional ``UPDATE … SET count = count + 1 WHERE count < limit``: PostgreSQL locks the row and re-checks the
condition for a waiting transaction, SQLite serialises writers, so N concurrent requests never get more than
``limit`` between them. The counter is taken inside the submission's own transaction: a submission that fails
later gives its place back.

Keys are sha256 digests of a normalised address or a client IP: the table holds no contact data, and the
retention job drops counters two days after their window.
"""

from __future__ import annotations

import hashlib
import ipaddress
import unicodedata
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Literal

from chipwise.store import Session
from chipwise.store.repositories.intake import IntakeRepository

# client, address: submissions; email: confirmation emails to one address; mail: every confirmation email (one
# global counter a day, key GLOBAL).
Scope = Literal["client", "address", "email", "mail"]
GLOBAL = "global"
HOUR = timedelta(hours=1)
DAY = timedelta(days=1)
# Providers known to ignore dots in the local part (Gmail; googlemail.com is the same mailbox).
_DOTLESS_DOMAINS = {"gmail.com": "gmail.com", "googlemail.com": "gmail.com"}


def normalise_address(address: str) -> str:
    """One mailbox, one key: lower case, "+tag" dropped, dots dropped where the provider ignores them.

    "Ada.Lovelace+plans@GoogleMail.com" and "adalovelace@gmail.com" are the same mailbox, and so is its fullwidth
    form (NFKC). Dropping every "+tag" may join two mailboxes of a provider that does not use sub-addressing; for a
    rate limit that errs safe.
    """
    local, _, domain = unicodedata.normalize("NFKC", address).strip().lower().rpartition("@")
    local = local.split("+", 1)[0]
    domain = domain.rstrip(".")
    if domain in _DOTLESS_DOMAINS:
        local, domain = local.replace(".", ""), _DOTLESS_DOMAINS[domain]
    return f"{local}@{domain}"


def digest(text: str) -> str:
    """The stored form of a key: a sha256 hex digest (the address or IP itself is never kept here)."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def address_key(address: str) -> str:
    return digest("address:" + normalise_address(address))


def client_network(source_ip: str) -> str:
    """The client as a rate limit sees it: an IPv4 address, or an IPv6 address's /48 (the prefix a provider
    delegates to one site: a client can pick any of its 65,536 /64s at will). Anything unparsable is taken as
    given."""
    text = source_ip.strip().lower()
    try:  # an address, or one written as a host network (Powertools' model dumps sourceIp as 2001:db8::1/128)
        address = ipaddress.ip_interface(text).ip
    except ValueError:
        return text
    if isinstance(address, ipaddress.IPv6Address):
        if address.ipv4_mapped is not None:
            return str(address.ipv4_mapped)
        return str(ipaddress.IPv6Network((address, IPV6_CLIENT_PREFIX), strict=False))
    return str(address)


IPV6_CLIENT_PREFIX = 48


def client_key(source_ip: str) -> str:
    return digest("client:" + client_network(source_ip))


def window_start(now: datetime, length: timedelta) -> datetime:
    """The fixed window ``now`` falls in: the UTC hour or the UTC day."""
    if length == HOUR:
        return now.replace(minute=0, second=0, microsecond=0)
    return now.replace(hour=0, minute=0, second=0, microsecond=0)


@dataclass(frozen=True)
class Refused:
    """A limit reached: which one, and when its window ends."""

    scope: Scope
    retry_after: timedelta


def take(session: Session, scope: Scope, key: str, *, limit: int, length: timedelta, now: datetime) -> Refused | None:
    """Use one of ``limit`` places for ``key`` in the current window; a :class:`Refused` when none is left."""
    start = window_start(now, length)
    if IntakeRepository(session).take_limit(scope, key, start, limit):
        return None
    return Refused(scope=scope, retry_after=start + length - now)
