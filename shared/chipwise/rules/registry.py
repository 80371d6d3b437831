"""The rule registry: one module per rule in :mod:`chipwise.rules.builtin`, each registered by a decorator.

Registration checks what a reviewer would: the rule id equals its module name, ids are unique, the params model
rejects unknown keys and every supersedes target exists. Adding a rule means adding one module and its title's line
in :mod:`chipwise.rules.titles` (so that naming a rule never loads the registry; the registry tests hold the table
to the rules' own titles); nothing else central is edited (``builtin/__init__.py`` imports every module in its
folder).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any, TypeVar

from pydantic import ValidationError

from chipwise.rules.titles import rule_title as rule_title  # where it was first defined; callers use titles

if TYPE_CHECKING:  # the rules' base (profiles, catalog, models) is loaded with the rule modules, not with this one
    from chipwise.rules.base import Rule, RuleMeta

R = TypeVar("R", bound="type[Rule[Any]]")


class RegistryError(Exception):
    """A rule module breaks the registry's contract (a programming error, caught by the registry tests)."""


class Registry:
    def __init__(self) -> None:
        self._rules: dict[str, type[Rule[Any]]] = {}

    def register(self, cls: R) -> R:
        module = cls.__module__.rsplit(".", 1)[-1]
        meta = cls.meta = _stated_once(cls.meta, module, cls.__doc__)
        if meta.id != module:
            raise RegistryError(f"rule {meta.id!r} lives in module {module!r}: the module must be named after it")
        if meta.id in self._rules and self._rules[meta.id] is not cls:
            raise RegistryError(f"rule {meta.id!r} is registered twice")
        if getattr(cls, "params_model", None) is None:
            raise RegistryError(f"rule {meta.id!r} declares no params model (class {cls.__name__}(Rule[ItsParams]))")
        if cls.params_model.model_config.get("extra") != "forbid":
            raise RegistryError(f"rule {meta.id!r}: its params model must reject unknown keys (extra='forbid')")
        self._rules[meta.id] = cls
        return cls

    def get(self, rule_id: str) -> type[Rule[Any]] | None:
        return self._rules.get(rule_id)

    def ids(self) -> list[str]:
        return sorted(self._rules)

    def all(self) -> list[type[Rule[Any]]]:
        return [self._rules[i] for i in self.ids()]

    def check(self) -> None:
        """Cross-rule checks once every module is loaded: supersedes names known rules."""
        for cls in self._rules.values():
            unknown = sorted(set(cls.meta.supersedes) - set(self._rules))
            if unknown:
                raise RegistryError(f"rule {cls.meta.id!r} supersedes unknown rules: {', '.join(unknown)}")


def _stated_once(meta: RuleMeta, module: str, docstring: str | None) -> RuleMeta:
    """``meta`` with what a rule module states once filled in (the id: its module's name; the rationale: its class
    docstring, on one line), validated whole."""
    from chipwise.rules.base import RuleMeta

    if meta.id and meta.rationale:
        return meta
    rationale = meta.rationale or " ".join((docstring or "").split())
    try:
        return RuleMeta.model_validate({**meta.model_dump(), "id": meta.id or module, "rationale": rationale})
    except ValidationError as exc:
        raise RegistryError(f"rule module {module!r}: its metadata is invalid (a rationale docstring?): {exc}") from exc


REGISTRY = Registry()
register = REGISTRY.register


def registry() -> Registry:
    """The registry with every rule module of :mod:`chipwise.rules.builtin` loaded."""
    importlib.import_module("chipwise.rules.builtin")
    REGISTRY.check()
    return REGISTRY
