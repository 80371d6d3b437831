"""Benchmark runs in the store, and the one way a run is created: row first, then the Batch job.

A run is one attempt of one (finding, target type). The row is written (and flushed) before SubmitJob, so a
failed submission is recorded as a failed attempt with its reason, and a job whose row was lost is still
recognised later by its tags (see :func:`chipwise.benchmarks.results.record_job_state`).
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable, Sequence
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any

from botocore.exceptions import BotoCoreError, ClientError
from pydantic import BaseModel, ConfigDict

from chipwise.benchmarks.jobs import JobDefinitions, JobLabels, job_definition_name, job_name, submit_job
from chipwise.catalog import get_catalog
from chipwise.models.benchmark import ACTIVE_STATUSES, BenchmarkParameters, BenchmarkRole, result_uri
from chipwise.settings import Settings
from chipwise.store import Session, savepoint
from chipwise.store.repositories.benchmarks import BenchmarkRepository, BenchmarkRunRecord

if TYPE_CHECKING:
    from mypy_boto3_batch import BatchClient


class PlannedRun(BaseModel):
    """A run about to be submitted (what ``--dry-run`` prints)."""

    model_config = ConfigDict(defer_build=True, extra="forbid", frozen=True)

    finding_id: str
    rule_id: str
    account_id: str
    resource_name: str
    role: BenchmarkRole
    target_instance_type: str
    attempt: int
    job_queue: str
    job_definition: str
    parameters: BenchmarkParameters

    @property
    def labels(self) -> JobLabels:
        return JobLabels(rule_id=self.rule_id, account_id=self.account_id, attempt=self.attempt)


def new_run_id() -> str:
    return str(uuid.uuid4())


def plan_parameters(parameters: BenchmarkParameters, bucket: str) -> BenchmarkParameters:
    """The same benchmark under a fresh run id (and so a fresh result location)."""
    run_id = new_run_id()
    return parameters.model_copy(update={"run_id": run_id, "result_uri": result_uri(bucket, run_id)})


def retry_plan(run: BenchmarkRunRecord, rule_id: str, account_id: str, resource_name: str, bucket: str) -> PlannedRun:
    """The next attempt of a failed or expired run: same queue and benchmark, new run id."""
    parameters = plan_parameters(BenchmarkParameters.model_validate(run.parameters), bucket)
    instance = get_catalog().require(parameters.instance_type)
    return PlannedRun(
        finding_id=run.finding_id,
        rule_id=rule_id,
        account_id=account_id,
        resource_name=resource_name,
        role=parameters.role,
        target_instance_type=run.target_instance_type,
        attempt=run.attempt + 1,
        job_queue=run.job_queue,
        job_definition=job_definition_name(instance, parameters.role),
        parameters=parameters,
    )


def submit_run(
    session: Session,
    batch: BatchClient,
    definitions: JobDefinitions,
    planned: PlannedRun,
    *,
    settings: Settings,
    now: datetime,
) -> BenchmarkRunRecord:
    """Store the run, register the job definition if needed and submit the job.

    An AWS error does not raise: the run is stored as a failed attempt with the error as its reason, so the
    next dispatch retries it (up to ``benchmark_max_attempts``) and the rest of the batch goes on. Throttling,
    a server error or no connection (after boto3's retries) is not the job's failure: the run is not stored,
    no attempt is spent, and :class:`SubmissionDeferred` says so (the next dispatch submits it).
    """
    params = planned.parameters
    planned_run = BenchmarkRunRecord(
        id=params.run_id,
        finding_id=planned.finding_id,
        target_instance_type=planned.target_instance_type,
        attempt=planned.attempt,
        role=planned.role,
        job_queue=planned.job_queue,
        job_definition=None,
        job_id=None,
        job_name=job_name(params),
        status="submitted",
        parameters=params.model_dump(mode="json"),
        result_uri=params.result_uri,
        result=None,
        measured=None,
        failure_reason=None,
        submitted_at=now,
        finished_at=None,
        expires_at=now + timedelta(hours=settings.benchmark_expiry_hours),
    )
    runs = BenchmarkRepository(session)
    with savepoint(session):  # a deferred submission (raised out of it) stores nothing
        run = runs.add_run(planned_run)
        definition: str | None = None
        try:
            instance = get_catalog().require(params.instance_type)
            definition = definitions.arn_for(instance, planned.role)
            job_id = submit_job(
                batch,
                queue=planned.job_queue,
                definition_arn=definition,
                parameters=params,
                labels=planned.labels,
            )
        except (ClientError, BotoCoreError) as exc:
            if _transient(exc):
                raise SubmissionDeferred(f"submission deferred: {exc}") from exc
            run = runs.submission_failed(run.id, f"submission failed: {exc}", now, job_definition=definition)
        else:
            run = runs.submitted(run.id, job_definition=definition, job_id=job_id)
    return run


class SubmissionDeferred(Exception):
    """AWS Batch could not take the job now (throttled, a server error, no connection): try again later."""


_TRANSIENT_CODES = frozenset(
    {"Throttling", "ThrottlingException", "TooManyRequestsException", "RequestLimitExceeded", "ServerException"}
)


def _transient(exc: ClientError | BotoCoreError) -> bool:
    if isinstance(exc, BotoCoreError):
        return True  # no connection, timeouts: nothing reached Batch
    status = int(exc.response.get("ResponseMetadata", {}).get("HTTPStatusCode") or 0)
    return exc.response.get("Error", {}).get("Code") in _TRANSIENT_CODES or status >= 500


# --- queries -----------------------------------------------------------------------------------------------------


def runs_for(session: Session, finding_id: str, target_instance_type: str | None = None) -> list[BenchmarkRunRecord]:
    """A finding's runs (for one target type when given), oldest attempt first."""
    return BenchmarkRepository(session).runs_for(finding_id, target_instance_type)


def runs_by_finding(session: Session, finding_ids: Iterable[str]) -> dict[str, list[BenchmarkRunRecord]]:
    """Runs of many findings in one query, oldest attempt first."""
    ids = list(finding_ids)
    out: dict[str, list[BenchmarkRunRecord]] = {i: [] for i in ids}
    for run in BenchmarkRepository(session).runs_of_findings(ids):
        out[run.finding_id].append(run)
    return out


def latest(runs: Sequence[BenchmarkRunRecord], target_instance_type: str) -> BenchmarkRunRecord | None:
    pair = [r for r in runs if r.target_instance_type == target_instance_type]
    return max(pair, key=lambda r: r.attempt, default=None)


def stale_runs(session: Session, now: datetime) -> list[BenchmarkRunRecord]:
    """Active runs past their expiry time."""
    return BenchmarkRepository(session).stale_runs(ACTIVE_STATUSES, now)


def find_run(session: Session, run_id: str | None, job_id: str) -> BenchmarkRunRecord | None:
    """A run by its id (from the job's tags), else by its Batch job id."""
    if run_id:
        run = BenchmarkRepository(session).get_run(run_id)
        if run is not None:
            return run
    return BenchmarkRepository(session).run_of_job(job_id)


def list_runs(
    session: Session,
    *,
    account_id: str | None = None,
    status: str | None = None,
    finding_id: str | None = None,
    limit: int = 100,
) -> list[BenchmarkRunRecord]:
    """Newest first, for ``chipwise benchmarks list``."""
    return BenchmarkRepository(session).list_runs(
        account_id=account_id, status=status, finding_id=finding_id, limit=limit
    )


def is_rejected(run: BenchmarkRunRecord) -> bool:
    """A run whose job succeeded but whose result file was rejected: running it again would not help."""
    return bool(run.result and run.result.get("rejected"))


def run_summary(run: BenchmarkRunRecord) -> dict[str, Any]:
    """The row as a JSON-able dict (CLI ``--json``)."""
    return {
        "run_id": run.id,
        "finding_id": run.finding_id,
        "target_instance_type": run.target_instance_type,
        "attempt": run.attempt,
        "role": run.role,
        "status": run.status,
        "job_queue": run.job_queue,
        "job_definition": run.job_definition,
        "job_id": run.job_id,
        "parameters": run.parameters,
        "result_uri": run.result_uri,
        "result": run.result,
        "measured": run.measured,
        "failure_reason": run.failure_reason,
        "submitted_at": run.submitted_at,
        "finished_at": run.finished_at,
        "expires_at": run.expires_at,
    }


def next_attempt(pair: Sequence[BenchmarkRunRecord], max_attempts: int) -> int | str:
    """The attempt to submit for one (finding, target), or why nothing is submitted.

    One active run per pair; a new attempt only after a failure or an expiry, and at most ``max_attempts``;
    never after a measurement or a rejected result (the same job would write the same file).
    """
    last = max(pair, key=lambda r: r.attempt, default=None)
    if last is None:
        return 1
    if last.status in ACTIVE_STATUSES:
        return f"run {last.id} is already {last.status} (attempt {last.attempt})"
    if last.status == "succeeded":
        return f"already measured by run {last.id}"
    if is_rejected(last):
        return f"the result of run {last.id} was rejected: {last.failure_reason}"
    if last.attempt >= max_attempts:
        return f"gave up after {last.attempt} attempts: {last.failure_reason}"
    return last.attempt + 1
