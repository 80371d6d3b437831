"""Benchmark results: Batch state changes recorded, failures retried, measurements priced into recommendations.

Driven by EventBridge "Batch Job State Change" events (the ``benchmark_result`` Lambda, the demo) and by the
dispatcher's sweep of runs that never reached a terminal state. Every path is idempotent: a run leaves the
active states once, so a duplicate event changes nothing.

What a terminal state does:

- SUCCEEDED: the result file is read from S3 and validated. A valid result is stored and priced (see
  :mod:`~chipwise.benchmarks.repricing`); the measurement becomes a ``recommendations`` row (source
  ``benchmark``) and the finding's measured saving (confidence high), or a withdrawn recommendation with its
  reason. A missing or malformed file is rejected with its reason and the estimate stays.
- FAILED (or expired): stored with its reason and retried with a new run, up to ``benchmark_max_attempts``;
  after the last attempt the finding gets a note and keeps its estimate.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime
from decimal import Decimal
from typing import TYPE_CHECKING, Any, Literal

from botocore.exceptions import BotoCoreError, ClientError
from pydantic import BaseModel, ConfigDict, ValidationError

from chipwise.aws import aws_context
from chipwise.benchmarks.jobs import JobDefinitions
from chipwise.benchmarks.repricing import (
    MeasuredEconomics,
    Verdict,
    price_inference,
    price_training,
    unpriced,
)
from chipwise.benchmarks.runs import (
    find_run,
    next_attempt,
    retry_plan,
    runs_for,
    stale_runs,
    submit_run,
)
from chipwise.benchmarks.workload import (
    current_of,
    observe,
    plausible_range,
    pricing_policy,
    target_of,
)
from chipwise.catalog import get_catalog
from chipwise.economics import usd
from chipwise.errors import UpstreamError
from chipwise.models.batch import BatchJobDetail
from chipwise.models.benchmark import (
    ACTIVE_STATUSES,
    ATTEMPT_TAG,
    FINDING_ID_TAG,
    TARGET_TAG,
    BenchmarkParameters,
    BenchmarkResult,
    InvalidResult,
    RunStatus,
    split_s3_uri,
)
from chipwise.observability import logger
from chipwise.settings import Settings
from chipwise.store import Session
from chipwise.store.repositories.benchmarks import BenchmarkRepository, BenchmarkRunRecord, NewRecommendation
from chipwise.store.repositories.finding_rows import BENCHMARK_EVIDENCE_KEY
from chipwise.store.repositories.findings import FindingRecord, FindingRepository

if TYPE_CHECKING:
    from mypy_boto3_batch import BatchClient
    from mypy_boto3_s3 import S3Client

BENCHMARK_SOURCE = "benchmark"
DESCRIBE_JOBS_MAX = 100
_WAITING = ("SUBMITTED", "PENDING", "RUNNABLE")
_STARTED = ("STARTING", "RUNNING")


class StateOutcome(BaseModel):
    """What one state change did (the Lambda's return value, logged and shown by the demo)."""

    model_config = ConfigDict(defer_build=True, extra="forbid")

    status: Literal["recorded", "ignored", "duplicate", "rejected"]
    job_id: str | None = None
    run_id: str | None = None
    run_status: RunStatus | None = None
    verdict: Verdict | None = None
    retry_run_id: str | None = None
    reason: str | None = None


class Clients:
    """The AWS clients results need (Batch to retry, S3 to read result files)."""

    def __init__(self, batch: BatchClient, s3: S3Client) -> None:
        self.batch = batch
        self.s3 = s3

    @classmethod
    def for_settings(cls, settings: Settings) -> Clients:
        ctx = aws_context(settings.region)
        return cls(ctx.client("batch"), ctx.client("s3"))


def record_job_state(
    session: Session, detail: BatchJobDetail, *, clients: Clients, settings: Settings, now: datetime
) -> StateOutcome:
    """Apply one job state to its run (found by the job's run-id tag, else its job id)."""
    run = find_run(session, detail.run_id, detail.job_id) or adopt_run(session, detail, now)
    if run is None:
        return StateOutcome(status="ignored", job_id=detail.job_id, reason="not a Chipwise benchmark job")
    outcome = StateOutcome(status="recorded", job_id=detail.job_id, run_id=run.id)
    if run.status not in ACTIVE_STATUSES:
        return outcome.model_copy(update={"status": "duplicate", "run_status": run.status})
    runs = BenchmarkRepository(session)
    if not run.job_id:
        run = runs.know_job(run.id, detail.job_id)
    if detail.status in _STARTED:
        run = runs.start(run.id)
    if detail.status in _STARTED or detail.status in _WAITING:
        return outcome.model_copy(update={"run_status": run.status})
    if detail.status == "SUCCEEDED":
        return _succeeded(session, run, detail, clients, settings, now, outcome)
    if detail.status == "FAILED":
        run = runs.fail(run.id, detail.stopped() or now, detail.failure_reason())
        retry = after_failure(session, run, clients=clients, settings=settings, now=now)
        return outcome.model_copy(
            update={"run_status": "failed", "reason": run.failure_reason, "retry_run_id": retry.id if retry else None}
        )
    return outcome.model_copy(update={"status": "rejected", "reason": f"unknown job status {detail.status!r}"})


def adopt_run(session: Session, detail: BatchJobDetail, now: datetime) -> BenchmarkRunRecord | None:
    """A job Chipwise submitted whose run row was lost (the store write failed after SubmitJob): its tags and
    parameters hold everything needed to store it again. None for any other job."""
    if not detail.run_id or FINDING_ID_TAG not in detail.tags:
        return None
    try:
        parameters = BenchmarkParameters.from_batch(detail.parameters)
    except ValidationError:
        return None
    if FindingRepository(session).by_id(parameters.finding_id) is None:
        return None
    adopted = BenchmarkRunRecord(
        id=parameters.run_id,
        finding_id=parameters.finding_id,
        target_instance_type=detail.tags.get(TARGET_TAG, parameters.priced_as),
        attempt=int(detail.tags.get(ATTEMPT_TAG, "1") or 1),
        role=parameters.role,
        job_queue=detail.job_queue or "",
        job_definition=detail.job_definition,
        job_id=detail.job_id,
        job_name=detail.job_name,
        status="submitted",
        parameters=parameters.model_dump(mode="json"),
        result_uri=parameters.result_uri,
        result=None,
        measured=None,
        failure_reason=None,
        submitted_at=now,
        finished_at=None,
        expires_at=None,
    )
    run = BenchmarkRepository(session).add_run(adopted)
    logger().warning("adopted a benchmark job without a stored run", extra={"run_id": run.id, "job_id": run.job_id})
    return run


# --- SUCCEEDED -------------------------------------------------------------------------------------------------------


def _succeeded(
    session: Session,
    run: BenchmarkRunRecord,
    detail: BatchJobDetail,
    clients: Clients,
    settings: Settings,
    now: datetime,
    outcome: StateOutcome,
) -> StateOutcome:
    finished_at = detail.stopped() or now
    try:
        result = read_result(clients.s3, run)
    except InvalidResult as exc:
        run = reject_result(session, run, str(exc), now, finished_at=finished_at)
        return outcome.model_copy(update={"run_status": "failed", "reason": run.failure_reason})
    run = BenchmarkRepository(session).succeed(run.id, finished_at, result.model_dump(mode="json"))
    finding = FindingRepository(session).by_id(run.finding_id)
    priced = reprice(session, finding, now=now) if finding is not None else None
    return outcome.model_copy(update={"run_status": "succeeded", "verdict": priced.verdict if priced else None})


def read_result(s3: S3Client, run: BenchmarkRunRecord) -> BenchmarkResult:
    """The run's result file, validated against the schema and against the run that asked for it."""
    if not run.result_uri:
        raise InvalidResult("the run has no result location")
    bucket, key = split_s3_uri(run.result_uri)
    try:
        body = s3.get_object(Bucket=bucket, Key=key)["Body"].read()
    except ClientError as exc:
        code = exc.response.get("Error", {}).get("Code", "")
        if code in ("NoSuchKey", "NoSuchBucket", "404"):
            raise InvalidResult(f"no result file at {run.result_uri}") from exc
        raise UpstreamError(f"cannot read {run.result_uri}: {exc}") from exc
    except BotoCoreError as exc:
        raise UpstreamError(f"cannot read {run.result_uri}: {exc}") from exc
    result = BenchmarkResult.from_text(body)
    result.check_matches(BenchmarkParameters.model_validate(run.parameters))
    return result


def reject_result(
    session: Session, run: BenchmarkRunRecord, reason: str, now: datetime, *, finished_at: datetime | None = None
) -> BenchmarkRunRecord:
    """A missing or malformed result: the run fails for good (the same job would write the same file) and the
    finding keeps its estimate, with a note saying why. The run as it is now."""
    run = BenchmarkRepository(session).reject(run.id, reason, finished_at)
    logger().warning("benchmark result rejected", extra={"run_id": run.id, "reason": reason})
    finding = FindingRepository(session).by_id(run.finding_id)
    if finding is not None:
        content = {"status": "rejected", "run_id": run.id, "reason": run.failure_reason, "at": now.isoformat()}
        note(session, finding, content)
    return run


# --- FAILED and expired ----------------------------------------------------------------------------------------------


def after_failure(
    session: Session, run: BenchmarkRunRecord, *, clients: Clients, settings: Settings, now: datetime
) -> BenchmarkRunRecord | None:
    """Retry a failed or expired run while attempts remain; after the last one, note it on the finding."""
    finding = FindingRepository(session).by_id(run.finding_id)
    if finding is None:
        return None
    decision = next_attempt(
        runs_for(session, run.finding_id, run.target_instance_type), settings.benchmark_max_attempts
    )
    if isinstance(decision, int):
        plan = retry_plan(run, finding.rule_id, finding.account_id, finding.resource_name, settings.artifacts_bucket)
        return submit_run(
            session, clients.batch, JobDefinitions(clients.batch, settings), plan, settings=settings, now=now
        )
    note(
        session,
        finding,
        {"status": run.status, "run_id": run.id, "attempts": run.attempt, "reason": run.failure_reason},
    )
    if run.role == "gpu_baseline":
        reprice(session, finding, now=now)  # the target may have been waiting for this baseline
    return None


class SweepReport(BaseModel):
    """Runs the dispatcher found past their expiry: caught-up terminal states and expired runs."""

    model_config = ConfigDict(defer_build=True, extra="forbid")

    caught_up: list[str] = []
    expired: list[str] = []
    retried: list[str] = []


def sweep_runs(session: Session, *, clients: Clients, settings: Settings, now: datetime) -> SweepReport:
    """A run never stays active forever: past ``expires_at`` its job is looked up; a terminal job whose event
    was missed is recorded now, anything else is expired (its job terminated) and retried like a failure."""
    report = SweepReport()
    stale = stale_runs(session, now)
    details = describe_jobs(clients.batch, [r.job_id for r in stale if r.job_id])
    for run in stale:
        detail = details.get(run.job_id or "")
        if detail is not None and detail.terminal:
            record_job_state(session, detail, clients=clients, settings=settings, now=now)
            report.caught_up.append(run.id)
            continue
        seen = detail.status if detail else "unknown to Batch"
        reason = f"no terminal state within {settings.benchmark_expiry_hours} h (job {seen})"
        run = BenchmarkRepository(session).expire(run.id, now, reason)
        if detail is not None:
            _terminate(clients.batch, detail.job_id)
        report.expired.append(run.id)
        retry = after_failure(session, run, clients=clients, settings=settings, now=now)
        if retry is not None:
            report.retried.append(retry.id)
    return report


def describe_jobs(batch: BatchClient, job_ids: Sequence[str]) -> dict[str, BatchJobDetail]:
    """DescribeJobs in chunks of 100, parsed leniently; jobs Batch no longer knows are absent."""
    out: dict[str, BatchJobDetail] = {}
    for start in range(0, len(job_ids), DESCRIBE_JOBS_MAX):
        for job in batch.describe_jobs(jobs=list(job_ids[start : start + DESCRIBE_JOBS_MAX]))["jobs"]:
            detail = BatchJobDetail.model_validate(job)
            out[detail.job_id] = detail
    return out


def _terminate(batch: BatchClient, job_id: str) -> None:
    """Stop paying for a benchmark job Chipwise gave up on (our own job, never a customer's)."""
    try:
        batch.terminate_job(jobId=job_id, reason="chipwise: benchmark run expired")
    except (ClientError, BotoCoreError) as exc:
        logger().warning("could not terminate an expired benchmark job", extra={"job_id": job_id, "error": str(exc)})


# --- pricing into the recommendation ----------------------------------------------------------------------------------


def reprice(session: Session, finding: FindingRecord, *, now: datetime) -> MeasuredEconomics | None:
    """Price the finding's latest successful target run (with its paired GPU baseline when there is one) and
    fold it into the recommendation. None while there is nothing to price or the baseline is still running."""
    runs = runs_for(session, finding.id)
    target = _latest(runs, "target", "succeeded")
    if target is None or not target.result:
        return None
    baseline_run = _latest(runs, "gpu_baseline")
    if baseline_run is not None and baseline_run.status in ACTIVE_STATUSES:
        return None
    baseline = (
        BenchmarkResult.model_validate(baseline_run.result)
        if baseline_run is not None and baseline_run.status == "succeeded" and baseline_run.result
        else None
    )
    priced = price_run(session, finding, target, baseline)
    benchmarks = BenchmarkRepository(session)
    benchmarks.record_measured(target.id, priced.model_dump(mode="json"))
    if priced.verdict != "inconclusive":
        benchmarks.add_recommendation(_recommendation(finding, target, priced, now))
    mark_finding(session, finding, target.id, priced, now)
    return priced


def price_run(
    session: Session, finding: FindingRecord, run: BenchmarkRunRecord, baseline: BenchmarkResult | None
) -> MeasuredEconomics:
    """The economics of one run's result for its finding (inference or training, by the finding's rule)."""
    priced = _price_run(session, finding, run, baseline)
    return priced.beside(finding.estimated_monthly_savings_usd, _recommended_count(finding))


def _price_run(
    session: Session, finding: FindingRecord, run: BenchmarkRunRecord, baseline: BenchmarkResult | None
) -> MeasuredEconomics:
    catalog = get_catalog()
    result = BenchmarkResult.model_validate(run.result)
    priced_as = BenchmarkParameters.model_validate(run.parameters).priced_as
    workload = observe(session, finding)
    current = current_of(finding, catalog, workload.kind)
    target = target_of(priced_as, finding.region, catalog)
    if target is None:
        return unpriced(workload.kind, priced_as, current)
    plausible = plausible_range(finding, priced_as, catalog, workload.kind)
    if workload.kind == "training":
        return price_training(
            result,
            current=current,
            target=target,
            baseline=baseline,
            observed_tokens_per_second=workload.observed_tokens_per_second,
            plausible=plausible,
            recommended_count=_recommended_count(finding),
        )
    policy = pricing_policy()
    return price_inference(
        result,
        demand=workload.demand,
        current=current,
        target=target,
        policy=policy,
        baseline=baseline,
        plausible=plausible,
    )


def _recommended_count(finding: FindingRecord) -> int | None:
    count = (finding.recommendation or {}).get("target_count")
    return count if isinstance(count, int) and count > 0 else None


def _latest(runs: Sequence[BenchmarkRunRecord], role: str, status: str | None = None) -> BenchmarkRunRecord | None:
    chosen = [r for r in runs if r.role == role and (status is None or r.status == status)]
    return max(chosen, key=lambda r: (r.submitted_at, r.attempt), default=None)


def _recommendation(
    finding: FindingRecord, run: BenchmarkRunRecord, priced: MeasuredEconomics, now: datetime
) -> NewRecommendation:
    estimate: Mapping[str, Any] = finding.recommendation or {}
    return NewRecommendation(
        finding_id=finding.id,
        source=BENCHMARK_SOURCE,
        action=str(estimate.get("action") or "migrate"),
        target_platform=estimate.get("target_platform"),
        target_instance_type=priced.priced_as,
        target_count=priced.target_count,
        monthly_cost_usd=priced.target_monthly_cost_usd,
        monthly_savings_usd=None if priced.verdict == "needs_review" else priced.monthly_savings_usd,
        confidence="low" if priced.verdict == "needs_review" else "high",
        withdrawn=priced.verdict == "withdrawn",
        reason=priced.reason,
        benchmark_run_id=run.id,
        created_at=now,
    )


def mark_finding(
    session: Session, finding: FindingRecord, run_id: str, priced: MeasuredEconomics, now: datetime
) -> None:
    """The finding's measured saving and confidence, and a note in its evidence. An inconclusive measurement
    changes neither: the estimate stands."""
    benchmarks = BenchmarkRepository(session)
    if priced.verdict == "confirmed" and priced.monthly_savings_usd is not None:
        benchmarks.confirm_finding(finding.id, priced.monthly_savings_usd, measured_summary(finding, priced))
    elif priced.verdict == "needs_review":
        # Out of the measured totals (and of the headline: the finding is blocked until someone checks the run).
        benchmarks.hold_finding_for_review(finding.id, f"{finding.resource_name}: the benchmark {priced.reason}.")
    elif priced.verdict == "withdrawn":
        reason = priced.reason or "the benchmark found no saving"
        benchmarks.withdraw_finding(finding.id, f"Withdrawn by measurement: {reason}.")
    note(session, finding, {**measurement_note(run_id, priced, now), "estimate_summary": finding.summary})


def measured_summary(finding: FindingRecord, priced: MeasuredEconomics) -> str:
    """The finding's sentence once a benchmark confirmed it: the measured figures, the estimate beside them."""
    target = f"{priced.target_count} × {priced.priced_as}" if priced.target_count else priced.priced_as
    cost = f" for {usd(priced.target_monthly_cost_usd)}/month" if priced.target_monthly_cost_usd is not None else ""
    saving = usd(priced.monthly_savings_usd or Decimal(0))
    error = priced.prediction_error
    off = f", {error * 100:+.1f} % off the measurement" if error is not None else ""
    return (
        f"{finding.resource_name}: measured on {target}{cost}, saving {saving}/month "
        f"(the estimate was {usd(finding.estimated_monthly_savings_usd)}/month{off})."
    )


def measurement_note(run_id: str, priced: MeasuredEconomics, now: datetime) -> dict[str, Any]:
    status = {
        "confirmed": "measured",
        "withdrawn": "withdrawn",
        "inconclusive": "inconclusive",
        "needs_review": "needs_review",
    }[priced.verdict]
    fields = priced.model_dump(
        mode="json",
        include={
            "reason",
            "unit",
            "priced_as",
            "target_count",
            "monthly_savings_usd",
            "target_monthly_cost_usd",
            "cost_per_million_usd",
            "current_cost_per_million_usd",
            "dollars_per_run_usd",
            "current_basis",
            "measured_saving_fraction",
            "plausible_low",
            "plausible_high",
            "rate_basis",
            "review_reason",
            "estimated_monthly_savings_usd",
            "estimated_target_count",
            "prediction_error",
        },
        exclude_none=True,
    )
    return {"status": status, "run_id": run_id, **fields, "at": now.isoformat()}


def note(session: Session, finding: FindingRecord, content: Mapping[str, Any]) -> None:
    """Set the finding's ``evidence["benchmark"]``."""
    BenchmarkRepository(session).note_on_finding(finding.id, content)


def reapply_measurements(session: Session, finding_ids: Sequence[str] | None = None) -> int:
    """Put the latest measurement back on findings a scan re-upserted (it rewrites evidence and confidence).

    Only while the finding still recommends the measured target; returns how many findings changed.
    """
    benchmarks = BenchmarkRepository(session)
    latest = {rec.finding_id: rec for rec in benchmarks.recommendations_from(BENCHMARK_SOURCE, finding_ids=finding_ids)}
    changed = 0
    for finding_id, rec in latest.items():
        finding = FindingRepository(session).by_id(finding_id)
        run = benchmarks.get_run(rec.benchmark_run_id) if rec.benchmark_run_id else None
        if finding is None or run is None or not run.measured:
            continue
        if (finding.evidence or {}).get(BENCHMARK_EVIDENCE_KEY, {}).get("run_id") == run.id:
            continue
        if _target_name(finding) not in (rec.target_instance_type, None):
            continue  # the rules now recommend something else: a new benchmark will price that
        mark_finding(session, finding, run.id, MeasuredEconomics.model_validate(run.measured), rec.created_at)
        changed += 1
    return changed


def _target_name(finding: FindingRecord) -> str | None:
    value = (finding.recommendation or {}).get("target_instance_type")
    return str(value) if value else None
