"""What the notifications read: an account's open and recently resolved findings, benchmark results recorded
since a moment, the owner fields of resources, and when the last digest was queued (:class:`DigestRepository`)."""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime
from typing import Any

from sqlalchemy import func, select

from chipwise.store.repositories.findings import (
    FindingRecord,
    RecommendationRecord,
    finding_record,
    recommendation_record,
)
from chipwise.store.repositories.records import Repository
from chipwise.store.tables import Finding, OutboxMessage, Recommendation, Resource

_CHUNK = 500


class DigestRepository(Repository):
    def account_ids_with_findings(self) -> list[str]:
        """Accounts that have any finding, in order."""
        return list(self.session.scalars(select(Finding.account_id).distinct().order_by(Finding.account_id)))

    def resource_owner_fields(self, arns: Iterable[str]) -> list[tuple[str, dict[str, Any], Any]]:
        """(arn, tags, hints) of each resource in ``arns`` (read in chunks)."""
        wanted = list(set(arns))
        found: list[tuple[str, dict[str, Any], Any]] = []
        for start in range(0, len(wanted), _CHUNK):
            chunk = wanted[start : start + _CHUNK]
            rows = self.session.execute(
                select(Resource.arn, Resource.tags, Resource.hints).where(Resource.arn.in_(chunk))
            )
            found.extend((arn, tags or {}, hints) for arn, tags, hints in rows)
        return found

    def open_or_resolved_since(self, account_id: str, since: datetime) -> list[FindingRecord]:
        """An account's open findings and those resolved after ``since``."""
        stmt = select(Finding).where(
            Finding.account_id == account_id,
            (Finding.status == "open") | ((Finding.status == "resolved") & (Finding.resolved_at > since)),
        )
        return [finding_record(row) for row in self.session.scalars(stmt)]

    def recommendations_since(
        self, account_id: str, source: str, since: datetime
    ) -> list[tuple[RecommendationRecord, FindingRecord]]:
        """An account's recommendations of ``source`` made after ``since``, each with its finding, oldest first."""
        rows = self.session.execute(
            select(Recommendation, Finding)
            .join(Finding, Finding.id == Recommendation.finding_id)
            .where(
                Finding.account_id == account_id,
                Recommendation.source == source,
                Recommendation.created_at > since,
            )
            .order_by(Recommendation.created_at)
        ).all()
        return [(recommendation_record(rec), finding_record(finding)) for rec, finding in rows]

    def last_queued_at(self, kind: str, account_id: str | None) -> datetime | None:
        """When the newest outbox row of ``kind`` for the account (None: of no account, e.g. a team digest) was
        queued."""
        stmt = select(func.max(OutboxMessage.created_at)).where(
            OutboxMessage.kind == kind, OutboxMessage.account_id == account_id
        )
        return self.session.scalar(stmt)

    def outbox_key_with_prefix(self, prefix: str) -> bool:
        """Whether any outbox row's dedupe key starts with ``prefix``."""
        stmt = select(OutboxMessage.id).where(OutboxMessage.dedupe_key.startswith(prefix, autoescape=True)).limit(1)
        return self.session.scalar(stmt) is not None
