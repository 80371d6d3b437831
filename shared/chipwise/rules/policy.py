"""The policy: each rule's thresholds, defaults overridden by ``[rules.<rule_id>]`` tables.

Pure: the overrides arrive as a mapping (:func:`chipwise.pipeline.policy.load_policy` reads them from the
settings and TOML files).

An unknown rule id or threshold, or a value of the wrong type, is a :class:`~chipwise.errors.ConfigError` naming
it: a typo never silently leaves a default in place.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pydantic import ValidationError

from chipwise.errors import ConfigError
from chipwise.rules.base import Rule, RuleParams
from chipwise.rules.registry import Registry, registry


class Policy:
    """Validated params for every registered rule."""

    def __init__(self, params: Mapping[str, RuleParams], rules: Registry) -> None:
        self._params = dict(params)
        self._registry = rules

    def params(self, rule_id: str) -> RuleParams:
        return self._params[rule_id]

    def rules(self) -> list[Rule[Any]]:
        """An instance of every enabled rule, in id order."""
        found = []
        for cls in self._registry.all():
            params = self._params[cls.meta.id]
            if params.enabled:
                found.append(cls(params))
        return found

    def enabled_ids(self) -> list[str]:
        return [cls.meta.id for cls in self._registry.all() if self._params[cls.meta.id].enabled]

    def overrides(self) -> dict[str, dict[str, Any]]:
        """Thresholds that differ from the defaults, by rule (for ``chipwise rules``)."""
        changed: dict[str, dict[str, Any]] = {}
        for cls in self._registry.all():
            default = cls.params_model().model_dump()
            current = self._params[cls.meta.id].model_dump()
            diff = {k: v for k, v in current.items() if default.get(k) != v}
            if diff:
                changed[cls.meta.id] = diff
        return changed

    @classmethod
    def default(cls) -> Policy:
        return policy_from_mapping({})


def policy_from_mapping(overrides: Mapping[str, Any], origin: str = "policy") -> Policy:
    """A policy from ``{rule_id: {threshold: value}}`` (missing rules and keys keep their defaults)."""
    rules = registry()
    unknown = sorted(set(overrides) - set(rules.ids()))
    if unknown:
        named = f"rule{'' if len(unknown) == 1 else 's'} {', '.join(unknown)}"
        raise ConfigError(f"{origin}: unknown {named}; `chipwise rules` lists the rule ids")
    params: dict[str, RuleParams] = {}
    for cls in rules.all():
        given = overrides.get(cls.meta.id) or {}
        if not isinstance(given, Mapping):
            raise ConfigError(f"{origin}: [rules.{cls.meta.id}] must be a table of thresholds")
        try:
            params[cls.meta.id] = cls.params_model.model_validate(dict(given))
        except ValidationError as exc:
            raise ConfigError(f"{origin}: {_describe(cls.meta.id, exc)}") from exc
    return Policy(params, rules)


def _describe(rule_id: str, exc: ValidationError) -> str:
    parts = []
    for error in exc.errors():
        key = ".".join(str(p) for p in error["loc"])
        message = "unknown threshold" if error["type"] == "extra_forbidden" else error["msg"]
        parts.append(f"rules.{rule_id}.{key}: {message}")
    return "; ".join(parts)
