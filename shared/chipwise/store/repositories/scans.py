"""Finished scans: the latest scan document of an account (its costs feed the ledger's spend line)."""

from __future__ import annotations

from sqlalchemy import select
from sqlalchemy.orm import Session

from chipwise.models.scan import ScanDocument
from chipwise.store.tables import Scan

FINISHED = ("succeeded", "partial")


def latest_scan_document(session: Session, account_id: str | None, region: str | None = None) -> ScanDocument | None:
    """The document of the latest finished scan (by its window) of the account (any when None), in ``region`` when
    given."""
    stmt = select(Scan).where(Scan.status.in_(FINISHED), Scan.document.is_not(None))
    if account_id is not None:
        stmt = stmt.where(Scan.account_id == account_id)
    if region is not None:
        stmt = stmt.where(Scan.region == region)
    scan = session.scalars(
        stmt.order_by(Scan.window_end.desc(), Scan.started_at.desc(), Scan.id.desc()).limit(1)
    ).first()
    return ScanDocument.model_validate(scan.document) if scan is not None and scan.document else None


def window_hours(document: ScanDocument) -> int:
    """The hours of a scan's cost window (whole UTC days)."""
    return document.window.hours
