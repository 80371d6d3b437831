"""Store retention: what is past ``history_retention_days``, ``message_retention_days`` and
``audit_retention_days`` deleted in one transaction (``chipwise db prune``, and the daily retention job)."""

from __future__ import annotations

from datetime import datetime

from chipwise.clock import utcnow
from chipwise.observability import logger
from chipwise.settings import Settings, get_settings
from chipwise.store import session_scope
from chipwise.store.repositories.retention import Horizons, RetentionRepository


def horizons(settings: Settings) -> Horizons:
    return Horizons(
        history=settings.history_retention_days,
        messages=settings.message_retention_days,
        audit=settings.audit_retention_days,
    )


def prune_store(
    now: datetime | None = None, settings: Settings | None = None, url: str | None = None
) -> dict[str, int]:
    """Delete every row past its horizon; the rows deleted per table."""
    settings = settings or get_settings()
    with session_scope(url or settings.database_url) as session:
        deleted = RetentionRepository(session).prune(now or utcnow(), horizons(settings))
    logger().info("store pruned", extra={"deleted": deleted})
    return deleted
