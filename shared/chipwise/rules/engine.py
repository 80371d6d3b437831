"""The engine: profiles in, drafts out (pure); and :func:`evaluate_account`, which does it against the store.

When two rules fire on one resource and one supersedes the other (an idle endpoint needs deleting, not
rightsizing), only the superseding finding is kept.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Sequence
from datetime import datetime
from typing import Any

from sqlalchemy.orm import Session

from chipwise.analyse.profiles import ResourceProfile, build_profiles
from chipwise.catalog import get_catalog, get_economics, get_model_families
from chipwise.collect.metrics import metric_window
from chipwise.models.findings import FindingDocument
from chipwise.observability import logger
from chipwise.rules.base import FindingDraft, Rule, RuleContext
from chipwise.rules.policy import Policy, load_policy
from chipwise.settings import get_settings
from chipwise.store.repositories.findings import OPEN, FindingRepository


def default_context(now: datetime) -> RuleContext:
    return RuleContext(now=now, catalog=get_catalog(), economics=get_economics(), families=get_model_families())


def evaluate_profiles(
    profiles: Iterable[ResourceProfile], rules: Sequence[Rule[Any]], ctx: RuleContext
) -> list[FindingDraft]:
    """Every rule on every profile; superseded findings dropped. Order: resource, then rule id."""
    drafts: list[FindingDraft] = []
    supersedes = {rule.meta.id: set(rule.meta.supersedes) for rule in rules}
    for profile in profiles:
        found = [d for rule in rules if (d := rule.evaluate(profile, ctx)) is not None]
        beaten = {loser for d in found for loser in supersedes[d.rule_id]}
        drafts.extend(d for d in found if d.rule_id not in beaten)
    return drafts


def evaluate_account(
    session: Session,
    *,
    account_id: str,
    region: str,
    now: datetime,
    policy: Policy | None = None,
    lookback_days: int | None = None,
    scan_id: str | None = None,
) -> list[FindingDocument]:
    """Profile the account's resources in ``region`` over the look-back window ending at ``now``, run every
    enabled rule, apply the findings lifecycle in the store and return the open findings, top savings first."""
    policy = policy or load_policy()
    start, end = metric_window(now, lookback_days or get_settings().lookback_days)
    ctx = default_context(now)
    profiles = build_profiles(session, account_id=account_id, region=region, start=start, end=end, catalog=ctx.catalog)
    rules = policy.rules()
    drafts = evaluate_profiles(profiles, rules, ctx)
    repository = FindingRepository(session)
    result = repository.apply(
        account_id=account_id, region=region, drafts=drafts, rule_ids=policy.enabled_ids(), now=now, scan_id=scan_id
    )
    by_rule: dict[str, int] = defaultdict(int)
    for draft in drafts:
        by_rule[draft.rule_id] += 1
    logger().info(
        "rules evaluated",
        extra={
            "account_id": account_id,
            "region": region,
            "resources": len(profiles),
            "findings": len(drafts),
            "by_rule": dict(by_rule),
            "new": result.new,
            "resolved": result.resolved,
        },
    )
    rows = repository.find(account_id=account_id, region=region, statuses=(OPEN,))
    return [FindingDocument.from_row(row) for row in rows]
