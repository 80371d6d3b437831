"""Loading the rules' policy: ``[rules.<rule_id>]`` tables from the settings and TOML files.

Where overrides come from, later ones winning key by key:

1. ``chipwise.toml`` ``[rules.<rule_id>]`` (through the settings, so ``CHIPWISE_RULES__<ID>__<KEY>`` works too);
2. ``settings.thresholds_file`` (a TOML file with the same ``[rules.<rule_id>]`` tables);
3. an explicit file (``--config``).
"""

from __future__ import annotations

import tomllib
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from chipwise.errors import ConfigError
from chipwise.rules.policy import Policy, policy_from_mapping
from chipwise.settings import get_settings


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
