"""The engine: every enabled rule on every profile; a superseding finding (idle) hides the moot one (rightsize,
telemetry, porting) on the same resource."""

from __future__ import annotations

from rules_factories import GIB, ctx, flat, profile

from chipwise.analyse.metric_keys import NEURON_CORE, NEURON_MONITOR
from chipwise.analyse.profiles import Coverage
from chipwise.pipeline.policy import load_policy
from chipwise.rules import evaluate_profiles, policy_from_mapping


def test_an_idle_finding_supersedes_rightsizing_and_telemetry_on_the_same_resource() -> None:
    # Given an inf2.48xlarge endpoint without requests and at 0.2 % NeuronCores (idle and "underutilised"), and an
    # endpoint with no Neuron telemetry and no requests (idle and telemetry-less)
    oversized = profile(
        "big",
        kind="sagemaker_endpoint",
        instance_type="ml.inf2.48xlarge",
        rate="15.58",
        neuron_util=flat(0.2),
        neuron_memory_bytes=flat(20 * GIB),
    )
    blind = profile(
        "blind",
        kind="sagemaker_endpoint",
        instance_type="ml.inf2.xlarge",
        rate="0.99",
        coverage={
            NEURON_CORE: Coverage(False, 0),
            NEURON_MONITOR: Coverage(False, 0),
            ("AWS/SageMaker", "Invocations"): Coverage(True, 0),
        },
    )
    rules = load_policy().rules()
    # When the engine evaluates them
    drafts = evaluate_profiles([oversized, blind], rules, ctx())
    # Then each resource keeps only its idle finding
    assert sorted((d.resource_name, d.rule_id) for d in drafts) == [
        ("big", "inferentia_idle"),
        ("blind", "inferentia_idle"),
    ]


def test_without_supersession_both_findings_would_stand() -> None:
    # Given the oversized idle endpoint and the policy's rules
    oversized = profile(
        "big",
        kind="sagemaker_endpoint",
        instance_type="ml.inf2.48xlarge",
        rate="15.58",
        neuron_util=flat(0.2),
        neuron_memory_bytes=flat(20 * GIB),
    )
    rules = {rule.meta.id: rule for rule in load_policy().rules()}
    # When the two rules run on their own
    # Then both fire: the engine is what keeps the idle one only
    assert rules["inferentia_idle"].evaluate(oversized, ctx()) is not None
    assert rules["inferentia_underutilized"].evaluate(oversized, ctx()) is not None


def test_disabled_rules_do_not_run() -> None:
    # Given an idle GPU box and a policy disabling gpu_idle
    idle = profile("gpu", instance_type="g5.xlarge", gpu_util=flat(0.1))
    policy = policy_from_mapping({"gpu_idle": {"enabled": False}})
    # When the engine evaluates it
    drafts = evaluate_profiles([idle], policy.rules(), ctx())
    # Then there is no finding, and gpu_idle is not among the evaluated rules (its findings are not resolved)
    assert drafts == []
    assert "gpu_idle" not in policy.enabled_ids()
