"""One test per row of the decision table (domain.md), plus the stay-on-GPU rules for ports that do not pay."""

from __future__ import annotations

import json
from decimal import Decimal
from pathlib import Path

import pytest
from plan_factories import intake, only, plan_for, workload

from chipwise.analyse import sizing
from chipwise.catalog import CATALOG_FILE_ENV, get_assumptions, get_catalog
from chipwise.catalog.instances import load_data_file
from chipwise.economics import break_even_months
from chipwise.plan.context import Context
from chipwise.plan.inputs import resolve
from chipwise.plan.options import SharedPort, port_effort

FINE_TUNE = workload(
    name="weekly fine-tune",
    stage="training",
    current_instance_type="p4d.24xlarge",
    instance_count=2,
    hours_per_month=160,
    runs_per_month=4,
    requests_per_day=None,
    current_throughput_per_instance=None,
    latency_ms_target=None,
)


def test_row_1_fine_tuning_a_mainstream_model_moves_to_trainium() -> None:
    # Given a weekly Llama 8B fine-tune on two p4d.24xlarge
    plan = only(plan_for(FINE_TUNE))
    # Then Trainium (trn1 for a smaller fine-tune), priced per trained model with the catalog's gain
    gain = get_assumptions().trainium_training_price_performance_gain.value
    assert plan.recommended_platform == "trainium"
    assert plan.recommended_instance_type is not None and plan.recommended_instance_type.startswith("trn1.")
    assert plan.current_cost_per_trained_model_usd == (plan.current_monthly_cost_usd / 4).quantize(Decimal("0.01"))
    expected = plan.current_monthly_cost_usd * (1 - gain)
    assert abs(plan.projected_monthly_cost_usd - expected) <= Decimal("0.01")
    assert plan.porting_effort == "days" and plan.break_even_months is not None


def test_row_1_large_pretraining_prefers_trn2_when_it_has_a_price(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Given a catalog where trn2.48xlarge has an on-demand price
    document = load_data_file("instances.json")
    for row in document["instances"]:
        if row["name"] == "trn2.48xlarge":
            row.update(
                price="45.00", price_source="AWS-PRICE-LIST", price_confidence="verified", price_as_of="2026-11-24"
            )
            row.pop("note", None)
    path = tmp_path / "instances.json"
    path.write_text(json.dumps(document, default=str))
    monkeypatch.setenv(CATALOG_FILE_ENV, str(path))
    # When a 70B model's pretraining on eight p5.48xlarge is planned
    big = workload(
        **{**FINE_TUNE, "parameters_billion": 70, "current_instance_type": "p5.48xlarge", "instance_count": 8}
    )
    plan = only(plan_for(big))
    # Then trn2 is the target
    assert plan.recommended_platform == "trainium"
    assert plan.recommended_instance_type == "trn2.48xlarge"


def test_row_1_large_pretraining_falls_back_to_trn1_when_trn2_has_no_price() -> None:
    # Given the shipped catalog (trn2 sold as capacity blocks, no on-demand price)
    assert get_catalog().price("trn2.48xlarge") is None
    big = workload(
        **{**FINE_TUNE, "parameters_billion": 70, "current_instance_type": "p5.48xlarge", "instance_count": 8}
    )
    plan = only(plan_for(big))
    # Then it is priced on trn1 and the plan says why
    assert plan.recommended_instance_type == "trn1.32xlarge"
    assert "trn2 has no on-demand price" in plan.rationale


def test_row_2_steady_llm_serving_moves_to_inferentia2() -> None:
    plan = only(plan_for(workload()))
    assert (plan.recommended_platform, plan.recommended_instance_type) == ("inferentia", "inf2.xlarge")
    assert "Steady serving" in plan.rationale


def test_row_2_a_70b_model_gets_an_inf2_size_that_holds_it() -> None:
    # Given a 70B model (140 GB of BF16 weights, x1.2 headroom) on p4d.24xlarge
    plan = only(
        plan_for(
            workload(
                parameters_billion=70,
                current_instance_type="p4d.24xlarge",
                instance_count=2,
                current_throughput_per_instance=8,
                requests_per_day=1_000_000,
            )
        )
    )
    # Then the inf2 size has enough accelerator memory for one replica
    assert plan.recommended_platform == "inferentia"
    target = get_catalog().require(plan.recommended_instance_type or "")
    assert target.accelerator_memory_gib * 2**30 >= Decimal("70e9") * 2 * Decimal("1.2")


def test_row_3_small_models_at_volume_move_to_inf1() -> None:
    # Given a BERT-size encoder serving 20 M requests a day on four g5.xlarge
    small = workload(
        name="embeddings",
        model_family="bert",
        parameters_billion=Decimal("0.11"),
        instance_count=4,
        requests_per_day=20_000_000,
        current_throughput_per_instance=100,
    )
    plan = only(plan_for(small))
    # Then inf1, the cheapest chip for small models
    assert plan.recommended_platform == "inferentia"
    assert plan.recommended_instance_type is not None and plan.recommended_instance_type.startswith("inf1.")
    assert "small model" in plan.rationale.lower()


def test_row_4_build_then_ship_counts_two_ports_on_two_stacks() -> None:
    # Given the same model trained and served
    plan = plan_for(workload(name="serving"), FINE_TUNE)
    serving, training = plan.workloads
    # Then train on Trainium, serve on Inferentia2
    assert (training.recommended_platform, serving.recommended_platform) == ("trainium", "inferentia")
    # on two different Neuron stacks (neuron_software.json): native PyTorch on trn1, NxD Inference on inf2
    assert training.software_path is not None and training.software_path.startswith("native PyTorch")
    assert serving.software_path is not None and serving.software_path.startswith("NxD Inference")
    # so two ports are paid for: days each (Llama is drop-in), $4,000 each at 1 engineer-week x $4,000
    assert training.porting_effort == serving.porting_effort == "days"
    assert training.porting_cost_usd == serving.porting_cost_usd == Decimal("4000.00")
    assert plan.totals.porting_cost_usd == Decimal("8000.00")
    assert "A port of its own: “weekly fine-tune” ports to native PyTorch" in serving.rationale
    # and the serving break-even follows from its own port: 4,000 / its monthly saving
    assert serving.break_even_months == break_even_months(Decimal(4000), serving.monthly_savings_usd)


def test_one_stack_that_does_both_stages_shares_the_port() -> None:
    # Given a port to a stack that (hypothetically) also serves the model
    stack = sizing.software("inf2", "inference")
    assert stack is not None
    ctx = Context.load("us-east-1")
    inp = resolve(intake(workload()).workloads[0], ctx)
    effort, note = port_effort(inp, SharedPort("the fine-tune", stack), ctx.catalog.require("inf2.xlarge"))
    # Then the serving workload needs no port of its own, and says which one covers it
    assert effort == "none"
    assert note.startswith("The Neuron port of “the fine-tune” covers it: NxD Inference")


def test_row_5_one_chip_family_serves_on_trainium_at_a_higher_cost_than_inf2() -> None:
    # Given serving that should stay on the training chip family
    on_trn = only(plan_for(workload(serve_on_trainium=True)))
    on_inf2 = only(plan_for(workload()))
    # Then Trainium serves it, and costs more than Inferentia2 would (the plan says so)
    assert on_trn.recommended_platform == "trainium"
    assert on_trn.recommended_instance_type is not None and on_trn.recommended_instance_type.startswith("trn1.")
    assert on_trn.projected_monthly_cost_usd > on_inf2.projected_monthly_cost_usd
    assert "higher cost per token than Inferentia2" in on_trn.rationale


def test_row_6_spiky_traffic_moves_to_bedrock() -> None:
    # Given spiky Llama traffic of 200,000 requests a day on three always-on g5.xlarge
    spiky = workload(traffic="spiky", instance_count=3, requests_per_day=200_000, tokens_per_request=800)
    plan = only(plan_for(spiky))
    # Then Amazon Bedrock, priced per token from the catalog
    assert plan.recommended_platform == "bedrock"
    assert plan.recommended_instance_type == "meta.llama3-1-8b-instruct-v1:0"
    price = get_assumptions().bedrock_price("meta.llama3-1-8b-instruct-v1:0")
    assert price is not None
    tokens = Decimal(200_000) * Decimal(730) / 24 * 800
    assert plan.projected_monthly_cost_usd == (tokens * price.input_per_million / 1_000_000).quantize(Decimal("0.01"))
    assert "Spiky traffic" in plan.rationale


def test_row_6_low_volume_steady_serving_moves_to_bedrock_when_it_is_cheaper() -> None:
    # Given a steady but tiny load (one request every few seconds) on one g5.xlarge
    quiet = workload(instance_count=1, requests_per_day=20_000, tokens_per_request=500)
    plan = only(plan_for(quiet))
    # Then pay-per-token wins over an always-on accelerator
    assert plan.recommended_platform == "bedrock"
    assert "Low volume" in plan.rationale


def test_row_7_foundation_model_only_moves_to_bedrock_even_for_an_unknown_family() -> None:
    # Given a workload that only needs a standard foundation model (its own model is not on Bedrock)
    fm = workload(
        model_family="in-house summariser",
        foundation_model_only=True,
        parameters_billion=None,
        current_instance_type="g5.2xlarge",
        instance_count=2,
        requests_per_day=50_000,
        current_throughput_per_instance=None,
    )
    plan = only(plan_for(fm))
    # Then Bedrock's default foundation model serves it
    assert plan.recommended_platform == "bedrock"
    assert plan.recommended_instance_type == "amazon.nova-lite-v1:0"
    assert "standard foundation model" in plan.rationale
    assert any("not a model family Chipwise knows" in a for a in plan.assumptions)


def test_row_8_custom_cuda_training_stays_on_the_gpu() -> None:
    # Given research training with bespoke CUDA kernels on a p5.48xlarge
    research = workload(
        **{
            **FINE_TUNE,
            "name": "research",
            "model_family": "novel-arch",
            "custom_cuda_kernels": True,
            "current_instance_type": "p5.48xlarge",
            "instance_count": 1,
        }
    )
    plan = only(plan_for(research))
    # Then stay on the GPU, with what Trainium would have cost
    assert plan.recommended_platform == "gpu"
    assert plan.recommended_instance_type == "p5.48xlarge"
    assert plan.monthly_savings_usd == 0 and plan.porting_cost_usd == 0
    assert "Custom CUDA kernels" in plan.rationale and "Trainium would cost" in plan.rationale


def test_a_one_off_job_whose_port_would_not_pay_back_stays_on_the_gpu() -> None:
    # Given one 100-hour training run of a 7B model on a p4d.24xlarge (the sources' ≈ $2,196)
    once = workload(
        **{
            **FINE_TUNE,
            "parameters_billion": 7,
            "instance_count": 1,
            "hours_per_month": 100,
            "runs_per_month": None,
            "one_off": True,
        }
    )
    plan = only(plan_for(once))
    # Then the dollars per trained model are the run's cost, and the port costs more than the run saves
    assert abs(plan.current_cost_per_trained_model_usd - Decimal("2196")) < Decimal("2196") * Decimal("0.01")  # type: ignore[operator]
    assert plan.recommended_platform == "gpu"
    assert plan.one_time_savings_usd == 0
    assert "one-off job" in plan.rationale


def test_a_large_one_off_job_moves_when_the_run_pays_for_the_port() -> None:
    once = workload(
        **{**FINE_TUNE, "instance_count": 8, "hours_per_month": 500, "runs_per_month": None, "one_off": True}
    )
    plan = only(plan_for(once))
    assert plan.recommended_platform == "trainium"
    assert plan.one_time_savings_usd is not None and plan.one_time_savings_usd > plan.porting_cost_usd
    assert plan.monthly_savings_usd == 0  # a one-off saving does not recur


def test_a_port_that_takes_longer_than_the_payback_limit_stays_on_the_gpu() -> None:
    # Given one lightly used g5.xlarge (a small saving) and a months-long port (custom CUDA kernels)
    slow = workload(
        instance_count=1, requests_per_day=None, current_throughput_per_instance=None, custom_cuda_kernels=True
    )
    plan = only(plan_for(slow))
    assert plan.recommended_platform == "gpu"
    assert "to pay back" in plan.rationale


def test_an_oversized_inferentia_fleet_is_rightsized_without_a_port() -> None:
    # Given the worked example already on Inferentia2, with twice the instances it needs
    fleet = workload(current_instance_type="inf2.xlarge", instance_count=6, current_throughput_per_instance=40)
    plan = plan_for(fleet)
    line = only(plan)
    # Then fewer instances of the same type, no porting, and no "prove the path" steps
    assert (line.action, line.recommended_instance_type, line.recommended_count) == ("move", "inf2.xlarge", 3)
    assert line.porting_effort == "none" and line.break_even_months == 0.0
    assert not any(step.startswith("Prove the path") for step in plan.steps)


def test_a_right_sized_inferentia_fleet_is_kept() -> None:
    fleet = workload(current_instance_type="inf2.xlarge", instance_count=3, current_throughput_per_instance=40)
    line = only(plan_for(fleet))
    assert (line.action, line.recommended_platform, line.recommended_count) == ("keep", "inferentia", 3)
    assert line.monthly_savings_usd == 0 and "no saving" in line.rationale
