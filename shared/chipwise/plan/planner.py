"""The planner: an intake becomes a credits-and-migration plan (pure: no I/O beyond the cached data files).

For each workload it walks the decision table (domain.md):

* training a mainstream model -> Trainium (trn2 for large models when priced, trn1 otherwise);
* steady LLM serving -> Inferentia2; small models at volume -> inf1 when cheaper; one chip family for both
  stages on request -> Trainium serving (priced against Inferentia2, which it costs more than);
* a training and a serving workload of the same model family share one Neuron port;
* spiky, low-volume or foundation-model-only serving -> Amazon Bedrock, when it can be priced;
* custom CUDA training, models Neuron cannot run, and ports that would not pay back (one-off jobs, slow
  payback) -> stay on the GPU, with the numbers that say why.

Instance counts come from throughput, costs from catalog prices, the porting cost from the effort and the
loaded engineer-week (``serving``, ``training``, ``options``). Every figure used is recorded with its source;
every default taken for a missing field is listed as an assumption.
"""

from __future__ import annotations

from datetime import datetime
from decimal import Decimal
from typing import Any

from chipwise.analyse import sizing
from chipwise.analyse.sizing import Stack
from chipwise.catalog import Source, get_credit_programs, get_neuron_software, platform_of
from chipwise.economics import break_even_months, cents, cost_per_million_observed, round_money, usd_per_hour
from chipwise.models.common import Confidence
from chipwise.plan.ace import opportunity_document
from chipwise.plan.checks import conflicts
from chipwise.plan.context import ZERO, Context, plain, short_name
from chipwise.plan.credits import CompanyProfile, CreditMatch, amount_text, match_programs
from chipwise.plan.document import CreditLine, PlanDocument, PlanTotals, WorkloadPlan
from chipwise.plan.inputs import Inputs, find_family, resolve
from chipwise.plan.intake import IntakeRequest, WorkloadIn
from chipwise.plan.options import Findings, SharedPort, Verdict, decide
from chipwise.plan.serving import serving_candidates
from chipwise.plan.training import training_candidates
from chipwise.presentation import plural
from chipwise.render import money
from chipwise.rules.base import copied

# --- one workload --------------------------------------------------------------------------------------------------


def _confidence(inp: Inputs, verdict: Verdict, contradictions: list[str]) -> Confidence:
    """High only with measured rates on a well-supported model at verified prices; each gap or risk lowers it.
    Answers that contradict each other make it low whatever else holds."""
    if contradictions:
        return "low"
    serving = inp.workload.stage == "inference"
    concerns = [
        serving and inp.throughput is None,
        serving and inp.demand_rps is None,
        inp.family.support(inp.workload.stage) != "drop_in",
        inp.workload.custom_cuda_kernels,
        bool(inp.assumptions),
        verdict.chosen.instance is not None and verdict.chosen.instance.price_is_estimate,
    ]
    count = sum(concerns)
    return "high" if count == 0 else "medium" if count <= 2 else "low"


def _per_million(cost: Decimal, units: Decimal | None) -> Decimal | None:
    """Cost of a million units (requests or tokens), to a hundredth of a cent."""
    per_million = cost_per_million_observed(cost, units)
    return None if per_million is None else round_money(per_million, 4)


def _serving_figures(inp: Inputs, verdict: Verdict) -> dict[str, Decimal | None]:
    """Cost per million requests (and tokens, when tokens a request is known), at today's actual volume."""
    requests = inp.monthly_requests
    per_request = inp.workload.tokens_per_request
    tokens = requests * per_request if requests is not None and per_request is not None else None
    return {
        "current_cost_per_million_requests_usd": _per_million(inp.current_cost, requests),
        "projected_cost_per_million_requests_usd": _per_million(verdict.chosen.monthly_cost, requests),
        "current_cost_per_million_tokens_usd": _per_million(inp.current_cost, tokens),
        "projected_cost_per_million_tokens_usd": _per_million(verdict.chosen.monthly_cost, tokens),
    }


def _training_figures(inp: Inputs, verdict: Verdict, ctx: Context, notes: list[str]) -> dict[str, Decimal | None]:
    """Dollars per trained model: the month's (or the one run's) cost over the runs it pays for."""
    if inp.workload.one_off:
        runs = Decimal(1)
    elif inp.workload.runs_per_month is not None:
        runs = inp.workload.runs_per_month
    else:
        runs = ctx.planning("default_runs_per_month")
        notes.append(f"Training runs a month not given: {plain(runs)} assumed (dollars per trained model).")
    return {
        "current_cost_per_trained_model_usd": cents(inp.current_cost / runs),
        "projected_cost_per_trained_model_usd": cents(verdict.chosen.monthly_cost / runs),
    }


def _describe_current(inp: Inputs) -> str:
    w = inp.workload
    size = f" ({plain(inp.params_billion)}B)" if inp.params_billion is not None else ""
    model = short_name(inp.family) if inp.family.id != "custom" else f"{w.model_family} (custom architecture)"
    what = f"{'Training' if w.stage == 'training' else 'Serving'} {model}{size}"
    today = (
        f"{inp.count} × {inp.current.name} at {usd_per_hour(inp.current_price)} for {plain(inp.hours)} h "
        f"costs {money(inp.current_cost)}"
    )
    if w.one_off:
        return f"{what}: one run on {today}."
    if inp.demand_rps is not None and inp.throughput is not None:
        rate = inp.demand_rps.quantize(Decimal("0.1"))
        return f"{what} at {rate} requests/s: {today} a month ({plain(inp.throughput)} requests/s each)."
    return f"{what}: {today} a month."


def _describe_target(inp: Inputs, verdict: Verdict) -> str | None:
    option = verdict.chosen
    if not verdict.moved:
        return None
    if option.bedrock is not None:
        tokens = inp.workload.tokens_per_request
        per = f" ({tokens} tokens a request)" if tokens else ""
        return f"Target: Amazon Bedrock, {option.bedrock.name}{per}, about {money(option.monthly_cost)} a month."
    assert option.instance is not None
    rate = f" at about {option.throughput.quantize(Decimal('0.1'))} requests/s each" if option.throughput else ""
    period = "for the run" if inp.workload.one_off else "a month"
    return f"Target: {option.count} × {option.instance.name}{rate}, {money(option.monthly_cost)} {period}."


def _latency_note(inp: Inputs, verdict: Verdict, ctx: Context) -> str | None:
    target = inp.workload.latency_ms_target
    if target is None or verdict.chosen.platform != "inferentia" or not verdict.moved:
        return None
    penalty = ctx.figure(
        "inferentia2_single_request_latency_penalty", ctx.assumptions.inferentia2_single_request_latency_penalty
    )
    return (
        f"Check the {target} ms target in the benchmark: single-request latency on Inferentia2 is typically "
        f"{penalty * 100:.0f} % higher than on a GPU (batched throughput is what saves)."
    )


def _recommended_type(verdict: Verdict) -> str | None:
    chosen = verdict.chosen
    if chosen.instance is not None:
        return chosen.instance.name
    return chosen.bedrock.model_id if chosen.bedrock is not None else None


def software_of(verdict: Verdict, stage: str, ctx: Context) -> Stack | None:
    """The Neuron stack the chosen target runs (None off Neuron), recorded with its public sources."""
    instance = verdict.chosen.instance
    stack = sizing.software(instance.family, stage) if instance is not None and instance.neuron else None
    if stack is not None:
        # the source that speaks of this stage (a family's sources cover its serving and its training stack)
        word = "TRAINING" if stage == "training" else "INF"
        code = next((c for c in stack.sources if word in c), stack.sources[0])
        what = "training" if stage == "training" else "serving"
        ctx.ledger.add(f"Neuron {what} software on {stack.family}", stack.path, get_neuron_software().sources[code])
    return stack


def plan_workload(w: WorkloadIn, ctx: Context, shared_port: SharedPort | None) -> WorkloadPlan:
    """One workload's recommendation. ``shared_port``: a Neuron port of this model another workload pays for."""
    inp = resolve(w, ctx)
    contradictions = conflicts(inp, ctx)
    found: Findings = (
        training_candidates(inp, ctx, shared_port)
        if w.stage == "training"
        else serving_candidates(inp, ctx, shared_port)
    )
    verdict = decide(inp, found.candidates, ctx, found.blockers)
    assumptions = [*inp.assumptions, *found.assumptions]
    if w.stage == "training":
        figures = _training_figures(inp, verdict, ctx, assumptions)
    else:
        figures = _serving_figures(inp, verdict)
    stack = software_of(verdict, w.stage, ctx)
    rationale = [
        *(f"Please check your answers: {c}" for c in contradictions),
        _describe_current(inp),
        _describe_target(inp, verdict),
        f"Software: {stack.path}." if stack is not None else None,
        *verdict.rationale,
        _latency_note(inp, verdict, ctx),
    ]
    chosen = verdict.chosen
    current, projected = cents(inp.current_cost), cents(chosen.monthly_cost)
    saving = current - projected if verdict.moved else ZERO
    return WorkloadPlan(
        name=w.name,
        stage=w.stage,
        action="move" if verdict.moved else "keep",
        recommended_platform=chosen.platform,
        recommended_instance_type=_recommended_type(verdict),
        recommended_count=chosen.count,
        current_instance_type=inp.current.name,
        current_count=inp.count,
        current_monthly_cost_usd=current,
        projected_monthly_cost_usd=projected,
        monthly_savings_usd=ZERO if w.one_off else saving,
        one_time_savings_usd=saving if w.one_off else None,
        porting_effort=chosen.effort,
        porting_cost_usd=cents(verdict.port_cost),
        break_even_months=verdict.break_even,
        confidence=_confidence(inp, verdict, contradictions),
        rationale=" ".join(r for r in rationale if r),
        assumptions=list(dict.fromkeys(assumptions)),
        software_path=stack.path if stack is not None else None,
        conflicts=contradictions,
        **figures,
    )


# --- the whole plan ----------------------------------------------------------------------------------------------


def company_profile(intake: IntakeRequest) -> CompanyProfile:
    """The facts credit eligibility depends on, from the intake."""
    return CompanyProfile(
        stage=intake.company.stage,
        institutional_funding=intake.company.institutional_funding,
        activate_provider_org_id=intake.company.activate_provider_org_id,
        ai_first=intake.company.ai_first,
        country=intake.company.country,
        monthly_spend_usd=intake.aws.monthly_spend_usd,
        has_existing_workloads_to_migrate=any(w.runs_outside_aws for w in intake.workloads),
    )


# A credit line's fields copied from the program's match, named alike on both sides.
CREDIT_LINE_FROM_MATCH = (
    *("program", "name", "eligible", "likelihood", "source_strength", "max_amount_usd"),
    *("reason", "how_to_apply", "source"),
)


def credit_line(match: CreditMatch, ctx: Context) -> CreditLine:
    if match.max_amount_usd is not None:
        ctx.ledger.add(
            f"{match.name} amount",
            f"up to ${match.max_amount_usd}",
            Source(
                title=match.name,
                citation=match.source,
                url=match.url,
                as_of=match.as_of,
                confidence="single" if match.estimate else "verified",
            ),
        )
    program = next(p for p in get_credit_programs() if p.id == match.program)
    return CreditLine(
        **copied(match, CREDIT_LINE_FROM_MATCH),
        amount_is_estimate=match.estimate,
        amount=amount_text(program),
        as_of=match.as_of.isoformat(),
    )


def _plan_order(workloads: list[WorkloadIn]) -> list[int]:
    """Training first, so that its Neuron port is known when the serving workload of the same model is planned."""
    return sorted(range(len(workloads)), key=lambda i: (workloads[i].stage != "training", i))


def plan_workloads(intake: IntakeRequest, ctx: Context) -> list[WorkloadPlan]:
    ported: dict[str, SharedPort] = {}  # model family id -> the port another workload pays for, and its stack
    plans: dict[int, WorkloadPlan] = {}
    for index in _plan_order(intake.workloads):
        w = intake.workloads[index]
        family = find_family(ctx, w.model_family)
        key = family.id if family is not None and family.id != "custom" else None
        plan = plan_workload(w, ctx, ported.get(key) if key else None)
        stack = sizing.software(plan.recommended_instance_type or "", w.stage)
        if key and stack is not None and plan.porting_effort != "none":
            ported.setdefault(key, SharedPort(w.name, stack))
        plans[index] = plan
    return [plans[i] for i in range(len(intake.workloads))]


def totals(plans: list[WorkloadPlan], credits: list[CreditLine]) -> PlanTotals:
    recurring = [p for p in plans if p.one_time_savings_usd is None]
    current = sum((p.current_monthly_cost_usd for p in recurring), ZERO)
    projected = sum((p.projected_monthly_cost_usd for p in recurring), ZERO)
    savings = sum((p.monthly_savings_usd for p in plans), ZERO)
    porting = sum((p.porting_cost_usd for p in plans), ZERO)
    likely = [c.max_amount_usd for c in credits if c.likelihood == "likely" and c.max_amount_usd is not None]
    return PlanTotals(
        current_monthly_cost_usd=current,
        projected_monthly_cost_usd=projected,
        monthly_savings_usd=savings,
        one_time_savings_usd=sum((p.one_time_savings_usd or ZERO for p in plans), ZERO),
        porting_cost_usd=porting,
        payback_months=break_even_months(porting, savings) if porting else (0.0 if savings > 0 else None),
        likely_credit_usd=max(likely) if likely else None,
    )


def moved(plan: WorkloadPlan) -> bool:
    return plan.action == "move"


def _moves(plans: list[WorkloadPlan], platforms: tuple[str, ...]) -> list[WorkloadPlan]:
    return [p for p in plans if p.recommended_platform in platforms and moved(p)]


def _with_stack(plan: WorkloadPlan) -> str:
    """ " with NxD Inference / Optimum Neuron on inf2 (maintenance mode ...)": the stack the data file names."""
    return f" with {plan.software_path}" if plan.software_path else ""


def _neuron_steps(plans: list[WorkloadPlan], intake: IntakeRequest) -> list[str]:
    """Prove, port, benchmark, scale: for the workloads that move from a GPU to Neuron."""
    neuron = ("inferentia", "trainium")
    moves = [p for p in _moves(plans, neuron) if platform_of(p.current_instance_type or "") not in neuron]
    if not moves:
        return []
    first = max(moves, key=lambda p: p.monthly_savings_usd + (p.one_time_savings_usd or ZERO))
    source = next(w for w in intake.workloads if w.name == first.name)
    check = (
        f"the loss curve against the {first.current_instance_type} baseline"
        if first.stage == "training"
        else f"accuracy against the {first.current_instance_type} baseline"
    )
    metric = (
        "dollars per trained model"
        if first.stage == "training"
        else "cost per 1M requests"
        + (f" at your {source.latency_ms_target} ms latency target" if source.latency_ms_target else "")
    )
    names = ", ".join(f"“{p.name}” → {p.recommended_count} × {p.recommended_instance_type}" for p in moves)
    return [
        f"Prove the path on one {first.recommended_instance_type} with your {source.model_family} model "
        f"(“{first.name}”), using the Neuron Deep Learning AMI or container{_with_stack(first)}.",
        f"Port and compile a short run; validate {check}; note the compile time and throughput.",
        f"Benchmark the deciding metric, {metric}, at today's prices before committing: the plan's figures are "
        "representative ratios, not your measurements.",
        f"Scale out if it pencils ({names}): shift traffic gradually with a GPU fallback; for training, "
        "UltraClusters or SageMaker HyperPod.",
    ]


def _other_steps(plans: list[WorkloadPlan]) -> list[str]:
    steps = []
    bedrock = _moves(plans, ("bedrock",))
    if bedrock:
        names = ", ".join(f"“{p.name}”" for p in bedrock)
        steps.append(
            f"Move {names} to Amazon Bedrock: call the managed model by API, pay per token, no chip to run; "
            "keep it there for spiky traffic."
        )
    stays = [p for p in plans if not moved(p)]
    if stays:
        names = ", ".join(f"“{p.name}”" for p in stays)
        where = "it runs" if len(stays) == 1 else "they run"
        steps.append(f"Keep {names} where {where} for now; revisit when the model or the volume changes.")
    return steps


def _credit_steps(credits: list[CreditLine]) -> list[str]:
    likely = [c for c in credits if c.likelihood == "likely"]
    possible = [c for c in credits if c.likelihood == "possible"]
    steps = []
    if likely:
        names = "; ".join(f"{c.name} ({c.amount})" for c in likely)
        steps.append(
            f"Apply for credits before the bill grows: {names}. They cover trn, inf and GPU instance hours; AWS "
            "decides, so plan without them."
        )
    if possible:
        names = ", ".join(c.name for c in possible)
        steps.append(f"Ask about {names}: each is possible, for the reason the plan gives; none is a promise.")
    if not likely and not possible:
        closest = credits[0] if credits else None
        steps.append("No credit program fits today." + (f" {closest.name}: {closest.reason}" if closest else ""))
    steps.append(
        "If you want help with the port, tick the partner-referral box on the form: our advisory team then "
        "reviews a referral to an AWS partner with you; nothing is shared without your go-ahead."
    )
    return steps


def migration_steps(plans: list[WorkloadPlan], credits: list[CreditLine], intake: IntakeRequest) -> list[str]:
    """The migration path (domain.md), made specific to this plan."""
    return [*_neuron_steps(plans, intake), *_other_steps(plans), *_credit_steps(credits)]


def _business_problem(intake: IntakeRequest, plans: list[WorkloadPlan], sums: PlanTotals) -> str:
    moves = [f"{p.name} to {p.recommended_platform}" for p in plans if moved(p)]
    return (
        f"{intake.company.name} spends about {money(sums.current_monthly_cost_usd)} a month on AI accelerator "
        f"capacity across {plural(len(plans), 'workload')}. Chipwise's plan estimates "
        f"{money(sums.monthly_savings_usd)} a "
        f"month saved by moving {', '.join(moves) or 'nothing yet'}, with a one-time porting effort of about "
        f"{money(sums.porting_cost_usd)}. The customer needs help with the Neuron port, a benchmark and credits."
    )


def referral_draft(
    intake: IntakeRequest, plans: list[WorkloadPlan], sums: PlanTotals, steps: list[str]
) -> dict[str, Any]:
    """The ACE-shaped partner-referral draft (reviewed by a person; never sent automatically)."""
    spend = intake.aws.monthly_spend_usd
    expected = spend - sums.monthly_savings_usd if spend is not None else sums.projected_monthly_cost_usd
    platforms = sorted({p.recommended_platform for p in plans if moved(p)})
    return opportunity_document(
        company_name=intake.company.name,
        website=intake.company.website,
        country_code=intake.company.country,
        contact_name=intake.contact.name,
        contact_email=str(intake.contact.email),
        aws_account_id=intake.aws.account_ids[0] if intake.aws.account_ids else None,
        expected_monthly_spend_usd=max(expected, ZERO),
        project_title=f"{intake.company.name}: AI accelerator cost plan ({', '.join(platforms) or 'review'})",
        business_problem=_business_problem(intake, plans, sums),
        next_steps=steps[0] if steps else "Review the plan with the customer.",
    )


def build_plan(intake: IntakeRequest, *, plan_id: str, created_at: datetime) -> PlanDocument:
    """The plan for one intake (pure: the caller supplies the id and the clock)."""
    ctx = Context.load(intake.aws.region)
    plans = plan_workloads(intake, ctx)
    credits = [credit_line(m, ctx) for m in match_programs(company_profile(intake))]
    sums = totals(plans, credits)
    steps = migration_steps(plans, credits, intake)
    return PlanDocument(
        plan_id=plan_id,
        created_at=created_at,
        company=intake.company.name,
        country=intake.company.country,
        region=intake.aws.region,
        workloads=plans,
        credits=credits,
        total_monthly_savings_usd=sums.monthly_savings_usd,
        totals=sums,
        steps=steps,
        sources=list(ctx.ledger.sources.values()),
        referral_draft=referral_draft(intake, plans, sums, steps),
    )
