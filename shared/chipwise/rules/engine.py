"""The engine: profiles in, drafts out (pure); :func:`chipwise.pipeline.evaluate.evaluate_account` runs it
against the store.

When two rules fire on one resource and one supersedes the other (an idle endpoint needs deleting, not
rightsizing), only the superseding finding is kept; a "cannot judge" finding never stands beside a judged one (a
rule that judged the resource wins).

An EC2 instance an AWS Batch compute environment launched (``batch_environment``) is not judged on its own: no rule
runs on it, and its verdict says it is judged on its environment (which carries its bill lines and is what a person
changes: Batch would replace an instance stopped on its own). The environment's findings count its dollars once.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from datetime import datetime
from typing import Any

from chipwise.analyse.profiles import ResourceProfile
from chipwise.catalog import get_assumptions, get_catalog, get_model_families
from chipwise.models.verdicts import ResourceVerdict
from chipwise.rules.base import FindingDraft, Rule, RuleContext
from chipwise.rules.outcomes import resource_verdict, rule_outcome

CANNOT_JUDGE = "cannot_judge"  # the rule whose finding says a resource cannot be judged


def default_context(now: datetime) -> RuleContext:
    return RuleContext(now=now, catalog=get_catalog(), assumptions=get_assumptions(), families=get_model_families())


def evaluate_profiles(
    profiles: Iterable[ResourceProfile], rules: Sequence[Rule[Any]], ctx: RuleContext
) -> list[FindingDraft]:
    """Every rule on every profile; superseded findings dropped. Order: resource, then rule id."""
    return assess_profiles(profiles, rules, ctx)[0]


def assess_profiles(
    profiles: Iterable[ResourceProfile], rules: Sequence[Rule[Any]], ctx: RuleContext
) -> tuple[list[FindingDraft], list[ResourceVerdict]]:
    """Every rule on every profile: the drafts (superseded findings dropped) and, per resource, each rule's outcome
    (fired, passed, lacked data, did not apply) and the one verdict they add up to."""
    drafts: list[FindingDraft] = []
    verdicts: list[ResourceVerdict] = []
    supersedes = {rule.meta.id: set(rule.meta.supersedes) for rule in rules}
    titles = {rule.meta.id: rule.meta.title for rule in rules}
    for profile in profiles:
        judged = rules if not profile.batch_environment else ()  # judged on its Batch compute environment
        found = [d for rule in judged if (d := rule.evaluate(profile, ctx)) is not None]
        beaten = {loser for d in found for loser in supersedes[d.rule_id]}
        if any(d.rule_id != CANNOT_JUDGE for d in found):  # a judged finding stands alone on its resource
            beaten.add(CANNOT_JUDGE)
        drafts.extend(d for d in found if d.rule_id not in beaten)
        fired = {d.rule_id for d in found}
        outcomes = [
            rule_outcome(rule.meta.id, profile, ctx, fired=rule.meta.id in fired, superseded=rule.meta.id in beaten)
            for rule in rules
        ]
        verdicts.append(resource_verdict(profile, outcomes, ctx, titles))
    return drafts, verdicts
