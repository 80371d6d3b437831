"""Dispatch: which findings get a benchmark, on which queue, with which parameters; then submit.

Open findings of the migration and right-sizing rules whose estimated saving reaches
``benchmark_min_savings_usd`` get one job on their target chip (``batch_queues.inf1|inf2|trn1|trn2`` by family),
plus a paired job on today's GPU when ``batch_queues.gpu_baseline`` is set. There is one active run per
(finding, target): a new attempt only after a failure or an expiry. ``dry_run`` plans without touching AWS or
the store. The ``benchmark_dispatch`` Lambda and ``chipwise benchmarks submit`` both call
:func:`dispatch_benchmarks`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from decimal import Decimal
from typing import TYPE_CHECKING

from pydantic import BaseModel, ConfigDict

from chipwise.benchmarks.jobs import JobDefinitions, job_definition_name
from chipwise.benchmarks.results import Clients, SweepReport, reapply_measurements, sweep_runs
from chipwise.benchmarks.runs import (
    PlannedRun,
    SubmissionDeferred,
    new_run_id,
    next_attempt,
    runs_by_finding,
    submit_run,
)
from chipwise.benchmarks.workload import (
    BENCHMARK_RULES,
    GPU_RULES,
    BenchmarkWorkload,
    describe_workload,
    load_telemetry,
    pricing_policy,
)
from chipwise.catalog import Catalog, InstanceType, get_catalog
from chipwise.clock import utcnow
from chipwise.models.benchmark import (
    BenchmarkParameters,
    BenchmarkRole,
    BenchmarkTask,
    RunnerName,
    result_uri,
)
from chipwise.settings import Settings
from chipwise.store import Session
from chipwise.store.repositories.benchmarks import BenchmarkRepository, BenchmarkRunRecord
from chipwise.store.repositories.findings import FindingRecord
from chipwise.store.repositories.inventory import ResourceRecord, ResourceRepository

if TYPE_CHECKING:
    from mypy_boto3_batch import BatchClient

# The target family -> the BatchQueues field holding its job queue.
_MS = Decimal("0.1")
_RPS = Decimal("0.001")
QUEUE_FAMILIES: dict[str, str] = {
    "inf1": "inf1",
    "inf2": "inf2",
    "trn1": "trn1",
    "trn1n": "trn1",
    "trn2": "trn2",
    "trn2u": "trn2",
}


@dataclass(frozen=True)
class Shapes:
    """The static shapes a task is measured at. Neuron compiles one graph per shape, so the sweep is small:
    the batch sizes and sequence lengths a serving or training configuration would actually pick from."""

    batch_sizes: tuple[int, ...]
    sequence_lengths: tuple[int, ...]
    output_tokens: int
    iterations: int


_ENCODER = Shapes(batch_sizes=(1, 8, 32), sequence_lengths=(128, 512), output_tokens=0, iterations=200)
SHAPES: dict[BenchmarkTask, Shapes] = {
    "text-generation": Shapes(
        batch_sizes=(1, 4, 8, 16), sequence_lengths=(512, 2048), output_tokens=128, iterations=20
    ),
    "text-classification": _ENCODER,
    "token-classification": _ENCODER,
    "feature-extraction": _ENCODER,
    "training": Shapes(batch_sizes=(8, 16), sequence_lengths=(2048,), output_tokens=0, iterations=30),
}


class SkippedFinding(BaseModel):
    """A finding (or its GPU baseline) that gets no job this time, and why."""

    model_config = ConfigDict(defer_build=True, extra="forbid", frozen=True)

    finding_id: str
    rule_id: str
    resource_name: str
    role: BenchmarkRole = "target"
    reason: str


class SubmittedRun(BaseModel):
    model_config = ConfigDict(defer_build=True, extra="forbid", frozen=True)

    run_id: str
    finding_id: str
    role: BenchmarkRole
    target_instance_type: str
    attempt: int
    job_queue: str
    job_id: str | None
    status: str
    failure_reason: str | None = None

    @classmethod
    def of(cls, run: BenchmarkRunRecord) -> SubmittedRun:
        return cls(
            run_id=run.id,
            finding_id=run.finding_id,
            role=run.role,  # type: ignore[arg-type]  # the column only holds BenchmarkRole values
            target_instance_type=run.target_instance_type,
            attempt=run.attempt,
            job_queue=run.job_queue,
            job_id=run.job_id,
            status=run.status,
            failure_reason=run.failure_reason,
        )


class DeferredRun(BaseModel):
    """A submission AWS Batch could not take now (no attempt spent)."""

    model_config = ConfigDict(defer_build=True, extra="forbid")

    finding_id: str
    reason: str


class BenchmarkDispatchReport(BaseModel):
    """What one dispatch planned, submitted and skipped (``--dry-run`` fills ``planned`` only)."""

    model_config = ConfigDict(defer_build=True, extra="forbid")

    dry_run: bool
    planned: list[PlannedRun] = []
    submitted: list[SubmittedRun] = []
    skipped: list[SkippedFinding] = []
    deferred: list[DeferredRun] = []  # AWS Batch was throttling or down: no attempt spent, the next dispatch retries
    sweep: SweepReport | None = None
    reapplied: int = 0

    @property
    def failed(self) -> list[SubmittedRun]:
        return [s for s in self.submitted if s.status == "failed"]


def dispatch_benchmarks(
    session: Session,
    batch: BatchClient | None,
    *,
    settings: Settings,
    clients: Clients | None = None,
    account_id: str | None = None,
    finding_ids: Sequence[str] | None = None,
    dry_run: bool = False,
    now: datetime | None = None,
) -> BenchmarkDispatchReport:
    """Sweep stale runs, then plan and (unless ``dry_run``) submit benchmark jobs for eligible findings.

    ``batch`` may be None for a dry run (nothing touches AWS). ``clients`` adds S3 for the sweep, which records
    terminal jobs whose state event was missed; without it the sweep is skipped.
    """
    now = now or utcnow()
    report = BenchmarkDispatchReport(dry_run=dry_run)
    if not dry_run:
        report.reapplied = reapply_measurements(session, finding_ids)
        if clients is not None:
            report.sweep = sweep_runs(session, clients=clients, settings=settings, now=now)
    findings = eligible_findings(session, settings, account_id=account_id, finding_ids=finding_ids)
    resources = resources_by_key(session, [f.resource_key for f in findings])
    runs = runs_by_finding(session, [f.id for f in findings])
    catalog = get_catalog()
    for finding in findings:
        resource = resources.get(finding.resource_key)
        workload = describe_workload(finding, resource, load_telemetry(session, resource))
        to_submit, skipped = plan_finding(finding, workload, runs[finding.id], settings=settings, catalog=catalog)
        report.planned += to_submit
        report.skipped += skipped
    if dry_run or not report.planned:
        return report
    if batch is None:
        raise ValueError("a Batch client is needed to submit (or pass dry_run=True)")
    definitions = JobDefinitions(batch, settings)
    for planned in report.planned:
        try:
            run = submit_run(session, batch, definitions, planned, settings=settings, now=now)
        except SubmissionDeferred as deferred:
            report.deferred.append(DeferredRun(finding_id=planned.finding_id, reason=str(deferred)[:500]))
            continue
        report.submitted.append(SubmittedRun.of(run))
    return report


def eligible_findings(
    session: Session, settings: Settings, *, account_id: str | None = None, finding_ids: Sequence[str] | None = None
) -> list[FindingRecord]:
    """Open findings of the benchmark rules saving at least ``benchmark_min_savings_usd``, largest first."""
    return BenchmarkRepository(session).eligible_findings(
        BENCHMARK_RULES,
        settings.benchmark_min_savings_usd,
        account_id=account_id,
        finding_ids=finding_ids,
    )


def resources_by_key(session: Session, keys: Sequence[str]) -> dict[str, ResourceRecord]:
    return ResourceRepository(session).by_keys(keys)


# --- planning (pure given its inputs) -----------------------------------------------------------------------------


def plan_finding(
    finding: FindingRecord,
    workload: BenchmarkWorkload,
    runs: Sequence[BenchmarkRunRecord],
    *,
    settings: Settings,
    catalog: Catalog,
) -> tuple[list[PlannedRun], list[SkippedFinding]]:
    """The target run (and the GPU baseline run) to submit for one finding, or why not."""

    def skip(reason: str, role: BenchmarkRole = "target") -> SkippedFinding:
        return SkippedFinding(
            finding_id=finding.id,
            rule_id=finding.rule_id,
            resource_name=finding.resource_name,
            role=role,
            reason=reason,
        )

    target = _target(finding, settings, catalog)
    if isinstance(target, str):
        return [], [skip(target)]
    instance, queue = target
    if not workload.model_id and workload.model_id_note:
        # The configuration names its model only as a path or URI: a family stand-in would measure another model.
        return [], [skip(f"no usable model id to benchmark: {workload.model_id_note} (set HF_MODEL_ID to the hub id)")]
    model_id = workload.model_id or workload.model_family
    if not model_id:
        return [], [skip("no model id or family to benchmark (set the chipwise:model-family tag or HF_MODEL_ID)")]
    planned: list[PlannedRun] = []
    skipped: list[SkippedFinding] = []

    def plan(role: BenchmarkRole, host: InstanceType, priced_as: str, queue: str) -> None:
        pair = [r for r in runs if r.target_instance_type == priced_as]
        attempt = next_attempt(pair, settings.benchmark_max_attempts)
        if isinstance(attempt, str):
            skipped.append(skip(attempt, role))
            return
        params = _parameters(finding, workload, model_id, host, priced_as, role, settings)
        planned.append(_planned(finding, params, queue, attempt, host))

    plan("target", instance, str(finding.recommendation["target_instance_type"]), queue)
    baseline = _baseline(finding, settings, catalog)
    if baseline is not None:
        gpu, gpu_queue = baseline
        plan("gpu_baseline", gpu, str(finding.instance_type), gpu_queue)  # priced as what runs today (ml. kept)
    return planned, skipped


def _target(finding: FindingRecord, settings: Settings, catalog: Catalog) -> tuple[InstanceType, str] | str:
    """The EC2 type to run on and its queue, or why the finding cannot be benchmarked."""
    priced_as = (finding.recommendation or {}).get("target_instance_type")
    if not priced_as:
        return "the recommendation names no target instance type"
    target = catalog.get(str(priced_as))
    if target is None:
        return f"unknown target instance type {priced_as!r}"
    if not target.neuron:
        return f"the target {priced_as} is not a Neuron type"
    queue_field = QUEUE_FAMILIES.get(target.family)
    queue = getattr(settings.batch_queues, queue_field) if queue_field else None
    if not queue:
        # Never another family's queue: a measurement on inf2 would not price an inf1 recommendation.
        return f"no benchmark queue for the {target.family} family (set batch_queues.{queue_field or target.family})"
    if catalog.price(str(priced_as), finding.region) is None:
        return f"no on-demand price for {priced_as} in {finding.region}: a measurement could not be priced"
    return catalog.require(target.ec2_name), queue


def _baseline(finding: FindingRecord, settings: Settings, catalog: Catalog) -> tuple[InstanceType, str] | None:
    """Today's GPU type and the baseline queue, for GPU findings when a baseline queue is configured."""
    queue = settings.batch_queues.gpu_baseline
    if not queue or finding.rule_id not in GPU_RULES or not finding.instance_type:
        return None
    gpu = catalog.get(finding.instance_type)
    if gpu is None or gpu.platform != "nvidia":
        return None
    return catalog.require(gpu.ec2_name), queue


# Requests kept in flight by a serving run's SLO sweep (the result sizes the target at the latency target).
SERVING_CONCURRENCY = (1, 4, 8, 16, 32)


def _runner(workload: BenchmarkWorkload, role: BenchmarkRole) -> RunnerName:
    if role == "gpu_baseline":
        return "cuda"
    if workload.task == "training":
        return "torchneuron"  # native PyTorch on Neuron: PyTorch/XLA training is unsupported from Neuron 2.30
    if workload.task == "text-generation" and workload.serving_stack == "vllm":
        return "vllm-neuron"
    return "optimum-neuron"


def _parameters(
    finding: FindingRecord,
    workload: BenchmarkWorkload,
    model_id: str,
    instance: InstanceType,
    priced_as: str,
    role: BenchmarkRole,
    settings: Settings,
) -> BenchmarkParameters:
    shapes = SHAPES[workload.task]
    demand = workload.demand
    latency = workload.latency_target_ms
    if latency is None and demand and demand.latency_p95_ms:
        latency = demand.latency_p95_ms * pricing_policy().latency_tolerance
    serving = workload.task != "training" and role == "target"
    peak = demand.peak_per_second if serving and demand and demand.unit == "requests" else None
    run_id = new_run_id()
    return BenchmarkParameters(
        run_id=run_id,
        finding_id=finding.id,
        role=role,
        task=workload.task,
        model_id=model_id,
        model_family=workload.model_family,
        instance_type=instance.ec2_name,
        priced_as=priced_as,
        runner=_runner(workload, role),
        batch_sizes=shapes.batch_sizes,
        sequence_lengths=shapes.sequence_lengths,
        output_tokens=shapes.output_tokens,
        neuron_cores=instance.logical_neuron_cores,
        latency_target_ms=latency.quantize(_MS) if latency is not None else None,
        iterations=shapes.iterations,
        result_uri=result_uri(settings.artifacts_bucket, run_id),
        concurrency_levels=SERVING_CONCURRENCY if serving else (),
        peak_requests_per_second=max(peak, _RPS).quantize(_RPS) if peak is not None and peak > 0 else None,
    )


def _planned(
    finding: FindingRecord, params: BenchmarkParameters, queue: str, attempt: int, instance: InstanceType
) -> PlannedRun:
    return PlannedRun(
        finding_id=finding.id,
        rule_id=finding.rule_id,
        account_id=finding.account_id,
        resource_name=finding.resource_name,
        role=params.role,
        target_instance_type=params.priced_as,
        attempt=attempt,
        job_queue=queue,
        job_definition=job_definition_name(instance, params.role),
        parameters=params,
    )
