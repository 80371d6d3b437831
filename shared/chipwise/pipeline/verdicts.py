"""The use case behind ``chipwise resources`` and ``chipwise findings explain``: the latest scan's verdicts,
settled by the findings as they stand now (after the benchmarks), by :mod:`chipwise.analyse.verdicts`."""

from __future__ import annotations

from chipwise.analyse.verdicts import SETTLED_STATUSES, settle_verdicts
from chipwise.errors import NotFound
from chipwise.models.scan import ScanDocument
from chipwise.rules.registry import rule_title
from chipwise.store import Session
from chipwise.store.repositories.accounts import ScanRepository
from chipwise.store.repositories.findings import FindingRepository


def latest_verdicts(session: Session, account_id: str | None, region: str | None) -> ScanDocument:
    """The latest finished scan's document, its ``verdicts`` settled by the account's findings as they stand."""
    document = ScanRepository(session).latest_document(account_id, region)
    if document is None:
        raise NotFound("no finished scan in the store: run `chipwise scan` (or `make demo`) first")
    if not document.verdicts:
        raise NotFound(f"scan {document.scan_id[:8]} stored no verdicts (it predates them): scan again")
    findings = FindingRepository(session).documents(
        account_id=document.account_id, region=document.region, statuses=SETTLED_STATUSES
    )
    return document.model_copy(update={"verdicts": settle_verdicts(document.verdicts, findings, rule_title)})
