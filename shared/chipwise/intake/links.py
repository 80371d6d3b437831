"""Signed, expiring links for one submission (confirm the address, delete the plan).

A link carries its purpose, the plan id and an expiry, signed with HMAC-SHA256 under the submission's own
random key (``IntakeSubmission.link_key``). Deleting the submission deletes the key, so every link made for it
stops working with it; nothing global has to be kept secret or rotated. Links are built only from the
configured public base URL, never from the request's headers.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Literal
from urllib.parse import urlencode

Purpose = Literal["confirm", "delete"]


@dataclass(frozen=True)
class LinkToken:
    expires: int  # Unix seconds
    signature: str

    def query(self) -> str:
        return urlencode({"expires": self.expires, "signature": self.signature})


def _signature(key: str, purpose: Purpose, plan_id: str, expires: int) -> str:
    mac = hmac.new(key.encode("ascii"), f"{purpose}:{plan_id}:{expires}".encode(), hashlib.sha256).digest()
    return base64.urlsafe_b64encode(mac).decode("ascii").rstrip("=")


def sign(key: str, purpose: Purpose, plan_id: str, expires_at: datetime) -> LinkToken:
    expires = int(expires_at.timestamp())
    return LinkToken(expires=expires, signature=_signature(key, purpose, plan_id, expires))


def verify(key: str | None, purpose: Purpose, plan_id: str, expires: str, signature: str, now: datetime) -> bool:
    """True for an untampered link of this purpose and plan whose expiry is still ahead."""
    if not key or not expires.isdigit() or len(expires) > 12:
        return False
    when = int(expires)
    if datetime.fromtimestamp(when, UTC) <= now:
        return False
    return hmac.compare_digest(_signature(key, purpose, plan_id, when), signature)


def url(base_url: str, path: str, token: LinkToken | None = None) -> str:
    """An absolute link on the configured public address."""
    link = f"{base_url.rstrip('/')}{path}"
    return f"{link}?{token.query()}" if token else link
