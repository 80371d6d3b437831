"""Planning a benchmark: the workload read from a finding, the queue and parameters chosen, and when a finding
gets no job (with the reason). Pure: findings, resources and runs are built in memory."""

from __future__ import annotations

from datetime import UTC, datetime
from decimal import Decimal
from typing import Any

import pytest
from benchmark_factories import finding, resource, training_finding
from pydantic import ValidationError

from chipwise.benchmarks.dispatch import plan_finding
from chipwise.benchmarks.runs import next_attempt
from chipwise.benchmarks.workload import (
    Telemetry,
    current_of,
    demand_from_evidence,
    demand_from_neuron,
    demand_from_rollups,
    describe_workload,
    pricing_policy,
    task_of,
)
from chipwise.catalog import get_catalog
from chipwise.models.evidence import FindingEvidence
from chipwise.models.resources import WorkloadHints
from chipwise.settings import BatchQueues, Settings
from chipwise.store.tables import BenchmarkRun, MetricRollup, NeuronRollup

HOUR = datetime(2026, 11, 20, tzinfo=UTC)


def _run(attempt: int, status: str, target: str = "ml.inf2.xlarge", **extra: Any) -> BenchmarkRun:
    return BenchmarkRun(
        id=f"run-{attempt}",
        finding_id="f",
        target_instance_type=target,
        attempt=attempt,
        role="target",
        job_queue="q",
        status=status,
        parameters={},
        failure_reason=extra.pop("failure_reason", None),
        **extra,
    )


# --- the workload -----------------------------------------------------------------------------------------------


def test_traffic_in_the_evidence_is_read_per_second() -> None:
    # When the rules' evidence gives requests per hour (mean and peak) and the p95 latency
    evidence = FindingEvidence(mean_requests_per_hour=79200, peak_requests_per_hour=95040, latency_p95_ms=70)
    demand = demand_from_evidence(evidence)
    # Then the demand is per second
    assert demand is not None
    assert (demand.unit, demand.peak_per_second, demand.mean_per_second) == ("requests", Decimal("26.4"), Decimal(22))
    assert demand.latency_p95_ms == Decimal(70)


def test_tokens_win_over_requests_and_neuron_executions_count_as_requests() -> None:
    # When both tokens and requests are given, Then tokens are used
    tokens = demand_from_evidence(FindingEvidence(mean_tokens_per_hour=36_000_000, mean_requests_per_hour=3600))
    assert tokens is not None and (tokens.unit, tokens.peak_per_second) == ("tokens", Decimal(10_000))
    # When only Neuron executions per hour are known, Then they are the request rate (peak = mean)
    executions = demand_from_evidence(FindingEvidence(mean_executions_per_hour=12_600))
    assert executions is not None and executions.unit == "requests"
    assert executions.peak_per_second == executions.mean_per_second == Decimal("3.5")


@pytest.mark.parametrize(
    "stored", [{}, {"mean_requests_per_hour": 0}, {"mean_requests_per_hour": "n/a"}, {"requests_per_hour": 3600}]
)
def test_no_usable_traffic_is_none(stored: dict[str, Any]) -> None:
    # When the stored evidence has no positive traffic figure under a declared name, Then there is no demand
    assert demand_from_evidence(FindingEvidence.read(stored)) is None


def test_a_rule_cannot_record_an_undeclared_evidence_key() -> None:
    # When a rule words a figure differently from the schema, Then the draft fails instead of being misread later
    with pytest.raises(ValidationError, match="requests_per_hour"):
        FindingEvidence.from_rule({"requests_per_hour": 3600})


def test_traffic_from_sagemaker_rollups() -> None:
    # Given three hours of Invocations (sums) and ModelLatency (µs averages)
    rollups = [MetricRollup(metric="Invocations", sum=s, hour=HOUR) for s in (36_000.0, 72_000.0, 54_000.0)] + [
        MetricRollup(metric="ModelLatency", average=a, hour=HOUR) for a in (60_000.0, 65_000.0, 90_000.0)
    ]
    # When read
    demand = demand_from_rollups(rollups)
    # Then the busiest hour is the peak (20 req/s), the mean is 15 req/s and p95 interpolates: 65 + 0.9 x 25 ms
    assert demand is not None
    assert (demand.peak_per_second, demand.mean_per_second) == (Decimal(20), Decimal(15))
    assert demand.latency_p95_ms == Decimal("87.5")
    assert demand.source == "cloudwatch"


def test_traffic_of_an_ec2_neuron_instance_from_neuron_monitor() -> None:
    # Given two runtimes on one instance over two hours, with hourly p99 latencies
    rows = [
        NeuronRollup(hour=HOUR, executions_completed=30_000, latency_p99_s=0.20),
        NeuronRollup(hour=HOUR, executions_completed=6_000, latency_p99_s=0.25),
        NeuronRollup(hour=HOUR.replace(hour=1), executions_completed=18_000, latency_p99_s=0.18),
    ]
    # When read
    demand = demand_from_neuron(rows)
    # Then the runtimes add up per hour: 36,000 then 18,000 executions -> 10 req/s peak, 7.5 mean
    assert demand is not None
    assert (demand.peak_per_second, demand.mean_per_second) == (Decimal(10), Decimal("7.5"))
    assert demand.latency_p95_ms == Decimal(245)  # p95 of 180, 200, 250 ms: 200 + 0.9 x 50
    assert demand.source == "neuron-monitor"


def test_evidence_wins_over_telemetry() -> None:
    # Given traffic in the evidence and in neuron-monitor rollups
    f = finding(evidence={"mean_requests_per_hour": 3600})
    telemetry = Telemetry(neuron=[NeuronRollup(hour=HOUR, executions_completed=72_000)])
    # When the workload is described, Then the evidence wins, and telemetry fills in without it
    demand = describe_workload(f, resource(), telemetry).demand
    assert demand is not None and demand.source == "evidence" and demand.peak_per_second == 1
    without = describe_workload(finding(evidence={}), resource(), telemetry).demand
    assert without is not None and without.source == "neuron-monitor" and without.peak_per_second == 20


@pytest.mark.parametrize(
    ("kind", "hints", "environment", "task"),
    [
        ("training", {"serving_stack": "tgi"}, {}, "training"),
        ("inference", {}, {"HF_TASK": "token-classification"}, "token-classification"),
        ("inference", {"serving_stack": "tgi", "model_family": "bert"}, {}, "text-generation"),
        ("inference", {"model_family": "bert"}, {}, "feature-extraction"),
        ("inference", {"model_family": "llama"}, {}, "text-generation"),
        ("inference", {}, {}, "text-generation"),
    ],
)
def test_the_task(kind: Any, hints: dict[str, Any], environment: dict[str, str], task: str) -> None:
    # When the task is read from the workload, the endpoint's HF_TASK and the hints, Then it is
    assert task_of(kind, WorkloadHints.model_validate(hints), environment) == task


def test_an_endpoint_is_priced_at_its_effective_rate_and_a_training_job_at_list_price() -> None:
    # Given an endpoint finding and a training finding
    catalog = get_catalog()
    # 4 × ml.g5.2xlarge costing $4,000 a month: $1.369863/h each (discounts included)
    endpoint = current_of(finding(monthly_cost_usd=Decimal(4000)), catalog, "inference")
    assert endpoint.price_usd_per_hour.quantize(Decimal("0.000001")) == Decimal("1.369863")
    # a training job runs some hours only: the catalog's list price where it has one (ml.g5.12xlarge)
    job = current_of(training_finding(instance_type="ml.g5.12xlarge"), catalog, "training")
    assert job.price_usd_per_hour == catalog.price("ml.g5.12xlarge") == Decimal("7.09")
    # and without a public list price (ml.p4d.24xlarge has none), its bill over the hours it ran: 5,000 / (2 x 100)
    unlisted = current_of(training_finding(), catalog, "training")
    assert catalog.price("ml.p4d.24xlarge") is None
    assert unlisted.price_usd_per_hour == Decimal(25)
    assert (job.count, job.run_hours, job.monthly_cost_usd) == (2, Decimal(100), Decimal("5000.00"))


def test_the_policy_comes_from_economics_json() -> None:
    # When the pricing policy is read
    policy = pricing_policy()
    # Then its figures are assumptions.json's
    assert policy.headroom == Decimal("1.3")  # core_headroom_factor
    assert policy.latency_tolerance == Decimal("1.20")  # 1 + the high end of the latency penalty


# --- attempts -----------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("runs", "expected"),
    [
        ([], 1),
        ([_run(1, "failed", failure_reason="boom")], 2),
        ([_run(1, "failed"), _run(2, "expired")], 3),
        ([_run(1, "submitted")], "already submitted"),
        ([_run(1, "running")], "already running"),
        ([_run(1, "succeeded")], "already measured"),
        ([_run(1, "failed", result={"rejected": "bad"}, failure_reason="result rejected: bad")], "was rejected"),
        ([_run(1, "failed"), _run(2, "failed"), _run(3, "failed", failure_reason="OOM")], "gave up after 3"),
    ],
)
def test_next_attempt(runs: list[BenchmarkRun], expected: int | str) -> None:
    # When the next attempt is decided for these runs (at most 3)
    decision = next_attempt(runs, max_attempts=3)
    # Then it is the next attempt number, or why there is none
    if isinstance(expected, int):
        assert decision == expected
    else:
        assert isinstance(decision, str) and expected in decision


# --- the plan -------------------------------------------------------------------------------------------------------


def _plan(f: Any, settings: Settings | None = None, runs: list[BenchmarkRun] | None = None) -> Any:
    workload = describe_workload(f, resource(f.resource_name))
    return plan_finding(f, workload, runs or [], settings=settings or Settings(), catalog=get_catalog())


def test_a_gpu_endpoint_is_benchmarked_on_the_inf2_queue() -> None:
    # Given chat-mistral-g5 recommended to move to ml.inf2.xlarge
    f = finding()
    # When planned
    planned, skipped = _plan(f)
    # Then one job on the inf2 queue runs on an inf2.xlarge host, priced as the SageMaker type
    assert skipped == []
    (run,) = planned
    p = run.parameters
    assert (run.job_queue, run.job_definition, run.attempt, run.role) == (
        "chipwise-bench-inf2",
        "chipwise-bench-inf2-xlarge",
        1,
        "target",
    )
    assert (p.instance_type, p.priced_as, p.neuron_cores) == ("inf2.xlarge", "ml.inf2.xlarge", 2)
    assert (p.model_id, p.task, p.runner) == ("mistralai/Mistral-7B-Instruct-v0.3", "text-generation", "optimum-neuron")
    assert p.latency_target_ms == Decimal("84.0")  # today's p95 70 ms × 1.2
    assert p.result_uri == f"s3://chipwise-artifacts/benchmarks/{p.run_id}/result.json"
    assert (p.batch_sizes, p.sequence_lengths, p.output_tokens) == ((1, 4, 8, 16), (512, 2048), 128)


def test_a_paired_gpu_baseline_is_planned_when_its_queue_is_configured() -> None:
    # Given a GPU baseline queue
    settings = Settings(batch_queues=BatchQueues(gpu_baseline="chipwise-bench-gpu"))
    # When chat-mistral-g5 is planned
    planned, _ = _plan(finding(), settings)
    # Then a second run measures today's GPU (ml.g5.2xlarge on a g5.2xlarge host) with CUDA
    baseline = next(r for r in planned if r.role == "gpu_baseline")
    assert (baseline.job_queue, baseline.job_definition) == ("chipwise-bench-gpu", "chipwise-baseline-g5-2xlarge")
    assert (baseline.parameters.instance_type, baseline.parameters.runner) == ("g5.2xlarge", "cuda")
    assert baseline.target_instance_type == "ml.g5.2xlarge"
    assert baseline.parameters.neuron_cores == 0


def test_training_goes_to_the_trn1_queue_with_the_training_runner() -> None:
    # When a GPU fine-tune recommended for ml.trn1.32xlarge is planned
    planned, _ = _plan(training_finding())
    # Then it runs on the trn1 queue with native PyTorch on Neuron (the go-forward stack) over all 32 NeuronCores
    (run,) = planned
    assert run.job_queue == "chipwise-bench-trn1"
    assert (run.parameters.task, run.parameters.runner, run.parameters.neuron_cores) == (
        "training",
        "torchneuron",
        32,
    )
    assert run.parameters.latency_target_ms is None


@pytest.mark.parametrize(
    ("recommendation", "reason"),
    [
        ({"action": "migrate"}, "names no target instance type"),
        ({"action": "migrate", "target_instance_type": "x9.huge"}, "unknown target instance type"),
        ({"action": "rightsize", "target_instance_type": "g5.xlarge"}, "not a Neuron type"),
        ({"action": "migrate", "target_instance_type": "inf1.xlarge"}, "no benchmark queue for the inf1 family (set"),
        ({"action": "migrate", "target_instance_type": "trn2.48xlarge"}, "no on-demand price for trn2.48xlarge"),
    ],
)
def test_a_finding_that_cannot_be_benchmarked_says_why(recommendation: dict[str, Any], reason: str) -> None:
    # When a finding with this recommendation is planned
    planned, skipped = _plan(finding(recommendation=recommendation))
    # Then it gets no job, and the reason
    assert planned == []
    assert reason in skipped[0].reason


def test_a_finding_without_a_model_is_skipped() -> None:
    # Given a resource with no model id or family
    f = finding()
    workload = describe_workload(f, resource(hints={}))
    # When planned
    planned, skipped = plan_finding(f, workload, [], settings=Settings(), catalog=get_catalog())
    # Then nothing would know what to run
    assert planned == [] and "no model id or family" in skipped[0].reason


def test_an_active_run_blocks_a_second_one_and_a_failure_is_retried() -> None:
    f = finding()
    # When a run is active, Then no second one; when it failed, Then attempt 2
    _, skipped = _plan(f, runs=[_run(1, "submitted")])
    assert "already submitted" in skipped[0].reason
    planned, _ = _plan(f, runs=[_run(1, "failed", failure_reason="Host EC2 terminated")])
    assert planned[0].attempt == 2


def test_an_inf1_recommendation_is_measured_on_the_inf1_queue_never_on_inf2() -> None:
    # Given a GPU encoder recommended to move to inf1.xlarge (as bert-ner-g6 is), and an inf1 queue configured
    f = finding(recommendation={"action": "migrate", "target_instance_type": "inf1.xlarge", "target_count": 2})
    settings = Settings(batch_queues=BatchQueues(inf1="chipwise-bench-inf1"))
    # When planned
    planned, skipped = _plan(f, settings)
    # Then its job runs on the recommended family's queue, on an inf1 host, priced as the recommended type
    assert skipped == []
    (run,) = planned
    assert (run.job_queue, run.parameters.instance_type, run.target_instance_type) == (
        "chipwise-bench-inf1",
        "inf1.xlarge",
        "inf1.xlarge",
    )
    # and without one, it is not benchmarked at all (an inf2 measurement would not price an inf1 move)
    unplanned, why = _plan(f)
    assert unplanned == [] and "set batch_queues.inf1" in why[0].reason
