"""Each rule reports its outcome on each resource, and they add up to exactly one verdict per resource."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

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


def _outcome(verdict: ResourceVerdict, rule_id: str) -> str:
    return next(o.reason for o in verdict.outcomes if o.rule_id == rule_id)


def test_sagemaker_gpu_utilisation_summed_over_gpus_reads_per_gpu_and_never_above_100() -> None:
    # SageMaker's GPUUtilization on an ml.g5.12xlarge (4 GPUs) is 0-400 %: 162 % summed is 40.5 % per GPU
    shared = profile(
        "shared",
        kind="sagemaker_endpoint",
        instance_type="ml.g5.12xlarge",
        rate="7.09",
        gpu_util=flat(162),
        gpu_source="/aws/sagemaker/Endpoints",
        invocations=flat(3600),
    )
    verdict = _verdicts(shared)["shared"]
    idle = _outcome(verdict, "gpu_idle")
    assert "GPU p95 40 %, max 40 % per GPU" in idle
    assert "162" not in verdict.reason and "162" not in idle
    # a figure over 100 % of one device is bounded (a misreporting exporter)
    odd = profile("odd", instance_type="g5.xlarge", rate="1.006", gpu_util=flat(130), invocations=flat(10))
    assert "GPU p95 100 %, max 100 % per GPU" in _outcome(_verdicts(odd)["odd"], "gpu_idle")


def test_each_rule_gives_its_own_deciding_figure_and_the_verdict_names_rules_by_title() -> None:
    busy = profile(
        "busy",
        kind="sagemaker_endpoint",
        instance_type="ml.inf2.xlarge",
        rate="0.99",
        neuron_util=flat(80),
        neuron_memory_bytes=flat(10 * GIB),
        invocations=flat(3600),
    )
    verdict = _verdicts(busy)["busy"]
    reasons = {o.rule_id: o.reason for o in verdict.outcomes if o.outcome == "passed"}
    assert "busiest NeuronCore p95 80 %" in reasons["inferentia_idle"]
    assert "Neuron telemetry present" in reasons["neuron_telemetry_missing"]
    assert "requests in" in reasons["spiky_inference_bedrock"]
    assert len(set(reasons.values())) > 1  # not one sentence repeated for every rule
    gpu_kernels = profile(
        "kernels",
        kind="sagemaker_training_job",
        instance_type="ml.p5.48xlarge",
        rate="98.32",
        hints={"custom_cuda": True},
        state="Completed",
    )
    aside = _verdicts(gpu_kernels)["kernels"]
    assert aside.verdict == "out_of_scope"
    assert (
        aside.reason
        == "GPU training portable to Trainium does not apply: custom CUDA kernels: a Neuron port is not proposed"
    )


def test_a_cannot_judge_finding_never_stands_beside_a_judged_one() -> None:
    # two rules fire on one GPU variant: a migration and a $0 "cannot judge"; only the judged finding stands
    def stub(rule_id: str, fires: bool) -> Any:
        meta = SimpleNamespace(id=rule_id, supersedes=(), title=rule_id.replace("_", " "))
        return SimpleNamespace(meta=meta, evaluate=lambda p, c: SimpleNamespace(rule_id=rule_id) if fires else None)

    variant = profile("variant", kind="sagemaker_endpoint", instance_type="ml.g5.2xlarge", rate="1.515")
    both = [stub("gpu_inference_portable", True), stub("cannot_judge", True)]
    drafts, verdicts = assess_profiles([variant], both, ctx())
    assert [d.rule_id for d in drafts] == ["gpu_inference_portable"]
    outcomes = {o.rule_id: o.outcome for o in verdicts[0].outcomes}
    assert outcomes == {"gpu_inference_portable": "fired", "cannot_judge": "superseded"}
    alone, _ = assess_profiles([variant], [stub("cannot_judge", True)], ctx())
    assert [d.rule_id for d in alone] == ["cannot_judge"]
