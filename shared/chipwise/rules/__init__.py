"""Rules: a registry of pure rules over resource profiles, a policy of thresholds, and the engine that turns
profiles into finding drafts. Rules never touch the store, AWS or the settings:
:func:`chipwise.pipeline.evaluate.evaluate_account` runs them against the store.
"""

from chipwise.models.findings import FindingDraft
from chipwise.rules.base import Rule, RuleContext, RuleMeta, RuleParams
from chipwise.rules.engine import evaluate_profiles
from chipwise.rules.policy import Policy, policy_from_mapping
from chipwise.rules.registry import registry

__all__ = [
    "FindingDraft",
    "Policy",
    "Rule",
    "RuleContext",
    "RuleMeta",
    "RuleParams",
    "evaluate_profiles",
    "policy_from_mapping",
    "registry",
]
