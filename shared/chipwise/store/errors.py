"""The store's errors in words: what the CLI prints for a database failure (no traceback, no SQL)."""

from __future__ import annotations

from sqlalchemy import exc as sae

DATABASE_HINT = "check CHIPWISE_DATABASE_URL and that the server is running"


def _first_line(text: str, limit: int) -> str:
    line = next((part.strip() for part in text.strip().splitlines() if part.strip()), "")
    return line if len(line) <= limit else line[: limit - 1] + "…"


def database_error_message(exc: BaseException) -> str | None:
    """One line for a database failure or a bad database URL; None when ``exc`` is neither."""
    if isinstance(exc, sae.OperationalError):
        reason = _first_line(str(exc.orig) if exc.orig else str(exc), 200)
        return f"the database failed: {reason} ({DATABASE_HINT})"
    if isinstance(exc, sae.NoSuchModuleError | sae.ArgumentError):
        return f"invalid setting database_url (CHIPWISE_DATABASE_URL): {_first_line(str(exc), 200)}"
    return None
