"""Rules: a registry of pure rules over resource profiles, a policy of thresholds, and the engine that turns
profiles into finding drafts. Rules never touch the store, AWS or the settings:
:func:`chipwise.pipeline.evaluate.evaluate_account` runs them against the store.

Importing this package loads the registry's module only (light: the rule modules load on :func:`registry`); the
names below are imported from their modules when first used, so naming a rule (:mod:`chipwise.rules.titles`) does
not load the engine, the profiles or the catalog.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

from chipwise.rules.registry import registry

if TYPE_CHECKING:
    from chipwise.models.findings import FindingDraft
    from chipwise.rules.base import Rule, RuleContext, RuleMeta, RuleParams
    from chipwise.rules.engine import evaluate_profiles
    from chipwise.rules.policy import Policy, policy_from_mapping

# Each lazily imported name's module.
_MODULE_OF = {
    "FindingDraft": "chipwise.models.findings",
    "Policy": "chipwise.rules.policy",
    "Rule": "chipwise.rules.base",
    "RuleContext": "chipwise.rules.base",
    "RuleMeta": "chipwise.rules.base",
    "RuleParams": "chipwise.rules.base",
    "evaluate_profiles": "chipwise.rules.engine",
    "policy_from_mapping": "chipwise.rules.policy",
}

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


def __getattr__(name: str) -> object:
    module = _MODULE_OF.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value
