"""The whole plan: assumptions said out loud, sources listed, totals that add up, steps, credits, draft."""

from __future__ import annotations

import json
from decimal import Decimal

from plan_factories import only, plan_for, workload

from chipwise.plan.document import PlanDocument


def test_omitted_fields_become_named_assumptions() -> None:
    # Given a workload with only a name and a model family
    plan = only(plan_for({"name": "minimal", "model_family": "llama"}))
    # Then the planner says what it assumed for each gap
    said = " ".join(plan.assumptions)
    for gap in (
        "Current instance type not given",
        "Hours a month not given",
        "Model size not given",
        "Instance count not given",
        "Request rate or throughput per instance not given",
    ):
        assert gap in said
    assert plan.confidence == "low"


def test_a_fully_specified_workload_needs_no_assumptions_about_itself() -> None:
    plan = only(plan_for(workload(tokens_per_request=500)))
    assert plan.assumptions == []


def test_every_figure_used_is_listed_with_a_source_and_date() -> None:
    plan = plan_for(
        workload(),
        workload(
            name="train",
            stage="training",
            current_instance_type="p4d.24xlarge",
            instance_count=1,
            hours_per_month=100,
            runs_per_month=2,
            requests_per_day=None,
            current_throughput_per_instance=None,
        ),
    )
    figures = {s.figure for s in plan.sources}
    assert {
        "g5.xlarge on-demand price, us-east-1",
        "inf2.xlarge on-demand price, us-east-1",
        "p4d.24xlarge on-demand price, us-east-1",
        "trn1.32xlarge on-demand price, us-east-1",
    } <= figures
    assert any(f.startswith("Trainium training price performance gain") for f in figures)
    assert any(f.startswith("Engineer week cost usd") for f in figures)
    assert all(s.source and s.as_of for s in plan.sources)


def test_totals_add_up_to_the_lines() -> None:
    plan = plan_for(
        workload(),
        workload(name="spiky", traffic="spiky", instance_count=3, requests_per_day=200_000, tokens_per_request=800),
        workload(
            name="research",
            stage="training",
            model_family="novel",
            custom_cuda_kernels=True,
            current_instance_type="p5.48xlarge",
            instance_count=1,
            hours_per_month=100,
            requests_per_day=None,
            current_throughput_per_instance=None,
        ),
    )
    lines = plan.workloads
    assert plan.totals.current_monthly_cost_usd == sum(w.current_monthly_cost_usd for w in lines)
    assert plan.totals.monthly_savings_usd == sum(w.monthly_savings_usd for w in lines)
    assert plan.total_monthly_savings_usd == plan.totals.monthly_savings_usd
    assert (
        plan.totals.projected_monthly_cost_usd == plan.totals.current_monthly_cost_usd - plan.totals.monthly_savings_usd
    )
    assert plan.totals.porting_cost_usd == sum(w.porting_cost_usd for w in lines)
    assert [w.recommended_platform for w in lines] == ["inferentia", "bedrock", "gpu"]


def test_money_is_a_decimal_string_in_the_json() -> None:
    document = json.loads(plan_for(workload()).model_dump_json())
    line = document["workloads"][0]
    assert line["current_monthly_cost_usd"] == "4406.28"
    assert line["projected_monthly_cost_usd"] == "1660.46"
    assert line["monthly_savings_usd"] == "2745.82"
    assert document["total_monthly_savings_usd"] == "2745.82"
    assert isinstance(line["break_even_months"], float)
    assert all(isinstance(c["max_amount_usd"], str | None) for c in document["credits"])
    assert PlanDocument.model_validate(document).totals.monthly_savings_usd == Decimal("2745.82")


def test_steps_follow_the_migration_path_for_this_plan() -> None:
    plan = plan_for(workload(), activate_provider_org_id="VC-42")
    steps = plan.steps
    assert steps[0].startswith("Prove the path on one inf2.xlarge")
    assert "validate accuracy against the g5.xlarge baseline" in steps[1]
    assert "200 ms latency target" in steps[2]
    assert "GPU fallback" in steps[3]
    assert any("AWS Activate Portfolio" in s and "Apply for credits" in s for s in steps)
    assert "partner" in steps[-1]


def test_credit_matches_come_with_the_plan() -> None:
    with_org = {c.program: c for c in plan_for(workload(), activate_provider_org_id="VC-42").credits}
    without = {c.program: c for c in plan_for(workload()).credits}
    assert with_org["activate_portfolio"].eligible and not without["activate_portfolio"].eligible
    outside = plan_for(workload(runs_outside_aws=True))
    assert {c.program: c for c in outside.credits}["map"].eligible
    assert any("closest AWS equivalent" in a for a in only(outside).assumptions)


def test_the_referral_draft_carries_the_company_and_the_expected_spend() -> None:
    plan = plan_for(workload())
    draft = plan.referral_draft
    assert draft["Customer"]["Account"]["CompanyName"] == "Acme AI"
    assert draft["Customer"]["Account"]["AwsAccountId"] == "123456789012"
    assert draft["Customer"]["Contacts"][0]["Email"] == "ada@acme.example"
    # expected AWS spend after the move: today's spend less the saving
    assert draft["Project"]["ExpectedCustomerSpend"][0]["Amount"] == f"{Decimal(40000) - Decimal('2745.82')}"
    assert draft["LifeCycle"]["NextSteps"].startswith("Prove the path")


def test_a_fractional_gpu_today_is_planned_by_its_share_of_one_gpu() -> None:
    # Given a workload on six g6f.large (an eighth of an L4 each: no whole GPU, accelerator_count 0)
    plan = only(plan_for(workload(current_instance_type="g6f.large")))
    # Then it is planned (its load counted as 6 x 1/8 of an L4, no division by a GPU count of 0): an eighth of a GPU
    # at 0.202 $/h is already cheaper than any whole-chip fleet that carries the load, so it stays
    assert (plan.action, plan.recommended_instance_type, plan.recommended_count) == ("keep", "g6f.large", 6)
