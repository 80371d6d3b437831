"""The policy: each rule's thresholds, defaults overridden by ``[rules.<rule_id>]`` tables.

Where overrides come from, later ones winning key by key:

1. ``chipwise.toml`` ``[rules.<rule_id>]`` (through the settings, so ``CHIPWISE_RULES__<ID>__<KEY>`` works too);
2. ``settings.thresholds_file`` (a TOML file with the same ``[rules.<rule_id>]`` tables);
3. an explicit file (``--config``).

An unknown rule id or threshold, or a value of the wrong type, is a :class:`~chipwise.errors.ConfigError` naming
it: a typo never silently leaves a default in place.
"""

from __future__ import annotations

import tomllib
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from chipwise.errors import ConfigError
from chipwise.rules.base import Rule, RuleParams
from chipwise.rules.registry import Registry, registry
from chipwise.settings import get_settings


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
        raise ConfigError(f"{origin}: unknown rule(s) {', '.join(unknown)}; `chipwise rules` lists the rule ids")
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


def read_policy_file(path: Path) -> dict[str, Any]:
    """The ``[rules.*]`` tables of a TOML policy file."""
    try:
        document = tomllib.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise ConfigError(f"cannot read the policy file {path}: {exc.strerror or exc}") from exc
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"the policy file {path} is not valid TOML: {exc}") from exc
    rules = document.get("rules", {})
    if not isinstance(rules, dict):
        raise ConfigError(f"the policy file {path}: `rules` must be a table of [rules.<rule_id>] tables")
    return rules


def merge(*layers: Mapping[str, Any]) -> dict[str, dict[str, Any]]:
    """Rule tables merged key by key, later layers winning."""
    merged: dict[str, dict[str, Any]] = {}
    for layer in layers:
        for rule_id, table in layer.items():
            if not isinstance(table, Mapping):
                raise ConfigError(f"[rules.{rule_id}] must be a table of thresholds, not {table!r}")
            merged.setdefault(rule_id, {}).update(table)
    return merged


def load_policy(config: Path | None = None) -> Policy:
    """The policy from the settings (``chipwise.toml`` ``[rules.*]``, ``thresholds_file``) and ``config``."""
    settings = get_settings()
    layers: list[Mapping[str, Any]] = [settings.rules]
    origins = ["chipwise.toml [rules]"]
    for path in (settings.thresholds_file, config):
        if path is not None:
            layers.append(read_policy_file(Path(path)))
            origins.append(str(path))
    return policy_from_mapping(merge(*layers), origin=" + ".join(origins))
