"""The benchmark job's entrypoint: run the model on this host's accelerator, measure it, write the result.

Runs inside the container built by ``iac/benchmark/Dockerfile`` (a Neuron deep learning container) as an AWS
Batch job. Its arguments are the job's parameters (``chipwise.models.benchmark.BenchmarkParameters``, one
``--flag`` each, filled from Batch ``Ref::`` placeholders). For every static shape (batch size × sequence
length) it compiles the model, warms it up, times ``iterations`` requests, and records throughput and latency
p50/p95; compile time is the sum of the compilations. The result JSON goes to ``--result-uri`` on S3 (or to
``--output`` for a local run), in the schema Chipwise validates when it reads it.

Exit codes (Batch shows them in the job state event): 0 written; 2 bad arguments; 3 no shape could be
measured; 4 the result could not be written.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Callable, Sequence
from datetime import datetime, timezone
from decimal import Decimal
from pathlib import Path
from typing import Any

from harness import ModelRunner, RequestTiming, ServingRunner, Shape  # beside this file
from pydantic import ValidationError

from chipwise.economics import percentile
from chipwise.models.benchmark import (
    RESULT_SCHEMA_VERSION,
    BenchmarkParameters,
    BenchmarkResult,
    Measurement,
    SkippedShape,
    SloSizing,
    describe_errors,
    flag_of,
    size_for_slo,
    split_s3_uri,
)

EXIT_OK = 0
EXIT_BAD_ARGUMENTS = 2
EXIT_NOTHING_MEASURED = 3
EXIT_WRITE_FAILED = 4
DEFAULT_WARMUP = 3
_OPTIONAL = {name for name, field in BenchmarkParameters.model_fields.items() if not field.is_required()}

Clock = Callable[[], float]
Now = Callable[[], datetime]


RunnerFactory = Callable[[BenchmarkParameters], ModelRunner]


# --- arguments -----------------------------------------------------------------------------------------------------


def build_parser() -> argparse.ArgumentParser:
    """One ``--flag`` per benchmark parameter (Batch passes them all), plus local-run options."""
    parser = argparse.ArgumentParser(prog="chipwise-benchmark", description=__doc__.splitlines()[0])
    for name, field in BenchmarkParameters.model_fields.items():
        parser.add_argument(
            flag_of(name), dest=name, required=name not in _OPTIONAL, default="", help=field.description or name
        )
    parser.add_argument("--output", type=Path, default=None, help="Write the result here instead of S3.")
    parser.add_argument("--warmup", type=int, default=DEFAULT_WARMUP, help="Untimed requests per shape.")
    return parser


def parse_parameters(namespace: argparse.Namespace) -> BenchmarkParameters:
    """The validated parameters (Batch substitutes strings; lists are comma separated)."""
    values = {name: getattr(namespace, name) for name in BenchmarkParameters.model_fields}
    return BenchmarkParameters.from_batch(values)


# --- measuring -------------------------------------------------------------------------------------------------------


def shapes_of(parameters: BenchmarkParameters) -> list[Shape]:
    return [
        Shape(batch, length, parameters.output_tokens)
        for length in parameters.sequence_lengths
        for batch in parameters.batch_sizes
    ]


def latency_percentile(values: Sequence[float], pct: int) -> float:
    """The ``pct``-th percentile of measured latencies, with Chipwise's one definition (linear interpolation
    between the closest ranks, :func:`chipwise.economics.percentile`)."""
    return percentile(sorted(values), pct)


def _decimal(value: float, places: int = 3) -> Decimal:
    return Decimal(str(round(value, places)))


def measure_shape(runner: ModelRunner, shape: Shape, iterations: int, warmup: int, clock: Clock) -> Measurement:
    """Warm up, then time ``iterations`` requests one after another."""
    for _ in range(warmup):
        runner.run(shape)
    latencies: list[float] = []
    tokens = 0
    started = clock()
    for _ in range(iterations):
        before = clock()
        tokens += runner.run(shape)
        latencies.append(clock() - before)
    elapsed = clock() - started
    return Measurement(
        batch_size=shape.batch_size,
        sequence_length=shape.sequence_length,
        output_tokens=shape.output_tokens,
        requests_per_second=_decimal(shape.batch_size * iterations / elapsed),
        tokens_per_second=_decimal(tokens / elapsed) if tokens else None,
        latency_p50_ms=_decimal(latency_percentile(latencies, 50) * 1000),
        latency_p95_ms=_decimal(latency_percentile(latencies, 95) * 1000),
        iterations=iterations,
    )


def measure_concurrency(
    runner: ServingRunner, shape: Shape, concurrency: int, iterations: int, clock: Clock
) -> Measurement:
    """Waves of ``concurrency`` requests in flight until ``iterations`` requests have finished: throughput, the
    end-to-end latency p50/p95/p99, time to first token and per output token p50/p99, and the error rate."""
    timings: list[RequestTiming] = []
    started = clock()
    while len(timings) < iterations:
        timings.extend(runner.serve(shape, concurrency))
    elapsed = clock() - started
    ok = [t for t in timings if t.ok]
    if not ok or elapsed <= 0:
        raise RuntimeError(f"every request failed at concurrency {concurrency}")
    e2e = [t.e2e_seconds * 1000 for t in ok]
    ttft = [t.ttft_seconds * 1000 for t in ok]
    tpot = [(t.e2e_seconds - t.ttft_seconds) * 1000 / (t.output_tokens - 1) for t in ok if t.output_tokens > 1]
    tokens = sum(t.output_tokens for t in ok)
    return Measurement(
        batch_size=shape.batch_size,
        sequence_length=shape.sequence_length,
        output_tokens=shape.output_tokens,
        requests_per_second=_decimal(len(ok) / elapsed),
        tokens_per_second=_decimal(tokens / elapsed) if tokens else None,
        latency_p50_ms=_decimal(latency_percentile(e2e, 50)),
        latency_p95_ms=_decimal(latency_percentile(e2e, 95)),
        latency_p99_ms=_decimal(latency_percentile(e2e, 99)),
        ttft_p50_ms=_decimal(latency_percentile(ttft, 50)),
        ttft_p99_ms=_decimal(latency_percentile(ttft, 99)),
        tpot_p50_ms=_decimal(latency_percentile(tpot, 50)) if tpot else None,
        tpot_p99_ms=_decimal(latency_percentile(tpot, 99)) if tpot else None,
        error_rate=_decimal((len(timings) - len(ok)) / len(timings), 4),
        iterations=len(timings),
        concurrency=concurrency,
    )


def sweep_concurrency(
    parameters: BenchmarkParameters, runner: ModelRunner, clock: Clock
) -> tuple[list[Measurement], list[SkippedShape]]:
    """Single-sequence requests at every concurrency level and sequence length (the server batches them)."""
    measurements: list[Measurement] = []
    skipped: list[SkippedShape] = []
    if not parameters.concurrency_levels:
        return measurements, skipped
    if not hasattr(runner, "serve"):
        for length in parameters.sequence_lengths:
            reason = "concurrency sweep not run: this runner cannot keep requests in flight"
            skipped.append(SkippedShape(batch_size=1, sequence_length=length, reason=reason))
        return measurements, skipped
    serving: ServingRunner = runner  # type: ignore[assignment]
    for length in parameters.sequence_lengths:
        shape = Shape(1, length, parameters.output_tokens)
        for level in parameters.concurrency_levels:
            try:
                measurements.append(measure_concurrency(serving, shape, level, parameters.iterations, clock))
            except Exception as exc:  # one level that fails (out of memory, every request failed) is recorded
                reason = f"concurrency {level}: {type(exc).__name__}: {exc}"[:2000]
                skipped.append(SkippedShape(batch_size=1, sequence_length=length, reason=reason))
    return measurements, skipped


def slo_sizing(parameters: BenchmarkParameters, measurements: Sequence[Measurement]) -> SloSizing | None:
    """The SLO-sized instance count when the run was given a latency target and the observed peak."""
    if parameters.latency_target_ms is None or parameters.peak_requests_per_second is None:
        return None
    if not any(m.concurrency is not None for m in measurements):
        return None
    return size_for_slo(
        measurements,
        latency_target_ms=parameters.latency_target_ms,
        peak_requests_per_second=parameters.peak_requests_per_second,
    )


def run_benchmark(
    parameters: BenchmarkParameters, runner: ModelRunner, *, warmup: int, clock: Clock, now: Now
) -> BenchmarkResult | None:
    """Every shape, prepared then measured; a shape that fails is recorded as skipped and the rest go on.
    None when no shape could be measured."""
    started_at = now()
    measurements: list[Measurement] = []
    skipped: list[SkippedShape] = []
    compile_seconds = 0.0
    for shape in shapes_of(parameters):
        try:
            before = clock()
            runner.prepare(shape)
            compile_seconds += clock() - before
            measurements.append(measure_shape(runner, shape, parameters.iterations, warmup, clock))
        except Exception as exc:  # a shape that does not compile or fit is a finding, not a crash
            reason = f"{type(exc).__name__}: {exc}"[:2000]
            skipped.append(
                SkippedShape(batch_size=shape.batch_size, sequence_length=shape.sequence_length, reason=reason)
            )
            print(f"shape batch={shape.batch_size} seq={shape.sequence_length} skipped: {reason}", file=sys.stderr)
    swept, not_swept = sweep_concurrency(parameters, runner, clock)
    measurements += swept
    skipped += not_swept
    if not measurements:
        return None
    return BenchmarkResult(
        schema_version=RESULT_SCHEMA_VERSION,
        run_id=parameters.run_id,
        finding_id=parameters.finding_id,
        role=parameters.role,
        task=parameters.task,
        model_id=parameters.model_id,
        instance_type=parameters.instance_type,
        runner=parameters.runner,
        sdk_versions=runner.versions(),
        started_at=started_at,
        finished_at=now(),
        compile_time_seconds=_decimal(compile_seconds),
        measurements=measurements,
        skipped=skipped,
        slo=slo_sizing(parameters, measurements),
    )


# --- writing -------------------------------------------------------------------------------------------------------


def result_json(result: BenchmarkResult) -> str:
    return json.dumps(result.model_dump(mode="json"), indent=2) + "\n"


def write_result(result: BenchmarkResult, uri: str, *, output: Path | None = None, s3: Any = None) -> str:
    """Write the result to ``output`` when given, else to ``uri`` on S3; returns where it went."""
    body = result_json(result)
    if output is not None:
        output.parent.mkdir(parents=True, exist_ok=True)
        output.write_text(body, encoding="utf-8")
        return str(output)
    bucket, key = split_s3_uri(uri)
    if s3 is None:
        import boto3

        s3 = boto3.client("s3")
    s3.put_object(Bucket=bucket, Key=key, Body=body.encode(), ContentType="application/json")
    return uri


# --- main ----------------------------------------------------------------------------------------------------------


def default_runner(parameters: BenchmarkParameters) -> ModelRunner:
    """The framework runner named by ``--runner`` (imported lazily: only the container has the SDKs)."""
    from neuron_runners import create_runner  # type: ignore[import-not-found,unused-ignore]  # beside this file

    runner: ModelRunner = create_runner(parameters)
    return runner


def main(
    argv: Sequence[str] | None = None,
    *,
    runner_factory: RunnerFactory = default_runner,
    clock: Clock = time.perf_counter,
    now: Now = lambda: datetime.now(timezone.utc),  # noqa: UP017 - Python 3.10 in the Neuron DLC
    s3: Any = None,
) -> int:
    namespace = build_parser().parse_args(argv)  # exits 2 with usage on a missing flag
    try:
        parameters = parse_parameters(namespace)
    except ValidationError as exc:
        print(f"chipwise-benchmark: invalid parameters: {describe_errors(exc, limit=10)}", file=sys.stderr)
        return EXIT_BAD_ARGUMENTS
    runner = runner_factory(parameters)
    result = run_benchmark(parameters, runner, warmup=max(0, namespace.warmup), clock=clock, now=now)
    if result is None:
        print("chipwise-benchmark: no shape could be measured", file=sys.stderr)
        return EXIT_NOTHING_MEASURED
    try:
        where = write_result(result, parameters.result_uri, output=namespace.output, s3=s3)
    except Exception as exc:
        print(f"chipwise-benchmark: cannot write the result: {type(exc).__name__}: {exc}", file=sys.stderr)
        return EXIT_WRITE_FAILED
    best = max(result.measurements, key=lambda m: m.requests_per_second)
    print(
        f"chipwise-benchmark: {len(result.measurements)} shapes measured, best {best.requests_per_second} req/s "
        f"(batch {best.batch_size}, p95 {best.latency_p95_ms} ms), compile {result.compile_time_seconds} s -> {where}"
    )
    return EXIT_OK


if __name__ == "__main__":
    sys.exit(main())
