"""The one clock: timezone-aware UTC, for stored timestamps and every decision that depends on the time."""

from __future__ import annotations

from datetime import UTC, datetime


def utcnow() -> datetime:
    """Now, timezone-aware UTC."""
    return datetime.now(UTC)
