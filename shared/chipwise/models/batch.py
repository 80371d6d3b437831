"""AWS Batch's job detail, as the "Batch Job State Change" event and DescribeJobs carry it.

Apart from :mod:`chipwise.models.benchmark` (the job's parameters and its result file, which the benchmark container
shares): the event model (:class:`chipwise.models.events.BatchJobStateChangeEvent`) needs this alone, so a function
that parses events does not build the benchmark models.
"""

from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Annotated

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, field_validator


class _Lenient(BaseModel):
    """AWS adds properties to JobDetail over time: ignore what is unknown, accept what is missing."""

    model_config = ConfigDict(defer_build=True, extra="ignore", populate_by_name=True, frozen=True)


def _string_map(value: object) -> object:
    if isinstance(value, Mapping):
        return {str(k): "" if v is None else str(v) for k, v in value.items()}
    return value


StringMap = Annotated[dict[str, str], BeforeValidator(_string_map)]


class BatchContainerDetail(_Lenient):
    exit_code: int | None = Field(None, alias="exitCode")
    reason: str | None = None
    log_stream_name: str | None = Field(None, alias="logStreamName")
    instance_type: str | None = Field(None, alias="instanceType")


class BatchAttemptDetail(_Lenient):
    container: BatchContainerDetail | None = None
    status_reason: str | None = Field(None, alias="statusReason")
    started_at: int | None = Field(None, alias="startedAt")
    stopped_at: int | None = Field(None, alias="stoppedAt")


class BatchJobDetail(_Lenient):
    """The ``detail`` of a "Batch Job State Change" event (a DescribeJobs ``JobDetail``)."""

    job_id: str = Field(alias="jobId", min_length=1)
    status: str = Field(min_length=1)
    job_arn: str | None = Field(None, alias="jobArn")
    job_name: str | None = Field(None, alias="jobName")
    job_queue: str | None = Field(None, alias="jobQueue")
    job_definition: str | None = Field(None, alias="jobDefinition")
    status_reason: str | None = Field(None, alias="statusReason")
    attempts: list[BatchAttemptDetail] = []
    created_at: int | None = Field(None, alias="createdAt")
    started_at: int | None = Field(None, alias="startedAt")
    stopped_at: int | None = Field(None, alias="stoppedAt")
    parameters: StringMap = {}
    container: BatchContainerDetail | None = None
    tags: StringMap = {}

    @field_validator("status")
    @classmethod
    def _upper(cls, value: str) -> str:
        return value.strip().upper()

    @property
    def run_id(self) -> str | None:
        """Our run id: the job's tag, else its ``run_id`` parameter; None for jobs Chipwise did not submit."""
        from chipwise.models.benchmark import RUN_ID_TAG  # the run's models: only a job's reader needs them

        return self.tags.get(RUN_ID_TAG) or self.parameters.get("run_id") or None

    @property
    def terminal(self) -> bool:
        return self.status in ("SUCCEEDED", "FAILED")

    @property
    def exit_code(self) -> int | None:
        if self.container and self.container.exit_code is not None:
            return self.container.exit_code
        last = self.attempts[-1] if self.attempts else None
        return last.container.exit_code if last and last.container else None

    def failure_reason(self) -> str:
        """Why the job failed, from the most specific field AWS filled in."""
        last = self.attempts[-1] if self.attempts else None
        parts = [self.status_reason or (last.status_reason if last else None) or "no reason given"]
        container = self.container or (last.container if last else None)
        if container and container.reason:
            parts.append(container.reason)
        if self.exit_code is not None:
            parts.append(f"exit code {self.exit_code}")
        return "; ".join(parts)

    def stopped(self) -> datetime | None:
        if not self.stopped_at:
            return None
        return datetime.fromtimestamp(self.stopped_at / 1000, tz=UTC)
