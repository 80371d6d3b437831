"""Accounts and scans."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import select
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.orm import Session

from chipwise.store.tables import Account, Scan


class AccountRepository:
    def __init__(self, session: Session) -> None:
        self.session = session

    def ensure(self, account_id: str, name: str | None = None, role_arn: str | None = None) -> Account:
        """The account's row, created if absent. An insert-if-absent, so two scans of a new account at once both
        go on (a read-then-insert would let the second fail on the primary key)."""
        account = self.session.get(Account, account_id)
        if account is None:
            dialect = self.session.get_bind().dialect.name
            insert = postgresql.insert if dialect == "postgresql" else sqlite.insert
            self.session.execute(
                insert(Account)
                .values(account_id=account_id, name=name, role_arn=role_arn)
                .on_conflict_do_nothing(index_elements=["account_id"])
            )
            account = self.session.get(Account, account_id)
            if account is None:  # pragma: no cover - the row was just inserted or found
                raise LookupError(f"account {account_id} neither inserted nor found")
        account.name = name or account.name
        account.role_arn = role_arn or account.role_arn
        return account

    def list(self) -> list[Account]:
        return list(self.session.scalars(select(Account).order_by(Account.account_id)))


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

    def finished_since(self, since: datetime) -> list[Scan]:
        stmt = select(Scan).where(Scan.finished_at >= since).order_by(Scan.finished_at)
        return list(self.session.scalars(stmt))
