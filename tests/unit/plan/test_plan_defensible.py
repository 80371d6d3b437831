"""The founder's plan is as defensible as the scan (issue 27 items 1-3): it names the Neuron stack of every target,
counts a port per stack, flags answers that cannot all be true, words credit likelihood one way everywhere, and
cites public sources only in every customer document."""

from __future__ import annotations

import json
import re
from datetime import date
from decimal import Decimal
from importlib import resources
from typing import Any

from plan_factories import CREATED, PLAN_ID, intake, intake_dict, only, plan_for, workload

from chipwise.drafts import AccountFigures, CompanyFacts, DraftWorkload, build_account_drafts
from chipwise.economics import break_even_months
from chipwise.intake import views
from chipwise.plan.document import PlanDocument
from chipwise.plan.intake import IntakeRequest
from chipwise.plan.planner import build_plan
from chipwise.render import render

# The handbook's internal files and words a customer must never see: reference/*.md, DESIGN.md, "seed documents".
INTERNAL = re.compile(
    r"(?<![\w/.-])(?:reference/)?(?:aws|domain|billing|neuron-software|credits|peers|style-models|DESIGN)\.md\b"
    r"|seed documents?|\.md\s*(?:section|§)",
    re.IGNORECASE,
)


def demo_intake() -> IntakeRequest:
    text = resources.files("chipwise_devkit.demo").joinpath("intake.json").read_text(encoding="utf-8")
    return IntakeRequest.model_validate(json.loads(text))


def demo_plan() -> PlanDocument:
    return build_plan(demo_intake(), plan_id=PLAN_ID, created_at=CREATED)


# --- item 1: the software path and a port per stack ------------------------------------------------------------------


def test_the_demo_plan_names_the_stack_of_every_neuron_target_and_no_vllm_for_trn1() -> None:
    # Given the demo's plan (Llama served on inf2, fine-tuned on trn1)
    plan = demo_plan()
    by_name = {w.name: w for w in plan.workloads}
    serving, training = by_name["chat assistant serving"], by_name["weekly fine-tune"]
    # Then each Neuron target names its stack and status as neuron_software.json says
    assert serving.software_path == (
        "NxD Inference / Optimum Neuron on inf2 (maintenance mode since Neuron 2.31 (critical fixes only, no new "
        "models))"
    )
    assert training.software_path is not None and training.software_path.startswith("native PyTorch (TorchNeuron)")
    assert f"Software: {serving.software_path}." in serving.rationale
    # and workloads off Neuron name none
    assert all(w.software_path is None for w in plan.workloads if w.recommended_platform in ("bedrock", "gpu"))
    # and vLLM (the trn2/trn3 serving stack) appears nowhere: not in the steps that prove the trn1 training port
    markdown = views.plan_markdown(plan)
    assert "vllm" not in markdown.lower()
    assert plan.steps[0].startswith("Prove the path on one trn1.32xlarge")
    assert "native PyTorch (TorchNeuron)" in plan.steps[0]
    # and the Sources list the Neuron documentation the stacks come from
    figures = {s.figure: s.source for s in plan.sources}
    assert "announce-nxdi-maintenance-support-2-31" in figures["Neuron serving software on inf2"]
    assert "announce-no-support-pytorch-xla-training" in figures["Neuron training software on trn1"]


def test_the_demo_plan_counts_the_training_port_and_the_serving_port() -> None:
    # Given the demo's fine-tune (trn1, native PyTorch), its serving (inf2, NxD Inference) and a Bedrock move
    plan = demo_plan()
    by_name = {w.name: w for w in plan.workloads}
    serving = by_name["chat assistant serving"]
    # Then the serving port is not free: days, $4,000, its break-even from it (4,000 / 2,745.82 = 1.46 -> 1.5)
    assert (serving.porting_effort, serving.porting_cost_usd, serving.break_even_months) == (
        "days",
        Decimal("4000.00"),
        1.5,
    )
    # and the total is three ports of days at $4,000: $12,000, paying back in 12,000 / 7,088.67 = 1.69 -> 1.7 months
    assert plan.totals.porting_cost_usd == Decimal("12000.00")
    assert plan.totals.payback_months == break_even_months(Decimal(12000), Decimal("7088.67")) == 1.7


# --- item 2: answers that cannot all be true ------------------------------------------------------------------------

LLAMA_405B_ON_INF2 = workload(
    name="big llama", parameters_billion=405, current_instance_type="inf2.xlarge", instance_count=6
)


def test_a_405b_model_on_six_inf2_xlarge_is_flagged_with_low_confidence() -> None:
    # Given a 405B Llama "today on 6 x inf2.xlarge" (32 GiB each: 192 GiB in all)
    plan = only(plan_for(LLAMA_405B_ON_INF2))
    # Then 405e9 x 2 bytes = 754 GiB of weights cannot fit: the plan says so, asks to check, and is low confidence
    assert plan.confidence == "low"
    assert len(plan.conflicts) == 1
    assert plan.conflicts[0].startswith(
        "A 405B-parameter model needs about 754 GiB of accelerator memory for its weights alone, more than the "
        "192 GiB of the 6 × inf2.xlarge"
    )
    assert plan.rationale.startswith("Please check your answers: A 405B-parameter model")
    # and the plan's email says so next to the workload
    html, text = views.contact_email(
        plan_for(LLAMA_405B_ON_INF2), link="https://x/p", delete_link="https://x/d", expires_at=CREATED
    )
    for part in (html, text):
        assert "low confidence: please check your answers" in part


def test_traffic_the_stated_fleet_cannot_serve_is_flagged() -> None:
    # Given 10 M requests a day (115.7/s) on 2 x g5.xlarge at 20 requests/s each (40/s)
    plan = only(plan_for(workload(instance_count=2)))
    # Then the plan flags it at low confidence
    assert plan.confidence == "low"
    assert plan.conflicts == [
        "115.7 requests/s is more than the 2 × g5.xlarge stated can serve at 20 requests/s each (40 requests/s in "
        "all): the requests a day, the throughput per instance or the count cannot be right, and the fleet is "
        "sized from them."
    ]


def test_consistent_answers_raise_no_flag() -> None:
    # Given the worked example (115.7/s on 6 x g5.xlarge at 20/s each: 120/s; 8B in 6 x 24 GB)
    plan = only(plan_for(workload()))
    # Then nothing is flagged and the confidence stays high
    assert plan.conflicts == [] and plan.confidence == "high"


def test_a_bedrock_model_other_than_theirs_is_named_and_said_to_differ() -> None:
    # Given the 405B Llama: Bedrock's largest Llama in the price list is smaller
    plan = only(plan_for(LLAMA_405B_ON_INF2))
    # Then the plan names the model it priced and says it is not theirs
    notes = [a for a in plan.assumptions if a.startswith("Amazon Bedrock is priced with")]
    assert len(notes) == 1
    assert "a smaller model than yours (Llama 405B)" in notes[0]
    # and the same model an 8B Llama is priced with raises no such note
    assert not any(a.startswith("Amazon Bedrock is priced with") for a in only(plan_for(workload())).assumptions)


# --- item 3: public sources only, one likelihood vocabulary, Sources as a list -------------------------------------


def account_drafts() -> Any:
    figures = AccountFigures(
        account_id="123456789012",
        company="Lumen Labs",
        window_start=date(2026, 11, 8),
        window_end=date(2026, 11, 22),
        accelerator_spend_usd=Decimal("4200.00"),
        monthly_accelerator_spend_usd=Decimal("9125.00"),
        monthly_by_platform={"nvidia": Decimal("9125.00")},
        workloads=[
            DraftWorkload("chat", "sagemaker_endpoint", "us-east-1", "ml.g5.2xlarge", 4, "nvidia", "inference", None)
        ],
        open_findings=0,
        findings_words="0 counted findings (0 open, 0 not counted)",
        monthly_savings_usd=Decimal("0"),
        measured_monthly_savings_usd=Decimal("0"),
        top_findings=[],
    )
    facts = CompanyFacts(stage="seed", institutional_funding=True, activate_provider_org_id="VC-1", website=None)
    return build_account_drafts(figures, facts, contact_email="cto@lumenlabs.example")


def customer_documents() -> dict[str, str]:
    """Every document a founder or a partner reads, rendered as they get it."""
    intake_request = demo_intake()
    plan = build_plan(intake_request, plan_id=PLAN_ID, created_at=CREATED)
    public = plan.public()
    html, text = views.contact_email(public, link="https://x/plans/y", delete_link="https://x/d", expires_at=CREATED)
    drafts = account_drafts()
    return {
        "plan page": views.plan_page(public, permalink="/plans/x", nonce="n"),
        "plan.md": views.plan_markdown(public),
        "plan.json": views.plan_json(public),
        "plan email html": html,
        "plan email text": text,
        "referral draft": views.referral_body(plan, intake_request),
        "credits application draft": drafts.credits.body,
        "partner referral email draft": drafts.referral.body,
    }


def test_no_customer_document_names_an_internal_file() -> None:
    # Given every customer-facing document of the demo's plan and of an account's drafts
    for name, text in customer_documents().items():
        # Then none cites the handbook ("aws.md section 6", "the seed documents", "reference/credits.md")
        found = INTERNAL.findall(text)
        assert not found, f"{name}: {found}"


def test_the_internal_file_check_catches_what_it_must() -> None:
    # Given the phrases the issue found in the documents, and a public path that merely ends in credits.md
    assert INTERNAL.search("(aws.md section 6)") and INTERNAL.search("the seed documents")
    assert INTERNAL.search("(reference/credits.md, checked 2026-11-23)")
    assert not INTERNAL.search("plugins/aws-startup-advisor/skills/knowledge-base-for-startups/references/credits.md")


def test_the_review_email_uses_the_drafts_likelihood_words() -> None:
    # Given an account's drafts (a seed company with institutional funding: some programs likely, some possible)
    drafts = account_drafts()
    likelihoods = {m.likelihood for m in drafts.programs}
    assert {"likely", "possible"} <= likelihoods
    context = {"drafts": drafts, "figures": drafts.figures, "generated_at": CREATED}
    for template in ("email/drafts_review.txt.j2", "email/drafts_review.html.j2"):
        email = render(template, **context)
        # Then each program carries the word the drafts give it, and "fits" is never said
        assert "fits" not in email
        for match in drafts.programs:
            line = next(line for line in email.splitlines() if match.name in line)
            assert match.likelihood in line, (template, line)
    # and the partner email draft says how likely each program it lists is
    for match in (m for m in drafts.programs if m.eligible):
        line = next(line for line in drafts.referral.body.splitlines() if line.startswith(f"- {match.name}"))
        assert line.split(": ")[-1].startswith(match.likelihood)


def test_the_plan_markdown_lists_its_sources_one_a_line() -> None:
    # Given the demo's plan
    plan = demo_plan()
    markdown = views.plan_markdown(plan)
    section = markdown.split("## Sources", 1)[1]
    # Then every source is its own list item
    items = [line for line in section.splitlines() if line.startswith("- **")]
    assert len(items) == len(plan.sources) > 20


def test_a_plan_with_every_answer_given_still_renders_without_internal_names() -> None:
    # Given the worked example with a training workload too (another set of figures and sources)
    data = intake_dict(workload(), workload(name="fine-tune", stage="training", current_instance_type="p4d.24xlarge"))
    plan = build_plan(intake(*data["workloads"]), plan_id=PLAN_ID, created_at=CREATED)
    # Then neither rendering cites an internal file
    assert not INTERNAL.search(views.plan_markdown(plan))
    assert not INTERNAL.search(views.plan_page(plan, permalink="/plans/x", nonce="n"))
