"""Scans whose notifications were decided (``notified_scans``): a replayed ``ScanCompleted`` decides nothing again."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import select
from sqlalchemy.dialects import postgresql, sqlite

from chipwise.store.repositories.records import Repository
from chipwise.store.tables import NotifiedScan


class NotifiedScanRepository(Repository):
    def claim(self, scan_id: str, account_id: str, now: datetime) -> bool:
        """Record that ``scan_id``'s notifications are being decided in this transaction; False when an earlier (or
        a concurrent, committed) run already did. An insert-if-absent on the primary key: on PostgreSQL a concurrent
        claim waits for the first transaction and then finds the row, SQLite serialises writers."""
        dialect = self.session.get_bind().dialect.name
        insert = postgresql.insert if dialect == "postgresql" else sqlite.insert
        inserted = self.session.execute(
            insert(NotifiedScan)
            .values(scan_id=scan_id, account_id=account_id, notified_at=now)
            .on_conflict_do_nothing(index_elements=["scan_id"])
            .returning(NotifiedScan.scan_id)  # a row back only when inserted (rowcount is not reliable everywhere)
        ).scalar_one_or_none()
        return inserted is not None

    def notified(self, scan_id: str) -> bool:
        return self.session.scalar(select(NotifiedScan.scan_id).where(NotifiedScan.scan_id == scan_id)) is not None
