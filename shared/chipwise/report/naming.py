"""Where a scan's HTML report lives: one file per scan, named by account and scan time (stable, sortable)."""

from __future__ import annotations

from datetime import datetime

from chipwise.store import Session
from chipwise.store.repositories.accounts import ScanRecord, ScanRepository


def report_filename(account_id: str, region: str, started_at: datetime) -> str:
    """``chipwise-report-<account>-<region>-<YYYYmmddTHHMMZ>.html``."""
    return f"chipwise-report-{account_id}-{region}-{started_at:%Y%m%dT%H%MZ}.html"


def latest_scan(session: Session, account_id: str) -> ScanRecord | None:
    """The account's most recent finished scan (any region), or None."""
    return ScanRepository(session).latest_finished(account_id, with_document=False)


def report_link(session: Session, account_id: str, base_url: str | None) -> str | None:
    """The published report of the account's latest scan under ``base_url``, or None without one."""
    if not base_url:
        return None
    scan = latest_scan(session, account_id)
    if scan is None:
        return None
    return f"{base_url.rstrip('/')}/{report_filename(scan.account_id, scan.region, scan.started_at)}"


def store_accounts(session: Session) -> int:
    """How many accounts the store holds a finished scan of (more than one: ``chipwise report`` writes the
    organisation's report)."""
    return len({account for account, _, _ in ScanRepository(session).finished_places()})
