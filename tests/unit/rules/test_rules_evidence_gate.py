"""Evidence gates the advice (issue: a trn1.32xlarge serving a 140 GiB model without Neuron telemetry was told to
move to one 32 GiB inf2.xlarge while a second finding said it could not be judged)."""

from __future__ import annotations

from decimal import Decimal

from rules_factories import GIB, ctx, flat, profile

from chipwise.analyse.metric_keys import NEURON_CORE, NEURON_MONITOR
from chipwise.analyse.profiles import Coverage, ResourceProfile
from chipwise.models.findings import FindingDraft
from chipwise.rules import evaluate_profiles, policy_from_mapping

LLAMA_70B = {
    "workload": "inference",
    "hf_model_id": "meta-llama/Llama-3.1-70B-Instruct",
    "sources": {"workload": "tag"},
}
NO_TELEMETRY = {NEURON_CORE: Coverage(False, 0), NEURON_MONITOR: Coverage(False, 0)}


def _evaluate(resource: ResourceProfile) -> list[FindingDraft]:
    return evaluate_profiles([resource], policy_from_mapping({}).rules(), ctx())


def test_a_trn1_serving_a_70b_model_without_telemetry_gets_only_the_cannot_be_judged_finding() -> None:
    # Given a trn1.32xlarge ($21.50/h) tagged inference, serving Llama-3.1-70B (70B x 2 bytes = 130.4 GiB), with no
    # Neuron metrics at all
    server = profile("llama-70b", instance_type="trn1.32xlarge", rate="21.50", hints=LLAMA_70B, coverage=NO_TELEMETRY)
    # When every rule runs
    drafts = _evaluate(server)
    # Then the resource has one finding: telemetry missing, no saving, no sized target
    assert [d.rule_id for d in drafts] == ["neuron_telemetry_missing"]
    (only,) = drafts
    assert only.estimated_monthly_savings_usd == Decimal("0.00")
    assert only.recommendation.target_instance_type is None


def test_with_telemetry_the_target_holds_the_model_with_headroom() -> None:
    # Given the same server with Neuron telemetry: 140 GiB device memory, 32 cores in use at a 20 % mean
    server = profile(
        "llama-70b",
        instance_type="trn1.32xlarge",
        rate="21.50",
        hints=LLAMA_70B,
        neuron_util=flat(30.0),
        neuron_util_avg=flat(20.0),
        neuron_cores_in_use=32,
        neuron_memory_bytes=flat(140 * GIB),
        neuron_executions=flat(32_400.0),
    )
    # When every rule runs
    (draft,) = _evaluate(server)
    # Then 140 GiB x 1.2 = 168 GiB fits one inf2.24xlarge (192 GiB): never a target smaller than the model
    assert draft.rule_id == "trainium_serving_inference"
    assert draft.recommendation.target_instance_type == "inf2.24xlarge"
    assert draft.evidence.model_memory_basis == "neuron_device_memory"
    assert draft.evidence.required_memory_gib == 168.0


def test_trn2_serving_stays_on_the_go_forward_stack_by_default() -> None:
    # Given a trn2.48xlarge serving with telemetry (vLLM Neuron, the active stack)
    server = profile(
        "vllm-trn2",
        instance_type="trn2.48xlarge",
        rate="40.00",
        hints=LLAMA_70B,
        neuron_util=flat(10.0),
        neuron_util_avg=flat(5.0),
        neuron_cores_in_use=64,
        neuron_memory_bytes=flat(140 * GIB),
        neuron_executions=flat(32_400.0),
    )
    # Then it is not sent to inf2 (NxD Inference, maintenance mode) by default
    assert [d.rule_id for d in _evaluate(server)] == []
    # but a policy can ask for it
    rules = policy_from_mapping({"trainium_serving_inference": {"include_go_forward": True}}).rules()
    moved = evaluate_profiles([server], rules, ctx())
    assert [d.rule_id for d in moved] == ["trainium_serving_inference"]
