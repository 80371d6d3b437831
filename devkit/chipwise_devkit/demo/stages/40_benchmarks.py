"""Stage 4: prove it. Benchmark jobs for the demo account's migration findings on the emulated trn/inf queues
(plus a paired GPU baseline), the result files the jobs would write, and the Batch state events delivered to
the same function the ``benchmark_result`` Lambda calls. Writes ``benchmarks.md``: estimate versus measurement.

The emulator cannot run a Neuron container, so this stage writes each job's result file itself. Its numbers are
derived, not invented:

- today's capacity per instance = the resource's requests (or Neuron executions) per second ÷ its instances ÷
  its utilisation (GPU or NeuronCore), from the demo account's spec (``chipwise_devkit.demo.account``); without a
  traffic figure, the seed guide's illustrative GPU-instance throughput (``assumptions.json`` worked example);
- a Neuron target's capacity and latency come from a model of the workload on the target's chips, not from the
  ratios the rules estimate with (``inferentia2_inference_throughput_ratio``, the latency penalty): the model's
  memory (the finding's evidence) decides how many chips one replica spans on each side (its weights sharded
  over them, ``ceil(required memory ÷ chip memory)``) and so how many replicas an instance holds; serving is bound
  by memory bandwidth (a generated token streams the weights once) or, for encoders, by dense BF16 compute
  (``ACCELERATORS``: datasheet figures per chip). Capacity scales with replicas × chips × the bound figure, one
  request's latency with one replica's chips × the figure; both × ``DEMO_MEASUREMENT_FACTOR`` (a first port);
- training: today's GPU tokens/s per workload from the training-compute rule (6 × parameters FLOPs a token): the
  instance's GPUs × their dense BF16 peak × a model-FLOPs utilisation × the job's GPU utilisation ÷ (6 ×
  parameters), so an 8B fine-tune and BERT-large pretraining cost different $/1M tokens; Trainium tokens/s = the
  GPU's × (Trainium price ÷ GPU price) ÷ (1 − the training price-performance gain) × the demo factor. The GPU
  price is the one the product prices today's GPU with (the cited on-demand price, else the account's rate from
  its bill), never a fallback. The jobs run native PyTorch on Neuron (the go-forward training stack);
- one result is implausible on purpose (``IMPLAUSIBLE``): the plausibility gate holds it as ``needs_review``,
  out of the totals until someone checks it.

One job's first attempt is reported as lost with its host (a Spot reclaim), to show the retry.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import timedelta
from decimal import ROUND_HALF_UP, Decimal
from typing import Any

from sqlalchemy import select

from chipwise.aws import AwsContext, aws_context
from chipwise.benchmarks.dispatch import BenchmarkDispatchReport, dispatch_benchmarks
from chipwise.benchmarks.repricing import Demand
from chipwise.benchmarks.results import Clients, StateOutcome
from chipwise.benchmarks.workload import current_of, observe
from chipwise.catalog import InstanceType, get_assumptions, get_catalog
from chipwise.clock import utcnow
from chipwise.models.benchmark import BenchmarkParameters, BenchmarkResult, Measurement, split_s3_uri
from chipwise.models.events import BatchJobStateChangeEvent
from chipwise.pipeline.benchmarks import record_state_change
from chipwise.render import money
from chipwise.rules.registry import rule_title
from chipwise.settings import Settings, get_settings
from chipwise.store import session_scope
from chipwise.store.repositories.benchmarks import BenchmarkRepository
from chipwise.store.repositories.findings import FindingRecord, FindingRepository
from chipwise.store.tables import BenchmarkRun, Finding, Recommendation
from chipwise_devkit.batch import job_state_event, provision_benchmark_queues
from chipwise_devkit.demo.account import DemoResource, demo_resources
from chipwise_devkit.demo.runner import DemoContext, Stage

# A first port reaches 85 % of what the model of the workload on the target (serving: the chips' datasheet figures;
# training: the published price-performance gain) says, as real measurements of a first port usually do.
DEMO_MEASUREMENT_FACTOR = Decimal("0.85")
BASELINE_QUEUE = "chipwise-bench-gpu"
INF1_QUEUE = "chipwise-bench-inf1"  # the recommended family's queue for inf1 targets (bert-ner-g6)
# Parameters of the demo's training models (their model cards): Meta-Llama-3-8B 8.03 B, bert-large-uncased 336 M.
MODEL_PARAMETERS = {"meta-llama/Meta-Llama-3-8B": Decimal("8.03e9"), "bert-large-uncased": Decimal("336e6")}
# NVIDIA A100 (p4d/p4de): 312 TFLOPS dense BF16 per GPU (NVIDIA A100 Tensor Core GPU datasheet). Model-FLOPs
# utilisation 40 %: a demo figure in the range large-model training reports (PaLM: 46.2 %).
GPU_BF16_FLOPS = Decimal("312e12")
DEMO_MFU = Decimal("0.40")
# The llama3-8b fine-tune's target run counts padding as trained tokens (a harness slip a real first run can
# make): 3 × the throughput, a saving outside the plausible range, so the gate holds it for review.
IMPLAUSIBLE = {"llama3-8b-finetune": Decimal(3)}
SPOT_RECLAIM = "Host EC2 (instance i-0d3b5e7a9c1f24680) terminated."
_TENTH = Decimal("0.1")
_P50_OF_P95 = Decimal("1.1")


def _tenth(value: Decimal) -> Decimal:
    return value.quantize(_TENTH, rounding=ROUND_HALF_UP)


def _level(series: Any) -> Decimal | None:
    level = getattr(series, "level", None)
    return Decimal(str(level)) if level else None


# --- the numbers a real job would measure --------------------------------------------------------------------------


def today_capacity(resource: DemoResource | None) -> Decimal:
    """Requests per second one of today's instances could serve: observed rate ÷ instances ÷ utilisation."""
    if resource is not None:
        traffic = resource.traffic.requests_per_second if resource.traffic else None
        neuron = resource.neuron
        rate = _level(traffic) or (_level(neuron.executions_per_second) if neuron else None)
        busy = _level(resource.gpu) or (_level(neuron.utilization) if neuron else None)
        if rate and busy:
            return rate / resource.count / (busy / 100)
    return get_assumptions().worked_examples.inference_10m_requests_per_day.gpu_requests_per_second


@dataclass(frozen=True)
class Chip:
    """One accelerator chip's datasheet figures: memory bandwidth (GB/s) and dense BF16 (or FP16) TFLOPS."""

    bandwidth_gb_s: Decimal
    bf16_tflops: Decimal


# Per chip, from the makers' datasheets: NVIDIA A10G (AWS G5: 600 GB/s GDDR6; compute as the A10's, 125 TFLOPS
# BF16 dense), L4 (300 GB/s, 121 TFLOPS FP16 dense), L40S (864 GB/s, 362 TFLOPS dense), A100 40 GB (1,555 GB/s,
# 312 TFLOPS), H100 SXM (3,350 GB/s, 989 TFLOPS); AWS Neuron docs: Inferentia2 and Trainium chips (32 GiB HBM at
# 820 GB/s, 190 TFLOPS BF16 each).
ACCELERATORS: dict[str, Chip] = {
    "A10G": Chip(Decimal(600), Decimal(125)),
    "L4": Chip(Decimal(300), Decimal(121)),
    "L40S": Chip(Decimal(864), Decimal(362)),
    "A100": Chip(Decimal(1555), Decimal(312)),
    "H100": Chip(Decimal(3350), Decimal(989)),
    "Inferentia2": Chip(Decimal(820), Decimal(190)),
    "Trainium": Chip(Decimal(820), Decimal(190)),
}
MEMORY_OVERHEAD = Decimal("1.2")  # KV cache and activations over the weights (the rules' required memory)


@dataclass(frozen=True)
class Serving:
    """How one instance serves the model: replicas of it, chips per replica, and the chip's bound figure."""

    replicas: int
    chips_per_replica: int
    per_chip: Decimal

    @property
    def capacity(self) -> Decimal:
        return self.replicas * self.chips_per_replica * self.per_chip

    @property
    def replica_speed(self) -> Decimal:
        return self.chips_per_replica * self.per_chip


def serving_on(instance: InstanceType, required_gib: Decimal | None, task: str) -> Serving:
    """The model's replicas on ``instance``: each spans the fewest chips whose memory holds it (weights sharded)."""
    chip = ACCELERATORS.get(instance.accelerator or "")
    chips = max(1, instance.accelerator_count)
    if chip is None:
        raise ValueError(f"{instance.name}: no datasheet figures for {instance.accelerator} in the demo's model")
    per_chip_gib = instance.accelerator_memory_gib / chips
    spans = max(1, math.ceil(required_gib / per_chip_gib)) if required_gib else 1
    spans = min(spans, chips)
    bound = chip.bandwidth_gb_s if task == "text-generation" else chip.bf16_tflops
    return Serving(replicas=max(1, chips // spans), chips_per_replica=spans, per_chip=bound)


def required_memory(finding: FindingRecord) -> Decimal | None:
    """The memory one replica needs, from the finding's evidence (its required memory, else its weights × 1.2)."""
    evidence = finding.evidence or {}
    for key, factor in (("required_memory_gib", Decimal(1)), ("model_memory_gib", MEMORY_OVERHEAD)):
        value = evidence.get(key)
        if value is not None and Decimal(str(value)) > 0:
            return Decimal(str(value)) * factor
    return None


def capacity_scale(target: Serving, today: Serving) -> tuple[Decimal, Decimal]:
    """(one target instance's capacity ÷ one of today's, one request's latency on the target ÷ today's), before
    the demo factor."""
    return target.capacity / today.capacity, today.replica_speed / target.replica_speed


def inference_measurements(
    params: BenchmarkParameters, capacity: Decimal, latency_ms: Decimal | None
) -> list[Measurement]:
    """The grid a serving benchmark produces: throughput grows with the batch up to the serving batch (the middle
    batch size), where it reaches ``capacity`` at ``latency_ms``; beyond it latency grows with the batch.
    Longer sequences serve fewer requests (by the square root of the length ratio)."""
    batches = sorted(params.batch_sizes)
    serving = batches[len(batches) // 2]
    base_latency = latency_ms or Decimal(1000) * serving / capacity
    shortest = min(params.sequence_lengths)
    out = []
    for length in sorted(params.sequence_lengths):
        slower = (Decimal(length) / shortest).sqrt()
        for batch in batches:
            share = min(Decimal(1), Decimal(batch) / serving)
            rps = capacity * share / slower
            p95 = base_latency * max(Decimal(1), Decimal(batch) / serving) * slower.sqrt()
            per_request = params.output_tokens or length
            out.append(_measurement(params, batch, length, rps, rps * per_request, p95))
    return out


def training_measurements(params: BenchmarkParameters, tokens_per_second: Decimal) -> list[Measurement]:
    """Training steps: the largest batch reaches ``tokens_per_second``; smaller ones less (by the square root)."""
    largest = max(params.batch_sizes)
    out = []
    for length in sorted(params.sequence_lengths):
        for batch in sorted(params.batch_sizes):
            tps = tokens_per_second * (Decimal(batch) / largest).sqrt()
            step_ms = Decimal(batch * length) / tps * 1000
            out.append(_measurement(params, batch, length, tps / length, tps, step_ms))
    return out


def _measurement(
    params: BenchmarkParameters, batch: int, length: int, rps: Decimal, tps: Decimal, p95: Decimal
) -> Measurement:
    return Measurement(
        batch_size=batch,
        sequence_length=length,
        output_tokens=params.output_tokens,
        requests_per_second=_tenth(rps),
        tokens_per_second=_tenth(tps),
        latency_p50_ms=_tenth(p95 / _P50_OF_P95),
        latency_p95_ms=_tenth(p95),
        iterations=params.iterations,
    )


def gpu_tokens_per_second(params: BenchmarkParameters, gpu: InstanceType | None, spec: DemoResource | None) -> Decimal:
    """Today's training tokens/s on one GPU instance: GPUs × BF16 peak × MFU × GPU utilisation ÷ (6 × parameters)."""
    model = (spec.environment or {}).get("HF_MODEL_ID") if spec else None
    parameters = MODEL_PARAMETERS.get(model or params.model_id)
    if gpu is None or parameters is None:
        raise ValueError(f"{model or params.model_id}: no parameter count or GPU for the demo's training figures")
    busy = (_level(spec.gpu) if spec else None) or Decimal(100)
    return gpu.accelerator_count * GPU_BF16_FLOPS * DEMO_MFU * busy / 100 / (6 * parameters)


def baseline_rate(finding: FindingRecord) -> Decimal:
    """Today's GPU rate, the one the product prices the measurement with (:func:`current_of`): the catalog's
    cited on-demand price, else the account's (its bill over the hours the job ran). Never a fallback: the catalog
    has no public price for ``ml.p4d.24xlarge``, and a $1/h stand-in once made Trainium look 99 % cheaper."""
    current = current_of(finding, get_catalog(), "training")
    if current.rate_basis == "none":
        raise ValueError(f"{finding.resource_name}: no account rate or cited price for {current.instance_type}")
    return current.price_usd_per_hour


def demo_result(params: BenchmarkParameters, finding: FindingRecord, demand: Demand | None) -> BenchmarkResult:
    """The result file the job for ``params`` would write on the demo account."""
    catalog = get_catalog()
    instance = catalog.require(params.instance_type)
    today = catalog.get(finding.instance_type or "")
    spec = {r.name: r for r in demo_resources()}.get(finding.resource_name)
    economics = get_assumptions()
    if params.task == "training":
        gpu_price = baseline_rate(finding)
        gpu_tps = gpu_tokens_per_second(params, today, spec)
        if params.role == "gpu_baseline":
            tps = gpu_tps
        else:
            price = catalog.price(params.priced_as, finding.region)
            if price is None:  # dispatch never benchmarks an unpriced target: a fallback would invent a saving
                raise ValueError(f"no on-demand price for {params.priced_as} in {finding.region}")
            gain = economics.trainium_training_price_performance_gain.value
            tps = gpu_tps * price / gpu_price / (1 - gain) * DEMO_MEASUREMENT_FACTOR
            tps *= IMPLAUSIBLE.get(finding.resource_name, Decimal(1))
        measurements = training_measurements(params, tps)
    else:
        observed = demand.latency_p95_ms if demand else None
        capacity = today_capacity(spec)
        latency = observed
        if params.role == "target" and today is not None:
            needs = required_memory(finding)
            more, slower = capacity_scale(
                serving_on(instance, needs, params.task), serving_on(today, needs, params.task)
            )
            capacity *= more * DEMO_MEASUREMENT_FACTOR
            latency = observed * slower / DEMO_MEASUREMENT_FACTOR if observed else None
        measurements = inference_measurements(params, capacity, latency)
    started = utcnow()
    return BenchmarkResult(
        schema_version=1,
        run_id=params.run_id,
        finding_id=params.finding_id,
        role=params.role,
        task=params.task,
        model_id=params.model_id,
        instance_type=params.instance_type,
        runner=params.runner,
        sdk_versions={"chipwise-demo": "synthetic (see devkit/chipwise_devkit/demo/stages/40_benchmarks.py)"},
        started_at=started,
        finished_at=started + timedelta(minutes=5 * len(measurements)),
        compile_time_seconds=Decimal(60 * len(measurements)),
        measurements=measurements,
    )


# --- running the loop ---------------------------------------------------------------------------------------------


def _settings() -> Settings:
    """The demo's settings: the configured queues plus a GPU baseline queue and an inf1 queue."""
    settings = get_settings()
    baseline = settings.batch_queues.gpu_baseline or BASELINE_QUEUE
    inf1 = settings.batch_queues.inf1 or INF1_QUEUE
    queues = settings.batch_queues.model_copy(update={"gpu_baseline": baseline, "inf1": inf1})
    return settings.model_copy(update={"batch_queues": queues})


def _ensure_bucket(aws: AwsContext, bucket: str) -> None:
    s3 = aws.client("s3")
    if bucket not in {b["Name"] for b in s3.list_buckets().get("Buckets", [])}:
        s3.create_bucket(Bucket=bucket)


def _complete(ctx: DemoContext, clients: Clients, settings: Settings, run_id: str, fail_first: bool) -> StateOutcome:
    """Play one job to its end: write its result (unless its host is lost first) and deliver the state event."""
    with session_scope(ctx.database_url) as session:
        run = BenchmarkRepository(session).get_run(run_id)
        assert run is not None and run.job_id is not None
        finding = FindingRepository(session).by_id(run.finding_id)
        assert finding is not None
        params = BenchmarkParameters.model_validate(run.parameters)
        demand = observe(session, finding).demand
        job_id = run.job_id
    (job,) = clients.batch.describe_jobs(jobs=[job_id])["jobs"]
    if fail_first:
        attempt = {"container": {"exitCode": 137, "reason": "Host terminated"}, "statusReason": SPOT_RECLAIM}
        event = job_state_event({**job, "status": "FAILED", "statusReason": SPOT_RECLAIM, "attempts": [attempt]})
        outcome = record_state_change(BatchJobStateChangeEvent.model_validate(event), settings=settings)
        assert outcome.retry_run_id is not None, outcome
        return _complete(ctx, clients, settings, outcome.retry_run_id, fail_first=False)
    bucket, key = split_s3_uri(params.result_uri)
    body = demo_result(params, finding, demand).model_dump_json(indent=2)
    clients.s3.put_object(Bucket=bucket, Key=key, Body=body.encode(), ContentType="application/json")
    return record_state_change(BatchJobStateChangeEvent.model_validate(job_state_event(job)), settings=settings)


def _run(ctx: DemoContext) -> None:
    settings = _settings()
    aws = aws_context(ctx.region)
    provision_benchmark_queues(aws, settings)
    _ensure_bucket(aws, settings.artifacts_bucket)
    clients = Clients(aws.client("batch"), aws.client("s3"))
    with session_scope(ctx.database_url) as session:
        report = dispatch_benchmarks(
            session, clients.batch, settings=settings, clients=clients, account_id=ctx.account_id
        )
    submitted = [s.run_id for s in report.submitted if s.status == "submitted"]
    outcomes = [_complete(ctx, clients, settings, run_id, fail_first=i == 0) for i, run_id in enumerate(submitted)]
    with session_scope(ctx.database_url) as session:
        rows = _rows(session, [s.finding_id for s in report.submitted])
    ctx.write("benchmarks.md", render_markdown(rows, report))
    ctx.results["benchmarks"] = {
        "report": report.model_dump(mode="json"),
        "outcomes": [o.model_dump(mode="json") for o in outcomes],
    }
    ctx.summary.append(("Benchmarks", summary_line(rows, report)))


# --- the report ----------------------------------------------------------------------------------------------------


def _rows(session: Any, finding_ids: Sequence[str]) -> list[dict[str, Any]]:
    """One row per benchmarked finding: the estimate, the measurement and what became of the recommendation."""
    rows = []
    for finding_id in dict.fromkeys(finding_ids):
        finding = session.get(Finding, finding_id)
        runs = list(session.scalars(select(BenchmarkRun).where(BenchmarkRun.finding_id == finding_id)))
        target = next((r for r in sorted(runs, key=lambda r: -r.attempt) if r.role == "target"), None)
        recommendation = session.scalars(
            select(Recommendation)
            .where(Recommendation.finding_id == finding_id, Recommendation.source == "benchmark")
            .order_by(Recommendation.id.desc())
        ).first()
        rows.append(
            {
                "finding": finding,
                "jobs": len(runs),
                "queues": {r.job_queue for r in runs},
                "measured": (target.measured if target else None) or {},
                "attempts": max((r.attempt for r in runs if r.role == "target"), default=0),
                "baseline": any(r.role == "gpu_baseline" and r.status == "succeeded" for r in runs),
                "recommendation": recommendation,
                "status": target.status if target else "none",
            }
        )
    return rows


def _verdict(row: dict[str, Any]) -> str:
    measured = row["measured"]
    if not measured:
        return f"run {row['status']}"
    verdicts = {
        "confirmed": "confirmed",
        "withdrawn": "**withdrawn**",
        "inconclusive": "estimate stands",
        "needs_review": "**needs review**",
    }
    return verdicts[measured["verdict"]]


def _cost_per_million(measured: dict[str, Any]) -> str:
    value = measured.get("cost_per_million_usd")
    return f"{money(Decimal(value), 4)} / 1M {measured['unit']}" if value is not None else "-"


def _jobs(rows: list[dict[str, Any]]) -> tuple[int, int]:
    """Jobs run (retries included) and the queues they ran on."""
    queues: set[str] = set()
    for row in rows:
        queues |= row["queues"]
    return sum(row["jobs"] for row in rows), len(queues)


def _compared_with(row: dict[str, Any]) -> str:
    basis = row["measured"].get("current_basis")
    if basis == "gpu_baseline":
        return "GPU baseline run"
    if basis == "observed":
        return "today's bill" + (" (the GPU baseline run needs as many)" if row["baseline"] else "")
    return "-"


def prediction_error(estimated: Decimal, measured: Any) -> str:
    """(estimate − measured) ÷ measured, signed: "+36.0 %" means the estimate was 36 % above the measurement."""
    if measured is None or Decimal(measured) <= 0:
        return "-"
    error = (estimated - Decimal(measured)) / Decimal(measured) * 100
    return f"{error:+.1f} %"


def render_markdown(rows: list[dict[str, Any]], report: BenchmarkDispatchReport) -> str:
    jobs, queues = _jobs(rows)
    lines = [
        "# Benchmarks: estimate versus measurement",
        "",
        f"{jobs} jobs on {queues} emulated AWS Batch queues (trn/inf targets and paired GPU baselines). "
        "The emulator cannot run a Neuron container: each result file was written the way the "
        "job would write it, from the demo account's traffic and a model of the workload on the target (serving: the "
        "model's replicas on the chips, bound by their memory bandwidth or compute; training: the published "
        f"price-performance gain) × a first-port factor of {DEMO_MEASUREMENT_FACTOR} "
        "(see devkit/chipwise_devkit/demo/stages/40_benchmarks.py).",
        "",
        "The measured saving comes from what the run measured (throughput at the latency target, tokens per second);"
        " the prediction error is (estimate − measured) ÷ measured: how far the rule's estimate was off.",
        "",
        "| resource | rule | target | estimated saving /mo | measured saving /mo | prediction error | instances | "
        "measured cost | compared with | verdict | why |",
        "| --- | --- | --- | ---: | ---: | ---: | ---: | --- | --- | --- | --- |",
    ]
    for row in rows:
        f, m = row["finding"], row["measured"]
        saving = m.get("monthly_savings_usd")
        retried = f" (after {row['attempts'] - 1} failed attempt)" if row["attempts"] > 1 else ""
        cells = [
            f.resource_name,
            rule_title(f.rule_id),
            m.get("priced_as") or f.recommendation.get("target_instance_type"),
            money(f.estimated_monthly_savings_usd),
            money(Decimal(saving)) if saving is not None else "-",
            prediction_error(f.estimated_monthly_savings_usd, saving),
            m.get("target_count") or "-",
            _cost_per_million(m),
            _compared_with(row),
            _verdict(row) + retried,
            m.get("reason", ""),
        ]
        lines.append("| " + " | ".join(str(c) for c in cells) + " |")
    if report.skipped:
        lines += ["", "Not benchmarked:", ""]
        lines += [f"- {s.resource_name} ({rule_title(s.rule_id)}, {s.role}): {s.reason}" for s in report.skipped]
    return "\n".join(lines) + "\n"


def summary_line(rows: list[dict[str, Any]], report: BenchmarkDispatchReport) -> str:
    if not rows:
        return f"no migration finding to benchmark ({len(report.skipped)} skipped; benchmarks.md)"
    jobs, queues = _jobs(rows)
    verdicts = [row["measured"].get("verdict") for row in rows]
    confirmed = [row for row in rows if row["measured"].get("verdict") == "confirmed"]
    measured = sum((Decimal(r["measured"]["monthly_savings_usd"]) for r in confirmed), Decimal(0))
    estimated = sum((r["finding"].estimated_monthly_savings_usd for r in confirmed), Decimal(0))
    retried = sum(1 for row in rows if row["attempts"] > 1)
    return (
        f"{jobs} jobs on {queues} emulated Batch queues for {len(rows)} findings "
        f"({retried} retried after a lost host); {len(confirmed)} confirmed, measured {money(measured)}/mo vs "
        f"{money(estimated)}/mo estimated; {verdicts.count('withdrawn')} withdrawn, "
        f"{verdicts.count('needs_review')} needs review (outside its plausible range), "
        f"{verdicts.count('inconclusive')} inconclusive, {len(report.skipped)} skipped (benchmarks.md)"
    )


STAGE = Stage("Benchmark migration findings on the emulated trn/inf Batch queues", _run)
