"""Issue 13 item 4: inference components judged on their own cost (their reserved share of the variant), count
(copies) and metrics (by InferenceComponentName), and the variant they share judged only on what no component
reserves, so that no dollar is counted twice.

The endpoint of these tests: 2 x ml.g5.12xlarge (4 GPUs each, $7.09/h on SageMaker) shared by ``big`` (2 copies
x 2 GPUs = 1 instance reserved) and ``small`` (1 copy x 2 GPUs = 0.5), leaving 0.5 of an instance unreserved."""

from __future__ import annotations

from dataclasses import replace
from decimal import Decimal
from typing import Any

from rules_factories import ctx, flat, profile

from chipwise.analyse.profiles import ResourceProfile
from chipwise.models.findings import FindingDraft
from chipwise.presentation import SavingFacts, headline
from chipwise.rules.builtin.accelerator_off_hours import AcceleratorOffHours, AcceleratorOffHoursParams
from chipwise.rules.builtin.gpu_idle import GpuIdle, GpuIdleParams
from chipwise.rules.builtin.gpu_inference_portable import GpuInferencePortable, GpuInferencePortableParams
from chipwise.rules.builtin.spiky_inference_bedrock import SpikyInferenceBedrock, SpikyInferenceBedrockParams
from chipwise.rules.engine import evaluate_profiles

IDLE = GpuIdle(GpuIdleParams())
PORTABLE = GpuInferencePortable(GpuInferencePortableParams())
IC_GPU = "/aws/sagemaker/InferenceComponents"
MISTRAL = {"model_family": "mistral", "hf_model_id": "mistralai/Mistral-7B-Instruct-v0.3"}


def component(name: str, copies: int, billed: str | None, **signals: Any) -> ResourceProfile:
    return profile(
        f"shared-gpu/{name}",
        kind="sagemaker_inference_component",
        instance_type="ml.g5.12xlarge",
        count=copies,
        rate="7.09",
        billed_instances=billed,
        component_name=name,
        endpoint_name="shared-gpu",
        variant_name="AllTraffic",
        gpu_source=IC_GPU,
        **signals,
    )


def shared_variant(billed: str | None = "0.5", **signals: Any) -> ResourceProfile:
    return profile(
        "shared-gpu",
        kind="sagemaker_endpoint",
        instance_type="ml.g5.12xlarge",
        count=2,
        rate="7.09",
        billed_instances=billed,
        endpoint_name="shared-gpu",
        gpu_source="/aws/sagemaker/Endpoints",
        **signals,
    )


def test_an_idle_component_is_deleted_for_its_share_of_the_variant() -> None:
    # Given big, idle for 14 days: GPUUtilizationNormalized 0.3 % of its reserved GPUs and no invocation
    big = component("big", 2, "1", gpu_util=flat(0.3))
    # When gpu_idle runs
    draft = IDLE.evaluate(big, ctx())
    # Then its share, 1 instance-equivalent x $7.09 x 730 h = $5,175.70 a month, is the cost and the saving
    assert draft is not None
    assert draft.monthly_cost_usd == draft.estimated_monthly_savings_usd == Decimal("5175.70")
    assert draft.resource_kind == "sagemaker_inference_component"
    assert draft.recommendation.action == "delete"
    assert "delete inference component big (or set its copy count to 0)" in draft.summary
    assert "(2 copies on ml.g5.12xlarge, 1 instance reserved)" in draft.summary
    assert "the saving is realised when shared-gpu releases whole instances" in draft.summary
    evidence = draft.evidence
    assert (evidence.inference_component, evidence.endpoint_name, evidence.variant_name) == (
        "big",
        "shared-gpu",
        "AllTraffic",
    )
    assert evidence.billed_instances == 1.0
    assert evidence.saving_realised == "the saving is realised when shared-gpu releases whole instances"
    assert (evidence.copies, evidence.instance_count) == (2, None)  # its count is its copies, not instances
    assert evidence.gpu_source == IC_GPU
    assert evidence.invocations_in_window == 0


def test_a_component_still_answering_requests_is_not_idle() -> None:
    busy = component("big", 2, "1", gpu_util=flat(0.3), invocations=flat(40.0))
    assert IDLE.evaluate(busy, ctx()) is None


def test_a_component_whose_share_is_unknown_gets_no_figure() -> None:
    # Neuron components (NumberOfAcceleratorDevicesRequired may be devices or cores): no cost, so no finding
    unknown = component("llama", 2, None, gpu_util=flat(0.3))
    assert unknown.monthly_cost is None
    assert IDLE.evaluate(unknown, ctx()) is None


def test_the_shared_variant_is_judged_on_what_no_component_reserves() -> None:
    # Given the variant's GPUs idle (every component idle too): it pays for 0.5 of an instance
    variant = shared_variant(gpu_util=flat(1.0))
    draft = IDLE.evaluate(variant, ctx())
    # Then 0.5 x 7.09 x 730 = $2,587.85, and the step is to scale down to what the components reserve
    assert draft is not None
    assert draft.estimated_monthly_savings_usd == Decimal("2587.85")
    assert "lower the instance count" in draft.summary
    assert "2 × ml.g5.12xlarge, 0.5 not reserved by its inference components" in draft.summary
    # A variant whose components reserve all of it has nothing of its own to save
    assert IDLE.evaluate(shared_variant("0", gpu_util=flat(1.0)), ctx()) is None


def test_an_idle_shared_endpoint_adds_up_to_its_bill_and_never_more() -> None:
    # Given everything idle: the variant and both components
    profiles = [
        shared_variant(gpu_util=flat(1.0)),
        component("big", 2, "1", gpu_util=flat(0.3)),
        component("small", 1, "0.5", gpu_util=flat(0.2)),
    ]
    # When the engine runs every rule that judges them
    drafts = evaluate_profiles(profiles, [IDLE, PORTABLE], ctx())
    # Then three findings whose savings add up to the endpoint's bill, 2 x 7.09 x 730 = $10,351.40, not more
    assert sorted(d.resource_name for d in drafts) == ["shared-gpu", "shared-gpu/big", "shared-gpu/small"]
    totals = headline(_facts(drafts))
    assert totals.total_usd == totals.estimated_usd == Decimal("10351.40")
    assert totals.counted == 3


def test_whole_instance_advice_does_not_apply_to_shared_capacity() -> None:
    # Given steady Mistral traffic that would move a whole GPU endpoint to Inferentia
    steady: dict[str, Any] = {"hints": MISTRAL, "gpu_util": flat(60.0), "invocations": flat(79_200.0)}
    alone = shared_variant(None, **steady)
    assert PORTABLE.evaluate(alone, ctx()) is not None  # the same endpoint without components moves
    # Then neither a variant its components share nor a component is sized, moved, scheduled or sent to Bedrock
    off_hours = AcceleratorOffHours(AcceleratorOffHoursParams())
    bedrock = SpikyInferenceBedrock(SpikyInferenceBedrockParams())
    for judged in (shared_variant(**steady), component("big", 2, "1", **steady)):
        assert judged.shares_instances
        for rule in (PORTABLE, off_hours, bedrock):
            assert rule.evaluate(judged, ctx()) is None, rule.meta.id


def _facts(drafts: list[FindingDraft]) -> list[SavingFacts]:
    return [SavingFacts("open", None, False, d.estimated_monthly_savings_usd) for d in drafts]


def test_a_variant_whose_components_were_not_read_gets_no_figure() -> None:
    unread = replace(shared_variant(None, gpu_util=flat(1.0)), billed_unknown=True)
    assert unread.monthly_cost is None and unread.shares_instances
    assert IDLE.evaluate(unread, ctx()) is None


def test_a_half_instance_saving_says_the_cash_comes_in_whole_instances() -> None:
    # Given small, idle: 1 copy x 2 GPUs = 0.5 of an ml.g5.12xlarge reserved, 0.5 x $7.09 x 730 = $2,587.85 a month
    small = component("small", 1, "0.5", gpu_util=flat(0.2))
    draft = IDLE.evaluate(small, ctx())
    assert draft is not None and draft.estimated_monthly_savings_usd == Decimal("2587.85")
    # Then the next step and the evidence say that half an instance is cash only when the endpoint sheds a whole one
    note = (
        "the saving is realised when shared-gpu releases whole instances (it reserves 0.5 instances: the fraction "
        "is cash only once the other components' copies fit on fewer instances)"
    )
    assert note in draft.summary
    assert draft.evidence.saving_realised == note
    assert "1 copy on ml.g5.12xlarge, 0.5 instances reserved" in draft.summary
