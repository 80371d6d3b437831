"""Benchmark boundaries: the job's parameters and the result file it writes (the Batch state-change event's job
detail is :mod:`chipwise.models.batch`).

This module imports only pydantic and :mod:`chipwise.models.common`, because the benchmark container
(``iac/benchmark/entrypoint.py``) imports it too: the job and Chipwise share one schema, validated on both
ends. It stays Python 3.10 compatible (the Neuron deep learning containers' Python). Nothing here does I/O.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from decimal import Decimal
from typing import Annotated, Any, Literal

from pydantic import (
    AwareDatetime,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    ValidationError,
    field_validator,
    model_validator,
)

from chipwise.economics import instances_needed

RESULT_SCHEMA_VERSION: Literal[1] = 1
RESULT_MAX_BYTES = 1_000_000  # a result is a few KiB; anything this big is not one
RESULT_FILE_NAME = "result.json"

# Tags linking a Batch job to its run and finding (SubmitJob tags; propagated to the ECS task).
RUN_ID_TAG = "chipwise:run-id"
FINDING_ID_TAG = "chipwise:finding-id"
RULE_ID_TAG = "chipwise:rule-id"
ACCOUNT_ID_TAG = "chipwise:account-id"
ROLE_TAG = "chipwise:role"
ATTEMPT_TAG = "chipwise:attempt"
TARGET_TAG = "chipwise:target"

BATCH_SOURCE = "aws.batch"
BATCH_DETAIL_TYPE = "Batch Job State Change"

BenchmarkRole = Literal["target", "gpu_baseline"]
RunStatus = Literal["submitted", "running", "succeeded", "failed", "expired"]
ACTIVE_STATUSES: tuple[RunStatus, ...] = ("submitted", "running")
BenchmarkTask = Literal[
    "text-generation", "text-classification", "token-classification", "feature-extraction", "training"
]
# "torchneuron": native PyTorch on Neuron (the go-forward training stack); "torch-neuronx": the PyTorch/XLA runner
# earlier runs used (kept so their stored parameters still read).
RunnerName = Literal["optimum-neuron", "vllm-neuron", "torchneuron", "torch-neuronx", "cuda"]

_S3_RESULT_URI = r"^s3://[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]/.+\.json$"
_LIST_SEPARATOR = ","


class InvalidResult(ValueError):
    """A result file that is not a valid benchmark result; the message says why in one line."""


# --- the job's parameters --------------------------------------------------------------------------------------


def _split_ints(value: object) -> object:
    """Batch parameters are strings: "1,4,8" -> [1, 4, 8]."""
    if isinstance(value, str):
        return [int(item) for item in value.split(_LIST_SEPARATOR) if item.strip()]
    return value


def _blank_to_none(value: object) -> object:
    """Batch cannot pass "no value": the job definition's default is an empty string."""
    return None if isinstance(value, str) and not value.strip() else value


IntList = Annotated[tuple[Annotated[int, Field(ge=1, le=1_000_000)], ...], BeforeValidator(_split_ints)]
# Concurrency levels of the SLO sweep ("" from Batch: none, the sweep is not run).
LevelList = Annotated[tuple[Annotated[int, Field(ge=1, le=4096)], ...], BeforeValidator(_split_ints)]
OptionalDecimal = Annotated[Decimal | None, BeforeValidator(_blank_to_none)]
OptionalStr = Annotated[str | None, BeforeValidator(_blank_to_none)]


class BenchmarkParameters(BaseModel):
    """What one benchmark job runs: passed as Batch ``parameters`` and as the container's arguments.

    ``instance_type`` is the EC2 type the job runs on; ``priced_as`` the type the recommendation is priced
    at (``ml.inf2.xlarge`` for a SageMaker endpoint runs on an ``inf2.xlarge`` host).
    """

    model_config = ConfigDict(defer_build=True, extra="forbid", frozen=True)

    run_id: str = Field(min_length=8, max_length=36, pattern=r"^[A-Za-z0-9-]+$")
    finding_id: str = Field(min_length=1, max_length=36)
    role: BenchmarkRole
    task: BenchmarkTask
    model_id: str = Field(min_length=1, max_length=256, description="Hugging Face model id, else the family.")
    model_family: OptionalStr = None
    instance_type: str = Field(pattern=r"^[a-z0-9-]+\.[a-z0-9-]+$")
    priced_as: str = Field(pattern=r"^(ml\.)?[a-z0-9-]+\.[a-z0-9-]+$")
    runner: RunnerName
    batch_sizes: IntList = Field(min_length=1, max_length=8)
    sequence_lengths: IntList = Field(min_length=1, max_length=4)
    output_tokens: int = Field(ge=0, le=8192, description="New tokens per request (0: encoders and training).")
    neuron_cores: int = Field(ge=0, le=256, description="Tensor-parallel degree on Neuron; 0 on GPU.")
    latency_target_ms: OptionalDecimal = Field(None, gt=0)
    iterations: int = Field(ge=1, le=10_000)
    result_uri: str = Field(pattern=_S3_RESULT_URI)
    concurrency_levels: LevelList = Field(
        (), max_length=8, description="Requests in flight to sweep (serving); empty: no concurrency sweep."
    )
    peak_requests_per_second: OptionalDecimal = Field(
        None, gt=0, description="The resource's observed peak load, which the SLO sizing must carry."
    )

    @field_validator("batch_sizes", "sequence_lengths", "concurrency_levels")
    @classmethod
    def _sorted_unique(cls, value: tuple[int, ...]) -> tuple[int, ...]:
        return tuple(sorted(set(value)))

    def to_batch(self) -> dict[str, str]:
        """Batch ``parameters`` (a string map, substituted into the command's ``Ref::name`` placeholders)."""
        out: dict[str, str] = {}
        for name, value in self.model_dump(mode="json").items():
            if isinstance(value, list):
                out[name] = _LIST_SEPARATOR.join(str(v) for v in value)
            else:
                out[name] = "" if value is None else str(value)
        return out

    @classmethod
    def from_batch(cls, parameters: Mapping[str, Any]) -> BenchmarkParameters:
        """Back from Batch's string map (the container's arguments, or a state event's ``parameters``)."""
        return cls.model_validate({k: v for k, v in parameters.items() if k in cls.model_fields})

    @classmethod
    def command_arguments(cls) -> list[str]:
        """``--run-id Ref::run_id ...``: the job definition's command, one flag per parameter."""
        args: list[str] = []
        for name in cls.model_fields:
            args += [flag_of(name), f"Ref::{name}"]
        return args


def flag_of(name: str) -> str:
    """The container's command-line flag for a parameter: ``batch_sizes`` -> ``--batch-sizes``."""
    return "--" + name.replace("_", "-")


# --- the result file ---------------------------------------------------------------------------------------------


class Measurement(BaseModel):
    """One static shape, measured over ``iterations`` timed requests after warm-up.

    Inference: one request is one batch of ``batch_size`` sequences of ``sequence_length`` input tokens,
    generating ``output_tokens`` each; latency is the request's end-to-end time. Training: one request is
    one optimizer step of ``batch_size`` samples; latency is the step time. Throughputs are for the whole
    instance (every NeuronCore or GPU the job was given).
    """

    model_config = ConfigDict(defer_build=True, extra="forbid", frozen=True)

    batch_size: int = Field(ge=1)
    sequence_length: int = Field(ge=1)
    output_tokens: int = Field(ge=0)
    requests_per_second: Decimal = Field(gt=0, description="Sequences (inference) or samples (training) per second.")
    tokens_per_second: Decimal | None = Field(
        None, gt=0, description="Generated tokens (text generation) or processed tokens (encoders, training)."
    )
    latency_p50_ms: Decimal = Field(gt=0)
    latency_p95_ms: Decimal = Field(gt=0)
    iterations: int = Field(ge=1)
    # The concurrency sweep (serving): requests kept in flight, and what each request saw at that load.
    concurrency: int | None = Field(None, ge=1)
    latency_p99_ms: Decimal | None = Field(None, gt=0)
    ttft_p50_ms: Decimal | None = Field(None, ge=0, description="Time to first token.")
    ttft_p99_ms: Decimal | None = Field(None, ge=0)
    tpot_p50_ms: Decimal | None = Field(None, ge=0, description="Time per output token after the first.")
    tpot_p99_ms: Decimal | None = Field(None, ge=0)
    error_rate: Decimal | None = Field(None, ge=0, le=1, description="Share of requests that failed.")

    @model_validator(mode="after")
    def _ordered(self) -> Measurement:
        if self.latency_p95_ms < self.latency_p50_ms:
            raise ValueError("latency_p95_ms is below latency_p50_ms")
        if self.latency_p99_ms is not None and self.latency_p99_ms < self.latency_p95_ms:
            raise ValueError("latency_p99_ms is below latency_p95_ms")
        return self


class SloSizing(BaseModel):
    """The fewest target instances that carry the resource's observed peak at its latency target: the highest
    throughput per instance among the concurrency levels whose end-to-end p95 meets the target (and whose error
    rate stays under ``max_error_rate``), and ceil(peak ÷ that throughput) instances."""

    model_config = ConfigDict(defer_build=True, extra="forbid", frozen=True)

    latency_target_ms: Decimal = Field(gt=0)
    latency_metric: Literal["e2e_p95"] = "e2e_p95"
    peak_requests_per_second: Decimal = Field(gt=0)
    max_error_rate: Decimal = Field(ge=0, le=1)
    met: bool
    concurrency: int | None = None
    capacity_requests_per_second: Decimal | None = Field(None, gt=0)
    instances: int | None = Field(None, ge=1)
    reason: str = Field(max_length=2000)


class SkippedShape(BaseModel):
    """A shape the job could not run (did not compile, did not fit device memory)."""

    model_config = ConfigDict(defer_build=True, extra="forbid", frozen=True)

    batch_size: int = Field(ge=1)
    sequence_length: int = Field(ge=1)
    reason: str = Field(max_length=2000)


class BenchmarkResult(BaseModel):
    """``s3://<bucket>/benchmarks/<run_id>/result.json``: written by the job, validated when read."""

    model_config = ConfigDict(defer_build=True, extra="forbid", frozen=True)

    schema_version: Literal[1]
    run_id: str
    finding_id: str
    role: BenchmarkRole
    task: BenchmarkTask
    model_id: str
    instance_type: str
    runner: RunnerName
    sdk_versions: dict[str, str] = {}
    started_at: AwareDatetime
    finished_at: AwareDatetime
    compile_time_seconds: Decimal = Field(ge=0)
    measurements: list[Measurement] = Field(min_length=1, max_length=64)
    skipped: list[SkippedShape] = []
    slo: SloSizing | None = None

    @model_validator(mode="after")
    def _times(self) -> BenchmarkResult:
        if self.finished_at < self.started_at:
            raise ValueError("finished_at is before started_at")
        return self

    @classmethod
    def from_text(cls, text: str | bytes) -> BenchmarkResult:
        """Validate a result file; :class:`InvalidResult` says in one line what is wrong."""
        if len(text) > RESULT_MAX_BYTES:
            raise InvalidResult(f"result file is {len(text):,} bytes, more than {RESULT_MAX_BYTES:,}")
        try:
            return cls.model_validate_json(text)
        except ValidationError as exc:
            raise InvalidResult(describe_errors(exc)) from exc

    def check_matches(self, parameters: BenchmarkParameters) -> None:
        """A result must belong to the run that asked for it (a copied or stale file must not price anything)."""
        for field in ("run_id", "finding_id", "role", "task", "instance_type"):
            got, wanted = getattr(self, field), getattr(parameters, field)
            if got != wanted:
                raise InvalidResult(f"result {field} is {got!r}, the run asked for {wanted!r}")


DEFAULT_MAX_ERROR_RATE = Decimal("0.01")


def size_for_slo(
    measurements: Sequence[Measurement],
    *,
    latency_target_ms: Decimal,
    peak_requests_per_second: Decimal,
    max_error_rate: Decimal = DEFAULT_MAX_ERROR_RATE,
) -> SloSizing:
    """The fewest instances carrying ``peak_requests_per_second`` at the latency target, from the concurrency
    sweep's measurements (those with a ``concurrency``): the level with the most requests per second whose
    end-to-end p95 is within the target and whose error rate is at most ``max_error_rate``."""
    swept = [m for m in measurements if m.concurrency is not None]
    fits = [
        m
        for m in swept
        if m.latency_p95_ms <= latency_target_ms and (m.error_rate is None or m.error_rate <= max_error_rate)
    ]
    base: dict[str, Any] = {
        "latency_target_ms": latency_target_ms,
        "peak_requests_per_second": peak_requests_per_second,
        "max_error_rate": max_error_rate,
    }
    if not swept:
        return SloSizing(**base, met=False, reason="no concurrency sweep was measured: nothing to size with")
    if not fits:
        fastest = min(swept, key=lambda m: m.latency_p95_ms)
        return SloSizing(
            **base,
            met=False,
            reason=f"no concurrency level meets p95 {latency_target_ms} ms: the fastest (concurrency "
            f"{fastest.concurrency}, batch {fastest.batch_size}) has p95 {fastest.latency_p95_ms} ms",
        )
    best = max(fits, key=lambda m: (m.requests_per_second, -m.latency_p95_ms))
    instances = instances_needed(peak_requests_per_second, best.requests_per_second)
    return SloSizing(
        **base,
        met=True,
        concurrency=best.concurrency,
        capacity_requests_per_second=best.requests_per_second,
        instances=instances,
        reason=f"{instances} instance{'' if instances == 1 else 's'} at concurrency {best.concurrency} carry the peak "
        f"{peak_requests_per_second} requests/s at p95 {best.latency_p95_ms} ms (target {latency_target_ms} ms)",
    )


def describe_errors(exc: ValidationError, limit: int = 3) -> str:
    """At most ``limit`` validation errors as ``where: what``, on one line."""
    parts = []
    for error in exc.errors()[:limit]:
        where = ".".join(str(p) for p in error["loc"]) or "(document)"
        parts.append(f"{where}: {error['msg']}")
    more = exc.error_count() - limit
    return "; ".join(parts) + (f" (and {more} more)" if more > 0 else "")


def result_uri(bucket: str, run_id: str) -> str:
    return f"s3://{bucket}/benchmarks/{run_id}/{RESULT_FILE_NAME}"


def split_s3_uri(uri: str) -> tuple[str, str]:
    """``s3://bucket/key`` -> (bucket, key)."""
    if not uri.startswith("s3://") or "/" not in uri[5:]:
        raise ValueError(f"{uri!r} is not an s3://bucket/key URI")
    bucket, key = uri[5:].split("/", 1)
    return bucket, key
