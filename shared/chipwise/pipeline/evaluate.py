"""Findings evaluation against the store: profile an account's resources, run the enabled rules, apply the
findings lifecycle."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, replace
from datetime import datetime
from typing import TypedDict, Unpack

from chipwise.analyse.profile_builder import profile_batches
from chipwise.collect.metrics import metric_window
from chipwise.models.findings import FindingDocument
from chipwise.models.verdicts import ResourceVerdict
from chipwise.observability import logger
from chipwise.pipeline.policy import load_policy
from chipwise.rules.base import FindingDraft
from chipwise.rules.engine import assess_profiles, default_context
from chipwise.rules.policy import Policy
from chipwise.settings import get_settings
from chipwise.store import Session
from chipwise.store.repositories.accounts import ScanRepository
from chipwise.store.repositories.bill import BillRepository
from chipwise.store.repositories.finding_rows import OPEN
from chipwise.store.repositories.findings import FindingRepository
from chipwise.store.repositories.profile_inputs import ProfileInputRepository


@dataclass(frozen=True)
class Reevaluation:
    """``findings evaluate`` for one account and region: the open findings, and the moment and prices they were
    judged at (the latest finished scan's, so an unchanged store gives the scan's findings again)."""

    account_id: str
    region: str
    findings: list[FindingDocument]
    as_of: datetime
    priced_from_bill: bool
    scan_id: str | None


def reevaluate_account(
    session: Session, *, account_id: str, region: str, now: datetime, policy: Policy | None = None
) -> Reevaluation:
    """Run the rules again on what the store holds, as the latest finished scan of ``account_id`` in ``region``
    ran them: at its moment (``as_of``), over its look-back window, priced from the stored bill when it was. The
    rates come from the stored data, never from the time of day: an unchanged store reproduces the scan's findings
    byte for byte. Without a finished scan, the rules judge at ``now`` with the default window and prices."""
    document = ScanRepository(session).latest_document(account_id, region)
    if document is None:
        found = evaluate_account(session, account_id=account_id, region=region, now=now, policy=policy)
        return Reevaluation(account_id, region, found, now, False, None)
    as_of = document.as_of or document.started_at
    bill = document.costs.source == "bill"
    found = evaluate_account(
        session,
        account_id=account_id,
        region=region,
        now=as_of,
        policy=policy,
        lookback_days=(document.window.end - document.window.start).days or None,
        bill=bill,
    )
    return Reevaluation(account_id, region, found, as_of, bill, document.scan_id)


class Options(TypedDict, total=False):
    """How an evaluation judges: the policy (the configured one when None), the look-back window in days (the
    settings' when None), the scan it belongs to, and whether each resource the stored bill names is priced at its
    own effective rate."""

    policy: Policy | None
    lookback_days: int | None
    scan_id: str | None
    bill: bool


def evaluate_account(
    session: Session, *, account_id: str, region: str, now: datetime, **options: Unpack[Options]
) -> list[FindingDocument]:
    """Profile the account's resources in ``region`` over the look-back window ending at ``now``, run every
    enabled rule, apply the findings lifecycle in the store and return the open findings, top savings first."""
    return assess_account(session, account_id=account_id, region=region, now=now, **options)[0]


def assess_account(
    session: Session, *, account_id: str, region: str, now: datetime, **options: Unpack[Options]
) -> tuple[list[FindingDocument], list[ResourceVerdict]]:
    """:func:`evaluate_account`, and one verdict per resource with each rule's outcome on it. The resources are
    profiled and judged a batch at a time (:func:`profile_batches`): only the drafts and verdicts are kept, so the
    memory the rules take stays flat in the number of resources."""
    policy = options.get("policy") or load_policy()
    bill = options.get("bill", False)
    start, end = metric_window(now, options.get("lookback_days") or get_settings().lookback_days)
    ctx = default_context(now)
    if bill:  # a type the catalog cannot price takes the public on-demand rate the account's bill states
        ctx = replace(
            ctx,
            catalog=ctx.catalog.with_account_prices(BillRepository(session).public_rates(account_id, region), region),
        )
    source = ProfileInputRepository(session, account_id=account_id, region=region, bill=bill)
    rules = policy.rules()
    drafts: list[FindingDraft] = []
    verdicts: list[ResourceVerdict] = []
    elsewhere: list[str] = []  # resources judged on another (an instance a Batch compute environment launched)
    for batch in profile_batches(source, start=start, end=end, catalog=ctx.catalog):
        found, judged = assess_profiles(batch, rules, ctx)
        drafts.extend(found)
        verdicts.extend(judged)
        elsewhere.extend(p.key for p in batch if p.batch_environment)
    repository = FindingRepository(session)
    result = repository.apply(
        account_id=account_id,
        region=region,
        drafts=drafts,
        rule_ids=policy.enabled_ids(),
        now=now,
        scan_id=options.get("scan_id"),
        judged_elsewhere=elsewhere,
    )
    by_rule: dict[str, int] = defaultdict(int)
    for draft in drafts:
        by_rule[draft.rule_id] += 1
    logger().info(
        "rules evaluated",
        extra={
            "account_id": account_id,
            "region": region,
            "resources": len(verdicts),
            "findings": len(drafts),
            "by_rule": dict(by_rule),
            "new": result.new,
            "resolved": result.resolved,
        },
    )
    return repository.documents(account_id=account_id, region=region, statuses=(OPEN,)), verdicts
