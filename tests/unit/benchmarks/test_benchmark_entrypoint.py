"""The benchmark container's entrypoint, with a fake model runner on a virtual clock: arguments, measuring,
and the result file (locally and on S3)."""

from __future__ import annotations

import importlib.util
import sys
from decimal import Decimal
from pathlib import Path
from types import ModuleType
from typing import Any, get_args

import boto3
import pytest
from benchmark_factories import BUCKET, STARTED, parameters

from chipwise.models.benchmark import BenchmarkParameters, BenchmarkResult, RunnerName

BENCHMARK_DIR = Path(__file__).resolve().parents[3] / "iac" / "benchmark"


def _load(name: str) -> ModuleType:
    if str(BENCHMARK_DIR) not in sys.path:  # as in the container, where the script's directory is on the path
        sys.path.insert(0, str(BENCHMARK_DIR))
    spec = importlib.util.spec_from_file_location(name, BENCHMARK_DIR / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # dataclasses look their module up while the class is built
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def entrypoint() -> ModuleType:
    return _load("entrypoint")


class VirtualClock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


class FakeRunner:
    """Compiles in 10 s; a request takes 40 ms + 10 ms per sequence and generates every output token."""

    def __init__(self, clock: VirtualClock, failing: set[tuple[int, int]] | None = None) -> None:
        self.clock = clock
        self.failing = failing or set()
        self.prepared: list[Any] = []
        self.requests = 0

    def versions(self) -> dict[str, str]:
        return {"fake-sdk": "1.0"}

    def prepare(self, shape: Any) -> None:
        if (shape.batch_size, shape.sequence_length) in self.failing:
            raise RuntimeError("NCC_EXTP003: the graph does not fit device memory")
        self.prepared.append(shape)
        self.clock.now += 10.0

    def run(self, shape: Any) -> int:
        self.requests += 1
        self.clock.now += 0.040 + 0.010 * shape.batch_size
        return shape.batch_size * shape.output_tokens


def _argv(params: BenchmarkParameters, *extra: str) -> list[str]:
    argv: list[str] = []
    for name, value in params.to_batch().items():
        argv += ["--" + name.replace("_", "-"), value]
    return [*argv, *extra]


def _run(entrypoint: ModuleType, argv: list[str], runner: FakeRunner, clock: VirtualClock, **kwargs: Any) -> int:
    code: int = entrypoint.main(argv, runner_factory=lambda _p: runner, clock=clock, now=lambda: STARTED, **kwargs)
    return code


def test_a_run_writes_a_result_chipwise_accepts(entrypoint: ModuleType, tmp_path: Path) -> None:
    # Given parameters for two batch sizes and two sequence lengths, and a fake runner
    params = parameters(batch_sizes=(1, 4), sequence_lengths=(512, 2048), iterations=20)
    clock = VirtualClock()
    runner = FakeRunner(clock)
    output = tmp_path / "out" / "result.json"
    # When the entrypoint runs with --output
    code = _run(entrypoint, _argv(params, "--output", str(output), "--warmup", "2"), runner, clock)
    # Then it exits 0 and the file validates against the schema and the run
    assert code == 0
    result = BenchmarkResult.from_text(output.read_text())
    result.check_matches(params)
    assert result.sdk_versions == {"fake-sdk": "1.0"}
    assert result.compile_time_seconds == Decimal("40.0")  # 4 shapes × 10 s
    assert [(m.batch_size, m.sequence_length) for m in result.measurements] == [
        (1, 512),
        (4, 512),
        (1, 2048),
        (4, 2048),
    ]
    # batch 4: 80 ms a request -> 4 × 20 ÷ 1.6 s = 50 req/s, 4 × 128 × 20 ÷ 1.6 = 6400 tokens/s
    batch4 = result.measurements[1]
    assert (batch4.requests_per_second, batch4.tokens_per_second) == (Decimal("50.0"), Decimal("6400.0"))
    assert (batch4.latency_p50_ms, batch4.latency_p95_ms) == (Decimal("80.0"), Decimal("80.0"))
    assert batch4.iterations == 20
    # warm-up requests run but are not timed
    assert runner.requests == 4 * (2 + 20)


def test_a_shape_that_fails_is_skipped_and_the_rest_measured(entrypoint: ModuleType, tmp_path: Path) -> None:
    # Given a runner that cannot compile batch 4
    params = parameters(batch_sizes=(1, 4), sequence_lengths=(512,))
    clock = VirtualClock()
    output = tmp_path / "result.json"
    # When it runs
    code = _run(entrypoint, _argv(params, "--output", str(output)), FakeRunner(clock, {(4, 512)}), clock)
    # Then batch 1 is measured and batch 4 is reported with the compiler's reason
    assert code == 0
    result = BenchmarkResult.from_text(output.read_text())
    assert [m.batch_size for m in result.measurements] == [1]
    assert result.skipped[0].batch_size == 4 and "does not fit device memory" in result.skipped[0].reason


def test_nothing_measured_exits_3_without_a_file(
    entrypoint: ModuleType, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Given one shape, which does not compile
    params = parameters(batch_sizes=(1,), sequence_lengths=(512,))
    clock = VirtualClock()
    output = tmp_path / "result.json"
    # When the entrypoint runs
    code = _run(entrypoint, _argv(params, "--output", str(output)), FakeRunner(clock, {(1, 512)}), clock)
    # Then it exits 3 and writes nothing (Batch reports the job FAILED with that exit code)
    assert code == entrypoint.EXIT_NOTHING_MEASURED == 3
    assert not output.exists()
    assert "no shape could be measured" in capsys.readouterr().err


def test_a_missing_argument_exits_2_with_usage(entrypoint: ModuleType, capsys: pytest.CaptureFixture[str]) -> None:
    # Given the job's arguments without --run-id
    argv = _argv(parameters())
    without_run_id = argv[2:]  # drop "--run-id <value>"
    # When the entrypoint parses them
    with pytest.raises(SystemExit) as exited:
        _run(entrypoint, without_run_id, FakeRunner(VirtualClock()), VirtualClock())
    # Then argparse exits 2 naming the flag
    assert exited.value.code == 2
    assert "--run-id" in capsys.readouterr().err


def test_an_invalid_argument_exits_2_naming_it(entrypoint: ModuleType, capsys: pytest.CaptureFixture[str]) -> None:
    # Given a zero batch size and an unknown runner
    argv = _argv(parameters())
    argv[argv.index("--batch-sizes") + 1] = "0,4"
    argv[argv.index("--runner") + 1] = "tensorrt"
    # When the entrypoint runs
    code = _run(entrypoint, argv, FakeRunner(VirtualClock()), VirtualClock())
    # Then it exits 2 naming both
    assert code == entrypoint.EXIT_BAD_ARGUMENTS
    err = capsys.readouterr().err
    assert "batch_sizes" in err and "runner" in err


def test_batch_placeholders_for_optional_parameters_may_be_empty(entrypoint: ModuleType, tmp_path: Path) -> None:
    # Given Batch's default "" for the optional latency target and model family
    params = parameters(latency_target_ms=None, model_family=None, batch_sizes=(1,), sequence_lengths=(128,))
    clock = VirtualClock()
    output = tmp_path / "result.json"
    # When / Then
    assert _run(entrypoint, _argv(params, "--output", str(output)), FakeRunner(clock), clock) == 0
    assert BenchmarkResult.from_text(output.read_text()).measurements[0].batch_size == 1


def test_the_result_is_written_to_s3(entrypoint: ModuleType, aws: Any) -> None:
    # Given the artifacts bucket in the emulator
    s3 = boto3.client("s3")
    s3.create_bucket(Bucket=BUCKET)
    params = parameters(batch_sizes=(1,), sequence_lengths=(512,))
    clock = VirtualClock()
    # When the entrypoint runs without --output
    assert _run(entrypoint, _argv(params), FakeRunner(clock), clock) == 0
    # Then the result is at the run's result location
    key = f"benchmarks/{params.run_id}/result.json"
    stored = s3.get_object(Bucket=BUCKET, Key=key)
    assert stored["ContentType"] == "application/json"
    BenchmarkResult.from_text(stored["Body"].read()).check_matches(params)


def test_a_result_that_cannot_be_written_exits_4(
    entrypoint: ModuleType, aws: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    # Given a result location whose bucket does not exist
    params = parameters(batch_sizes=(1,), sequence_lengths=(512,))  # no bucket exists
    clock = VirtualClock()
    # When the entrypoint runs, Then it exits 4 with the S3 error
    assert _run(entrypoint, _argv(params), FakeRunner(clock), clock) == entrypoint.EXIT_WRITE_FAILED
    assert "NoSuchBucket" in capsys.readouterr().err


@pytest.mark.parametrize(("pct", "expected"), [(50, 5.5), (95, 9.55), (100, 10.0), (0, 1.0)])
def test_latency_percentiles_interpolate_like_the_rest_of_chipwise(
    entrypoint: ModuleType, pct: int, expected: float
) -> None:
    # When the percentile of 10..1 is taken, Then it interpolates between ranks: p95 = 9 + 0.55 × (10 - 9)
    assert entrypoint.latency_percentile([float(v) for v in range(10, 0, -1)], pct) == pytest.approx(expected)


def test_every_runner_name_has_a_runner() -> None:
    # Given the framework runners module (it imports its frameworks lazily, so it loads without them)
    runners = _load("neuron_runners")
    # Then every runner a job can ask for exists
    assert set(runners.RUNNERS) == set(get_args(RunnerName))


class FakeServer(FakeRunner):
    """A server with continuous batching: at concurrency c a request's first token comes after 50 + 5c ms and
    each further token after 10 + c ms; every ``fail_every``-th request at concurrency 16 fails."""

    def __init__(self, clock: VirtualClock, fail_every: int = 0) -> None:
        super().__init__(clock)
        self.fail_every = fail_every
        self.served = 0

    def serve(self, shape: Any, concurrency: int) -> list[Any]:
        from entrypoint import RequestTiming  # the module under test, loaded by the fixture

        ttft = 0.050 + 0.005 * concurrency
        e2e = ttft + (shape.output_tokens - 1) * (0.010 + 0.001 * concurrency)
        self.clock.now += e2e  # the wave's requests run side by side
        timings = []
        for _ in range(concurrency):
            self.served += 1
            ok = not (self.fail_every and concurrency == 16 and self.served % self.fail_every == 0)
            timings.append(RequestTiming(ttft, e2e, shape.output_tokens if ok else 0, ok))
        return timings


def test_a_concurrency_sweep_records_slo_percentiles_and_sizes_the_target(
    entrypoint: ModuleType, tmp_path: Path
) -> None:
    # Given a serving run with 11 output tokens, concurrency 1, 4, 8 and 16, a p95 target of 300 ms and an observed
    # peak of 100 requests a second
    params = parameters(
        batch_sizes=(1,),
        output_tokens=11,
        iterations=20,
        concurrency_levels=(1, 4, 8, 16),
        latency_target_ms=Decimal("300"),
        peak_requests_per_second=Decimal("100"),
    )
    clock = VirtualClock()
    runner = FakeServer(clock, fail_every=8)
    output = tmp_path / "result.json"
    # When the entrypoint runs
    assert _run(entrypoint, _argv(params, "--output", str(output), "--warmup", "0"), runner, clock) == 0
    result = BenchmarkResult.from_text(output.read_text())
    swept = {m.concurrency: m for m in result.measurements if m.concurrency is not None}
    assert sorted(swept) == [1, 4, 8, 16]
    # Then at concurrency 8: TTFT 50 + 40 = 90 ms, TPOT 10 + 8 = 18 ms, e2e 90 + 10 x 18 = 270 ms; 3 waves of 8
    # (24 requests) in 0.81 s = 29.630 requests/s and 24 x 11 / 0.81 = 325.926 tokens/s
    c8 = swept[8]
    assert (c8.ttft_p50_ms, c8.ttft_p99_ms) == (Decimal("90.0"), Decimal("90.0"))
    assert (c8.tpot_p50_ms, c8.tpot_p99_ms) == (Decimal("18.0"), Decimal("18.0"))
    assert (c8.latency_p50_ms, c8.latency_p95_ms, c8.latency_p99_ms) == (Decimal("270.0"),) * 3
    assert (c8.requests_per_second, c8.tokens_per_second) == (Decimal("29.63"), Decimal("325.926"))
    assert (c8.iterations, c8.error_rate) == (24, Decimal("0"))
    # concurrency 16: 130 + 10 x 26 = 390 ms (over the target), and 4 of 32 requests failed
    assert swept[16].latency_p95_ms == Decimal("390.0")
    assert swept[16].error_rate == Decimal("0.125")
    # And the SLO sizing: concurrency 8 is the busiest level within 300 ms: ceil(100 / 29.63) = 4 instances
    assert result.slo is not None
    assert result.slo.met
    assert (result.slo.concurrency, result.slo.capacity_requests_per_second) == (8, Decimal("29.63"))
    assert result.slo.instances == 4


def test_a_runner_that_cannot_serve_concurrently_says_so(entrypoint: ModuleType, tmp_path: Path) -> None:
    params = parameters(batch_sizes=(1,), concurrency_levels=(1, 8), peak_requests_per_second=Decimal("5"))
    clock = VirtualClock()
    output = tmp_path / "result.json"
    assert _run(entrypoint, _argv(params, "--output", str(output)), FakeRunner(clock), clock) == 0
    result = BenchmarkResult.from_text(output.read_text())
    assert result.slo is None
    assert any("cannot keep requests in flight" in s.reason for s in result.skipped)
