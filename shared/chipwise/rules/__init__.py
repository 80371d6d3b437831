"""Rules: a registry of pure rules over resource profiles, a policy of thresholds, and the engine that turns their
drafts into findings in the store.

``evaluate_account(session, account_id=..., region=..., now=...)`` is what the scan calls.
"""

from chipwise.rules.base import FindingDraft, Rule, RuleContext, RuleMeta, RuleParams
from chipwise.rules.engine import evaluate_account, evaluate_profiles
from chipwise.rules.policy import Policy, load_policy, policy_from_mapping
from chipwise.rules.registry import registry

__all__ = [
    "FindingDraft",
    "Policy",
    "Rule",
    "RuleContext",
    "RuleMeta",
    "RuleParams",
    "evaluate_account",
    "evaluate_profiles",
    "load_policy",
    "policy_from_mapping",
    "registry",
]
