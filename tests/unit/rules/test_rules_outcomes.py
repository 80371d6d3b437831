"""Each rule reports its outcome on each resource, and they add up to exactly one verdict per resource."""

from __future__ import annotations

from rules_factories import GIB, ctx, flat, profile

from chipwise.analyse.profiles import ResourceProfile
from chipwise.models.verdicts import ResourceVerdict
from chipwise.pipeline.policy import load_policy
from chipwise.rules.engine import assess_profiles


def _verdicts(*profiles: ResourceProfile) -> dict[str, ResourceVerdict]:
    _, verdicts = assess_profiles(profiles, load_policy().rules(), ctx())
    return {v.name: v for v in verdicts}


def test_a_resource_with_a_finding_is_waste_and_names_the_rule() -> None:
    idle = profile(
        "idle",
        kind="sagemaker_endpoint",
        instance_type="ml.inf2.48xlarge",
        rate="15.58",
        neuron_util=flat(0.2),
        neuron_memory_bytes=flat(20 * GIB),
    )
    verdict = _verdicts(idle)["idle"]
    assert verdict.verdict == "waste" and verdict.finding_rules == ["inferentia_idle"]
    superseded = {o.rule_id: o.outcome for o in verdict.outcomes}
    assert superseded["inferentia_underutilized"] == "superseded"


def test_a_busy_gpu_endpoint_without_a_stated_model_size_cannot_be_judged_and_says_which_input() -> None:
    busy = profile(
        "busy",
        kind="sagemaker_endpoint",
        instance_type="ml.g5.2xlarge",
        rate="1.515",
        gpu_util=flat(70),
        invocations=flat(3600),
        hints={"model_family": "llama"},
    )
    verdict = _verdicts(busy)["busy"]
    assert verdict.verdict == "cannot_judge"
    assert verdict.missing == ["model size"]
    portable = next(o for o in verdict.outcomes if o.rule_id == "gpu_inference_portable")
    assert (portable.outcome, portable.missing) == ("lacked_data", "model size")
    idle = next(o for o in verdict.outcomes if o.rule_id == "gpu_idle")
    assert idle.outcome == "passed" and "GPU p95 70 %" in idle.reason


def test_stopped_and_cpu_capacity_are_out_of_scope_with_why() -> None:
    stopped = profile("stopped", instance_type="p4d.24xlarge", state="stopped")
    cpu = profile("cpu", instance_type="c6i.4xlarge", platform="cpu")
    found = _verdicts(stopped, cpu)
    assert found["stopped"].verdict == "out_of_scope" and "not running" in found["stopped"].reason
    assert found["cpu"].verdict == "out_of_scope" and "accelerators only" in found["cpu"].reason
    assert all(o.outcome == "not_applicable" for o in found["cpu"].outcomes)
