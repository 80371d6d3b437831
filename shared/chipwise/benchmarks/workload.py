"""What a finding says about the workload to benchmark: the model, the task, today's traffic and cost.

Read from the finding (its typed evidence, monthly cost), its resource (workload hints, container environment)
and, when the evidence has no traffic figures, the resource's hourly CloudWatch rollups.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from typing import Any, Literal, cast

from chipwise.benchmarks.repricing import (
    SECONDS_PER_HOUR,
    Current,
    Demand,
    PlausibleRange,
    RateBasis,
    RepricingPolicy,
    Target,
    Unit,
)
from chipwise.catalog import Catalog, get_assumptions, get_model_families
from chipwise.collect.hints import usable_model_id
from chipwise.economics import HOURS_PER_MONTH, percentile
from chipwise.models.benchmark import BenchmarkTask
from chipwise.models.common import SERVING_KINDS
from chipwise.models.evidence import FindingEvidence
from chipwise.models.neuron import INSTANCE_RUNTIME_TAG
from chipwise.models.resources import EndpointDetails, TrainingJobDetails, WorkloadHints, parse_details, parse_hints
from chipwise.store import Session
from chipwise.store.repositories.benchmarks import BenchmarkRepository, MetricRollupRecord, NeuronRollupRecord
from chipwise.store.repositories.findings import FindingRecord
from chipwise.store.repositories.inventory import ResourceRecord, ResourceRepository

WorkloadKind = Literal["inference", "training"]

# The rules that lead to a benchmark, and which bill each one is about.
BENCHMARK_RULES: dict[str, WorkloadKind] = {
    "gpu_inference_portable": "inference",
    "gpu_training_portable": "training",
    "trainium_serving_inference": "inference",
    "inferentia_underutilized": "inference",
}
GPU_RULES = frozenset({"gpu_inference_portable", "gpu_training_portable"})

SAGEMAKER_NAMESPACE = "AWS/SageMaker"
INVOCATIONS = "Invocations"
MODEL_LATENCY = "ModelLatency"  # microseconds
_ENCODER_TASKS: dict[str, BenchmarkTask] = {
    "text-classification": "text-classification",
    "sentiment-analysis": "text-classification",
    "token-classification": "token-classification",
    "ner": "token-classification",
    "feature-extraction": "feature-extraction",
    "sentence-similarity": "feature-extraction",
    "text-generation": "text-generation",
}
_GENERATIVE_STACKS = frozenset({"tgi", "vllm", "djl", "triton"})
ENCODER_MAX_PARAMS_BILLION = Decimal(1)  # encoder families (BERT, RoBERTa, MPNet) are well under 1B parameters


def number(value: Any) -> Decimal | None:
    """A positive Decimal from an evidence value (number or numeric string), else None."""
    if value is None or isinstance(value, bool):
        return None
    try:
        result = Decimal(str(value))
    except (InvalidOperation, ValueError):
        return None
    return result if result.is_finite() and result > 0 else None


@dataclass(frozen=True)
class BenchmarkWorkload:
    """The model and task to benchmark, and what is observed about it today.

    ``serving_stack`` is the engine that serves the model: a DJL/LMI container rolling with vLLM counts as
    ``vllm`` (so the benchmark runs vLLM on Neuron, not Optimum Neuron). ``model_id_note`` says why no model id is
    usable when the configuration named one that is not (a path inside the container, an S3 URI)."""

    kind: WorkloadKind
    task: BenchmarkTask
    model_id: str | None
    model_family: str | None
    serving_stack: str | None
    demand: Demand | None
    observed_tokens_per_second: Decimal | None
    model_id_note: str | None = None
    latency_target_ms: Decimal | None = None  # the resource's own p95 target (tag chipwise:latency-target-ms)


@dataclass(frozen=True)
class Telemetry:
    """A resource's stored hourly telemetry: CloudWatch rollups (SageMaker) and neuron-monitor rollups (EC2)."""

    metrics: Sequence[MetricRollupRecord] = ()
    neuron: Sequence[NeuronRollupRecord] = ()


NO_TELEMETRY = Telemetry()


def describe_workload(
    finding: FindingRecord, resource: ResourceRecord | None, telemetry: Telemetry = NO_TELEMETRY
) -> BenchmarkWorkload:
    """The workload of a finding. Traffic comes from the rules' evidence, else from the resource's telemetry."""
    hints = parse_hints(resource.hints if resource else None)
    kind = BENCHMARK_RULES.get(finding.rule_id, "inference")
    evidence = FindingEvidence.read(finding.evidence)
    demand = None
    if kind == "inference":
        demand = (
            demand_from_evidence(evidence)
            or demand_from_rollups(telemetry.metrics)
            or demand_from_neuron(telemetry.neuron)
        )
    model_id = next(
        (m for m in map(usable_model_id, (hints.hf_model_id, evidence.hf_model_id, evidence.model_id)) if m), None
    )
    return BenchmarkWorkload(
        kind=kind,
        task=task_of(kind, hints, _environment(resource)),
        model_id=model_id,
        model_family=hints.model_family or evidence.model_family,
        serving_stack=hints.serving_engine or hints.serving_stack,
        demand=demand,
        observed_tokens_per_second=number(evidence.observed_tokens_per_second) if kind == "training" else None,
        model_id_note=None if model_id else model_id_note(hints),
        latency_target_ms=latency_target_of(resource),
    )


def model_id_note(hints: WorkloadHints) -> str | None:
    """Why the configuration's model id cannot be benchmarked: what named it and what it held."""
    if not hints.rejected_model_ids:
        return None
    named = ", ".join(f"{basis}={value!r}" for basis, value in sorted(hints.rejected_model_ids.items()))
    jumpstart = f"; JumpStart model {hints.jumpstart_model_id}" if hints.jumpstart_model_id else ""
    return f"{named} is a path or URI, not a Hugging Face model id{jumpstart}"


LATENCY_TARGET_TAG = "chipwise:latency-target-ms"


def latency_target_of(resource: ResourceRecord | None) -> Decimal | None:
    """The p95 latency target a resource's owner set with the ``chipwise:latency-target-ms`` tag (None when
    absent or not a positive number: the target then defaults to today's observed p95 with the tolerance)."""
    raw = (resource.tags or {}).get(LATENCY_TARGET_TAG) if resource is not None else None
    value = number(raw) if raw is not None else None
    return value if value is not None and value > 0 else None


def _environment(resource: ResourceRecord | None) -> Mapping[str, str]:
    """The container environment: a training job's, or an endpoint's first variant's."""
    if resource is None:
        return {}
    details = parse_details(resource.kind, resource.details)
    if isinstance(details, TrainingJobDetails):
        return details.environment
    if isinstance(details, EndpointDetails) and details.variants:
        return details.variants[0].environment
    return {}


def task_of(kind: WorkloadKind, hints: WorkloadHints, environment: Mapping[str, str]) -> BenchmarkTask:
    """Training; else the endpoint's HF_TASK; else text generation for LLM serving stacks and large models,
    feature extraction for small (encoder) models."""
    if kind == "training":
        return "training"
    declared = str(environment.get("HF_TASK", "")).strip().lower()
    if declared in _ENCODER_TASKS:
        return _ENCODER_TASKS[declared]
    if hints.serving_stack in _GENERATIVE_STACKS:
        return "text-generation"
    family = get_model_families().get(hints.model_family or "")
    params = family.typical_params_billion if family else None
    return "feature-extraction" if params is not None and params < ENCODER_MAX_PARAMS_BILLION else "text-generation"


def demand_from_evidence(evidence: FindingEvidence) -> Demand | None:
    """Traffic the rules recorded: tokens when given, else requests (or Neuron executions), per hour."""
    latency = number(evidence.latency_p95_ms) or number(evidence.latency_ms)
    candidates: tuple[tuple[Unit, Decimal | None, Decimal | None], ...] = (
        ("tokens", number(evidence.peak_tokens_per_hour), number(evidence.mean_tokens_per_hour)),
        ("requests", number(evidence.peak_requests_per_hour), number(evidence.mean_requests_per_hour)),
        ("requests", None, number(evidence.mean_executions_per_hour)),
    )
    for unit, peak, mean in candidates:
        peak = peak or mean
        if peak is not None:
            return Demand(
                unit=unit,
                peak_per_second=peak / SECONDS_PER_HOUR,
                mean_per_second=(mean or peak) / SECONDS_PER_HOUR,
                latency_p95_ms=latency,
                source="evidence",
            )
    return None


def demand_from_rollups(rollups: Sequence[MetricRollupRecord]) -> Demand | None:
    """SageMaker traffic from hourly rollups: the busiest hour's rate as the peak, the mean over the hours
    with data, and the p95 of the hourly mean ModelLatency (µs → ms)."""
    invocations = [Decimal(str(r.sum)) for r in rollups if r.metric == INVOCATIONS and r.sum]
    if not invocations:
        return None
    latencies = sorted(Decimal(str(r.average)) / 1000 for r in rollups if r.metric == MODEL_LATENCY and r.average)
    return Demand(
        unit="requests",
        peak_per_second=max(invocations) / SECONDS_PER_HOUR,
        mean_per_second=sum(invocations, Decimal(0)) / len(invocations) / SECONDS_PER_HOUR,
        latency_p95_ms=_p95(latencies),
        source="cloudwatch",
    )


def demand_from_neuron(rollups: Sequence[NeuronRollupRecord]) -> Demand | None:
    """Traffic of an EC2 Neuron instance from neuron-monitor: executions completed per hour (all runtimes), and
    the p95 over hours of the hourly p99 execution latency (a lenient stand-in for the request p95)."""
    per_hour: dict[Any, int] = {}
    for row in rollups:
        per_hour[row.hour] = per_hour.get(row.hour, 0) + row.executions_completed
    counts = [Decimal(c) for c in per_hour.values() if c > 0]
    if not counts:
        return None
    latencies = sorted(Decimal(str(r.latency_p99_s)) * 1000 for r in rollups if r.latency_p99_s)
    return Demand(
        unit="requests",
        peak_per_second=max(counts) / SECONDS_PER_HOUR,
        mean_per_second=sum(counts, Decimal(0)) / len(counts) / SECONDS_PER_HOUR,
        latency_p95_ms=_p95(latencies),
        source="neuron-monitor",
    )


def _p95(ordered: Sequence[Decimal]) -> Decimal | None:
    """The p95 of sorted values (None without any)."""
    return percentile(ordered, 95) if ordered else None


def load_telemetry(session: Session, resource: ResourceRecord | None) -> Telemetry:
    """SageMaker traffic and latency rollups for an endpoint, neuron-monitor rollups for an EC2 instance."""
    if resource is None:
        return NO_TELEMETRY
    if resource.kind in SERVING_KINDS:
        metrics = (INVOCATIONS, MODEL_LATENCY)
        return Telemetry(metrics=BenchmarkRepository(session).metric_rollups(resource.id, SAGEMAKER_NAMESPACE, metrics))
    if resource.kind == "ec2_instance":
        instance_id = resource.arn.rsplit("/", 1)[-1]
        neuron = BenchmarkRepository(session).neuron_rollups(resource.account_id, instance_id, INSTANCE_RUNTIME_TAG)
        return Telemetry(neuron=neuron)
    return NO_TELEMETRY


def observe(session: Session, finding: FindingRecord) -> BenchmarkWorkload:
    """The finding's workload, its resource and telemetry read from the store."""
    resource = resource_of(session, finding)
    return describe_workload(finding, resource, load_telemetry(session, resource))


def resource_of(session: Session, finding: FindingRecord) -> ResourceRecord | None:
    return ResourceRepository(session).by_key(finding.resource_key)


# --- money in and out ---------------------------------------------------------------------------------------------


def current_of(finding: FindingRecord, catalog: Catalog, kind: WorkloadKind) -> Current:
    """Today's cost: the finding's monthly cost, and an hourly rate per instance. An always-on endpoint's rate
    is its effective one (monthly cost ÷ instance-hours, so the account's discounts count); a training job runs
    only some hours, so its rate is the catalog's on-demand price, else (a type without a public price) its bill
    over the hours it ran."""
    count = max(1, finding.instance_count)
    list_price = catalog.price(finding.instance_type, finding.region) if finding.instance_type else None
    monthly = finding.monthly_cost_usd
    run_hours = number(FindingEvidence.read(finding.evidence).run_hours)
    hours = run_hours if kind == "training" and run_hours else HOURS_PER_MONTH
    effective = monthly / (count * hours) if monthly > 0 else None
    first, second = ((list_price, "catalog"), (effective, "account"))
    if kind != "training":
        first, second = second, first
    hourly, basis = first if first[0] else second
    if not hourly:
        hourly, basis = Decimal(0), "none"
    return Current(
        instance_type=finding.instance_type or "unknown",
        count=count,
        price_usd_per_hour=hourly,
        monthly_cost_usd=monthly if monthly > 0 else hourly * count * HOURS_PER_MONTH,
        run_hours=run_hours,
        rate_basis=cast(RateBasis, basis),
    )


# The published saving range for each move (today's platform, the target's, the workload): the assumptions.json
# figure that states it and how to read it as a fraction cheaper per unit of work.
_MOVES: dict[tuple[str, str, WorkloadKind], tuple[str, str]] = {
    ("nvidia", "trainium", "training"): ("GPU → Trainium training", "trainium_training_price_performance_gain"),
    ("nvidia", "inferentia", "inference"): ("GPU → Inferentia serving", "inferentia2_inference_cost_reduction"),
}


def plausible_range(
    finding: FindingRecord, priced_as: str, catalog: Catalog, kind: WorkloadKind
) -> PlausibleRange | None:
    """The plausible saving per unit of work for the finding's move, from the data file's published low/high
    widened by ``measurement_plausibility_margin``; None for a move with no published ratio (Neuron → Neuron)."""
    today = catalog.get(finding.instance_type or "")
    target = catalog.get(priced_as)
    if today is None or target is None:
        return None
    move = _MOVES.get((today.platform, target.platform, kind))
    if move is None:
        return None
    assumptions = get_assumptions()
    figure = assumptions.figures()[move[1]]
    return PlausibleRange(
        move=move[0],
        figure=move[1],
        published_low=figure.low if figure.low is not None else figure.value,
        published_high=figure.high if figure.high is not None else figure.value,
        margin=assumptions.measurement_plausibility_margin.value,
    )


def target_of(priced_as: str, region: str, catalog: Catalog) -> Target | None:
    """The target's on-demand price in the finding's region; None when the catalog has none."""
    price = catalog.price(priced_as, region)
    return None if price is None else Target(priced_as=priced_as, price_usd_per_hour=price)


def pricing_policy() -> RepricingPolicy:
    """Capacity headroom and accepted latency increase, from ``assumptions.json`` (each with its source)."""
    economics = get_assumptions()
    penalty = economics.inferentia2_single_request_latency_penalty
    return RepricingPolicy(
        headroom=economics.core_headroom_factor.value, latency_tolerance=1 + (penalty.high or penalty.value)
    )
