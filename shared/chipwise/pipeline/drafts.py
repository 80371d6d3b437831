"""``chipwise drafts ACCOUNT``: the credits-application and partner-referral drafts prepared, stored, written to
files and queued for review, in one transaction."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from chipwise.drafts import AccountDrafts, CompanyFacts, prepare_account_drafts, write_files
from chipwise.pipeline._store import store_scope
from chipwise.settings import get_settings

__all__ = ["CompanyFacts", "DraftsWritten", "draft_account"]


@dataclass(frozen=True)
class DraftsWritten:
    drafts: AccountDrafts
    stored: list[dict[str, Any]]
    paths: list[Path]
    review_queued: bool


def draft_account(account: str, facts: CompanyFacts, output: Path) -> DraftsWritten:
    """Prepare the account's drafts from its spend, workloads and findings; store, write and queue them."""
    with store_scope() as session:
        result = prepare_account_drafts(session, account, get_settings(), facts)
        paths = write_files(result.drafts, output)
        stored = [{"id": d.id, "kind": d.kind, "title": d.title, "document": d.document} for d in result.stored]
    return DraftsWritten(drafts=result.drafts, stored=stored, paths=paths, review_queued=result.review is not None)
