"""Each rule's title by id, so a surface that names a rule (the findings table, the report, the digest, the
drafts) does not load the registry: that imports every rule module (their params models, the profiles, sizing and
the catalog), which a read command otherwise never runs.

Each rule still states its title (``RuleMeta.title``); ``tests/unit/rules/test_rules_registry.py`` holds this table
to the registry's titles both ways: adding a rule module means adding its line here."""

from __future__ import annotations

from chipwise.presentation import rule_label

RULE_TITLES: dict[str, str] = {
    "accelerator_off_hours": "Accelerator capacity running through its off hours",
    "cannot_judge": "Spend that cannot be judged",
    "capacity_held_idle": "Reserved or held accelerator capacity nothing uses",
    "gpu_idle": "Idle GPU instance or endpoint",
    "gpu_inference_portable": "GPU inference portable to Inferentia",
    "gpu_training_portable": "GPU training portable to Trainium",
    "inferentia_idle": "Idle Inferentia endpoint or instance",
    "inferentia_underutilized": "Underutilised Inferentia capacity",
    "neuron_telemetry_missing": "Neuron telemetry missing",
    "spiky_inference_bedrock": "Spiky inference better on Bedrock",
    "trainium_serving_inference": "Trainium serving inference",
}


def rule_title(rule_id: str) -> str:
    """A rule's human title ("Idle Inferentia endpoint or instance"), for every surface that names a rule; an id
    no rule has any more reads as words."""
    return RULE_TITLES.get(rule_id) or rule_label(rule_id)
