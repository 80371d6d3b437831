"""The registry's contract, checked over every registered rule (adding a rule is held to it automatically)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import ClassVar

import pytest
from pydantic import ConfigDict, ValidationError

from chipwise.analyse.profiles import ResourceProfile
from chipwise.rules import registry
from chipwise.rules.base import RULE_ID_PATTERN, FindingDraft, Rule, RuleContext, RuleMeta, RuleParams
from chipwise.rules.registry import Registry, RegistryError

CONTRACT_IDS = {
    "inferentia_idle",
    "inferentia_underutilized",
    "trainium_serving_inference",
    "gpu_training_portable",
    "gpu_inference_portable",
    "gpu_idle",
    "spiky_inference_bedrock",
    "neuron_telemetry_missing",
}
RULES = registry().all()


def test_the_contract_rule_ids_are_registered() -> None:
    assert set(registry().ids()) >= CONTRACT_IDS


@pytest.mark.parametrize("rule", RULES, ids=lambda r: r.meta.id)
def test_each_rule_is_named_after_its_module_and_has_a_test_module(rule: type[Rule[RuleParams]]) -> None:
    assert re.match(RULE_ID_PATTERN, rule.meta.id)
    assert rule.__module__ == f"chipwise.rules.builtin.{rule.meta.id}"
    assert (Path(__file__).parent / f"test_rules_{rule.meta.id}.py").is_file()


@pytest.mark.parametrize("rule", RULES, ids=lambda r: r.meta.id)
def test_each_params_model_rejects_unknown_keys_and_documents_its_thresholds(rule: type[Rule[RuleParams]]) -> None:
    with pytest.raises(ValidationError, match="extra"):
        rule.params_model.model_validate({"no_such_threshold": 1})
    for name, field in rule.params_model.model_fields.items():
        assert field.description, f"{rule.meta.id}.{name} has no description"


@pytest.mark.parametrize("rule", RULES, ids=lambda r: r.meta.id)
def test_each_rule_metadata_is_valid_and_its_supersedes_exist(rule: type[Rule[RuleParams]]) -> None:
    assert RuleMeta.model_validate(rule.meta.model_dump()) == rule.meta
    assert set(rule.meta.supersedes) <= set(registry().ids()) - {rule.meta.id}


def test_metadata_is_validated() -> None:
    with pytest.raises(ValidationError):
        RuleMeta(id="Bad-Id", title="x", severity="high", rationale="too short", applies_to="all")  # type: ignore[arg-type]


def _rule(rule_id: str, params: type[RuleParams] = RuleParams) -> type[Rule[RuleParams]]:
    class Probe(Rule[RuleParams]):
        meta: ClassVar[RuleMeta] = RuleMeta(
            id=rule_id,
            title="A probe",
            severity="low",
            rationale="A rule that only tests the registry.",
            applies_to="nothing",
        )
        params_model = params

        def evaluate(self, profile: ResourceProfile, ctx: RuleContext) -> FindingDraft | None:
            return None

    Probe.__module__ = "tests.probe_rule"
    return Probe


def test_the_registry_refuses_a_rule_named_unlike_its_module_or_registered_twice() -> None:
    # Given an empty registry and a rule living in module "probe_rule"
    fresh = Registry()
    # When rules are registered
    # Then the id must equal the module name, and a second rule with the same id is refused
    with pytest.raises(RegistryError, match="module"):
        fresh.register(_rule("other_name"))
    fresh.register(_rule("probe_rule"))
    with pytest.raises(RegistryError, match="twice"):
        fresh.register(_rule("probe_rule"))


def test_the_registry_refuses_params_that_accept_unknown_keys() -> None:
    class Loose(RuleParams):
        model_config = ConfigDict(extra="allow")

    with pytest.raises(RegistryError, match="extra"):
        Registry().register(_rule("probe_rule", Loose))


def test_supersedes_must_name_known_rules() -> None:
    fresh = Registry()
    probe = _rule("probe_rule")
    probe.meta = probe.meta.model_copy(update={"supersedes": ("missing_rule",)})
    fresh.register(probe)
    with pytest.raises(RegistryError, match="missing_rule"):
        fresh.check()


def test_the_titles_table_names_every_rule_as_the_rule_does() -> None:
    """Surfaces name rules from chipwise.rules.titles (without loading the registry): it must hold every registered
    rule's own title and no other id."""
    from chipwise.rules.titles import RULE_TITLES, rule_title

    assert {rule.meta.id: rule.meta.title for rule in RULES} == RULE_TITLES
    assert rule_title("gpu_idle") == "Idle GPU instance or endpoint"
    assert rule_title("a_retired_rule") == "A retired rule"
