"""Accounts and scans."""

from __future__ import annotations

import builtins
from datetime import datetime

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from chipwise.store.tables import Account, Finding, Scan

FINISHED = ("succeeded", "partial")  # a scan with a document the report can show


class AccountRepository:
    def __init__(self, session: Session) -> None:
        self.session = session

    def ensure(self, account_id: str, name: str | None = None, role_arn: str | None = None) -> Account:
        account = self.session.get(Account, account_id)
        if account is None:
            account = Account(account_id=account_id, name=name, role_arn=role_arn)
            self.session.add(account)
            self.session.flush()
        else:
            account.name = name or account.name
            account.role_arn = role_arn or account.role_arn
        return account

    def list(self) -> list[Account]:
        return list(self.session.scalars(select(Account).order_by(Account.account_id)))

    def known_ids(self) -> builtins.list[str]:
        """Every account the store knows: registered, scanned, or with findings (sorted)."""
        ids = set(self.session.scalars(select(Account.account_id)))
        ids.update(self.session.scalars(select(Scan.account_id).distinct()))
        ids.update(self.session.scalars(select(Finding.account_id).distinct()))
        return sorted(ids)


class ScanRepository:
    def __init__(self, session: Session) -> None:
        self.session = session

    def add(self, scan: Scan) -> Scan:
        self.session.add(scan)
        self.session.flush()
        return scan

    def get(self, scan_id: str) -> Scan | None:
        return self.session.get(Scan, scan_id)

    def latest(self, account_id: str | None = None) -> Scan | None:
        stmt = select(Scan).order_by(Scan.started_at.desc()).limit(1)
        if account_id:
            stmt = stmt.where(Scan.account_id == account_id)
        return self.session.scalars(stmt).first()

    def finished_places(self) -> list[tuple[str, str, int]]:
        """(account, region, number of finished scans) for every place the store has a finished scan of."""
        stmt = (
            select(Scan.account_id, Scan.region, func.count())
            .where(Scan.status.in_(FINISHED), Scan.document.is_not(None))
            .group_by(Scan.account_id, Scan.region)
            .order_by(Scan.account_id, Scan.region)
        )
        return [(str(a), str(r), int(n)) for a, r, n in self.session.execute(stmt)]

    def finished_since(self, since: datetime) -> list[Scan]:
        stmt = select(Scan).where(Scan.finished_at >= since).order_by(Scan.finished_at)
        return list(self.session.scalars(stmt))
