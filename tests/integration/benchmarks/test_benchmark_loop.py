"""The benchmark loop on the AWS emulator: submit -> Batch job (queue, devices, parameters, tags) -> state event
+ result file -> the recommendation re-priced; failures retried then given up; malformed results rejected;
one active run per (finding, target); stale runs expired."""

from __future__ import annotations

import json
from decimal import Decimal
from typing import Any

import benchmark_factories as factories
import pytest
from bench_harness import Bench, later, parse_result

from chipwise.aws import base_session
from chipwise.benchmarks.jobs import SPEC_HASH_TAG
from chipwise.benchmarks.results import Clients
from chipwise.models.benchmark import BenchmarkParameters
from chipwise.settings import get_settings
from chipwise.store import session_scope
from chipwise.store.tables import BenchmarkRun, Finding


def test_submit_creates_the_job_with_queue_devices_parameters_and_tags(bench_db: Bench) -> None:
    bench = bench_db
    # Given a right-sizing finding that moves an ml.inf2.48xlarge endpoint to ml.inf2.24xlarge
    finding = bench.add_finding(
        factories.finding(
            "summarizer-inf2-48xl",
            rule_id="inferentia_underutilized",
            instance_type="ml.inf2.48xlarge",
            instance_count=1,
            monthly_cost_usd=Decimal("11373.40"),
            estimated_monthly_savings_usd=Decimal("5686.70"),
            recommendation={
                "action": "rightsize",
                "target_platform": "inferentia",
                "target_instance_type": "ml.inf2.24xlarge",
                "target_count": 1,
            },
        )
    )
    # When benchmarks are dispatched
    report = bench.dispatch()
    # Then one job is on the inf2 queue
    (submitted,) = report.submitted
    assert submitted.status == "submitted" and submitted.job_id
    (run,) = bench.runs(finding.id)
    job = bench.job(run)
    assert job["jobQueue"].endswith(":job-queue/chipwise-bench-inf2")
    # its job definition maps the six Neuron devices of an inf2.24xlarge
    (definition,) = bench.clients.batch.describe_job_definitions(jobDefinitions=[job["jobDefinition"]])[
        "jobDefinitions"
    ]
    assert definition["jobDefinitionName"] == "chipwise-bench-inf2-24xlarge"
    devices = definition["containerProperties"]["linuxParameters"]["devices"]
    assert [d["hostPath"] for d in devices] == [f"/dev/neuron{i}" for i in range(6)]
    # its parameters are the run's, with the result location under the artifacts bucket
    params = BenchmarkParameters.from_batch(job["parameters"])
    assert params.run_id == run.id and params.finding_id == finding.id
    assert (params.instance_type, params.priced_as, params.neuron_cores) == ("inf2.24xlarge", "ml.inf2.24xlarge", 12)
    assert params.model_id == "mistralai/Mistral-7B-Instruct-v0.3"
    assert params.result_uri == f"s3://chipwise-artifacts/benchmarks/{run.id}/result.json"
    # and its tags link it back to the run and the finding
    assert job["tags"]["chipwise:run-id"] == run.id
    assert job["tags"]["chipwise:finding-id"] == finding.id
    assert job["tags"]["chipwise:rule-id"] == "inferentia_underutilized"
    # the run is stored as submitted, with an expiry
    assert (run.status, run.attempt, run.job_id, run.target_instance_type) == (
        "submitted",
        1,
        submitted.job_id,
        "ml.inf2.24xlarge",
    )
    assert run.expires_at is not None and run.expires_at > run.submitted_at


def test_a_succeeded_job_with_its_result_replaces_the_estimate(bench_db: Bench) -> None:
    bench = bench_db
    # Given a submitted benchmark for chat-mistral-g5 and the result file the job wrote
    finding = bench.add_finding()
    bench.dispatch()
    (run,) = bench.runs(finding.id)
    bench.write_result(run)
    # When the SUCCEEDED state event arrives
    outcome = bench.deliver(bench.event(run))
    # Then the run is stored with its result and the measured economics
    assert (outcome.status, outcome.run_status, outcome.verdict) == ("recorded", "succeeded", "confirmed")
    stored = bench.run(run.id)
    assert stored.status == "succeeded" and stored.finished_at is not None
    assert parse_result(stored).measurements[1].requests_per_second == Decimal("40.5")
    assert stored.measured is not None and stored.measured["target_count"] == 1
    # and the recommendation is re-priced: 1 × ml.inf2.xlarge ($722.70) instead of $4,423.80 today
    (recommendation,) = bench.recommendations(finding.id)
    assert recommendation.source == "benchmark" and not recommendation.withdrawn
    assert (recommendation.target_instance_type, recommendation.target_count) == ("ml.inf2.xlarge", 1)
    assert recommendation.monthly_cost_usd == Decimal("722.70")
    assert recommendation.monthly_savings_usd == Decimal("3701.10")
    assert recommendation.confidence == "high" and recommendation.benchmark_run_id == run.id
    updated = bench.finding(finding.id)
    assert updated.measured_monthly_savings_usd == Decimal("3701.10")
    assert updated.confidence == "high"
    assert updated.estimated_monthly_savings_usd == Decimal("2978.40")  # the estimate is kept beside it
    note = updated.evidence["benchmark"]
    assert note["status"] == "measured" and note["run_id"] == run.id and note["cost_per_million_usd"] == "6.7901"
    assert updated.evidence["requests_per_hour"] == 79200  # the rules' evidence is untouched


def test_a_duplicate_event_changes_nothing(bench: Bench) -> None:
    finding = bench.add_finding()
    bench.dispatch()
    (run,) = bench.runs(finding.id)
    bench.write_result(run)
    event = bench.event(run)
    bench.deliver(event)
    # When EventBridge delivers the same event again
    again = bench.deliver(event)
    # Then it is recognised and nothing is added
    assert (again.status, again.run_status) == ("duplicate", "succeeded")
    assert len(bench.recommendations(finding.id)) == 1


def test_a_target_that_misses_the_latency_target_is_withdrawn_with_the_reason(bench: Bench) -> None:
    # Given a result whose fastest shape has p95 150 ms (today's p95 is 70 ms; the limit 84 ms)
    finding = bench.add_finding()
    bench.dispatch()
    (run,) = bench.runs(finding.id)
    bench.write_result(run, [factories.measurement(1, "9.0", "150"), factories.measurement(8, "50.0", "400")])
    # When the job succeeds
    outcome = bench.deliver(bench.event(run))
    # Then the recommendation is withdrawn, with why
    assert outcome.verdict == "withdrawn"
    (recommendation,) = bench.recommendations(finding.id)
    assert recommendation.withdrawn
    assert recommendation.reason is not None and "misses the latency target" in recommendation.reason
    updated = bench.finding(finding.id)
    assert updated.measured_monthly_savings_usd == Decimal("0.000000")
    assert updated.evidence["benchmark"]["status"] == "withdrawn"


def test_a_failed_job_is_stored_retried_and_finally_given_up(bench_db: Bench) -> None:
    bench = bench_db
    # Given a submitted benchmark and at most 3 attempts
    finding = bench.add_finding()
    bench.dispatch()
    assert get_settings().benchmark_max_attempts == 3
    # When its job fails three times in a row
    outcomes = []
    for attempt in (1, 2, 3):
        run = bench.runs(finding.id)[-1]
        assert run.attempt == attempt and run.status == "submitted"
        outcomes.append(bench.deliver(bench.failed_event(run)))
    # Then each failure is stored with its reason; the first two are retried with a new run and job
    runs = bench.runs(finding.id)
    assert [(r.attempt, r.status) for r in runs] == [(1, "failed"), (2, "failed"), (3, "failed")]
    assert all(
        r.failure_reason and "Host EC2" in r.failure_reason and "exit code 137" in r.failure_reason for r in runs
    )
    assert [o.retry_run_id for o in outcomes] == [runs[1].id, runs[2].id, None]
    assert len({r.job_id for r in runs}) == 3
    # and after the last one the finding keeps its estimate, with a note
    updated = bench.finding(finding.id)
    assert updated.measured_monthly_savings_usd is None and updated.confidence == "medium"
    assert updated.evidence["benchmark"]["status"] == "failed" and updated.evidence["benchmark"]["attempts"] == 3
    assert bench.recommendations(finding.id) == []
    # a later dispatch does not try again
    later_report = bench.dispatch()
    assert later_report.submitted == [] and "gave up after 3 attempts" in later_report.skipped[0].reason


def test_a_timed_out_job_is_retried_and_then_measured(bench: Bench) -> None:
    finding = bench.add_finding()
    bench.dispatch()
    (first,) = bench.runs(finding.id)
    # When the first attempt times out and the second succeeds
    timeout = "Job attempt duration exceeded timeout"
    retry = bench.deliver(bench.event(first, status="FAILED", statusReason=timeout)).retry_run_id
    assert retry is not None
    second = bench.run(retry)
    bench.write_result(second)
    outcome = bench.deliver(bench.event(second))
    # Then the measurement of the second attempt prices the recommendation
    assert outcome.verdict == "confirmed"
    assert bench.run(first.id).failure_reason == timeout
    (recommendation,) = bench.recommendations(finding.id)
    assert recommendation.benchmark_run_id == second.id


def test_a_malformed_result_is_rejected_and_the_estimate_kept(bench_db: Bench) -> None:
    bench = bench_db
    # Given a job that wrote a result file with a negative throughput
    finding = bench.add_finding()
    bench.dispatch()
    (run,) = bench.runs(finding.id)
    document = factories.result(BenchmarkParameters.model_validate(run.parameters)).model_dump(mode="json")
    document["measurements"][0]["requests_per_second"] = "-3"
    bench.write_result(run, text=json.dumps(document))
    # When the job succeeds
    outcome = bench.deliver(bench.event(run))
    # Then the result is rejected with the reason, and the recommendation stays an estimate
    assert outcome.run_status == "failed"
    assert outcome.reason is not None and "measurements.0.requests_per_second" in outcome.reason
    stored = bench.run(run.id)
    assert stored.status == "failed" and stored.failure_reason is not None
    assert stored.failure_reason.startswith("result rejected:")
    assert bench.recommendations(finding.id) == []
    updated = bench.finding(finding.id)
    assert updated.measured_monthly_savings_usd is None and updated.confidence == "medium"
    assert updated.evidence["benchmark"]["status"] == "rejected"
    # and the same job is not run again
    assert bench.dispatch().submitted == []


def test_a_missing_result_file_is_rejected(bench: Bench) -> None:
    # Given a job that succeeded without writing its result
    finding = bench.add_finding()
    bench.dispatch()
    (run,) = bench.runs(finding.id)
    # When its event arrives
    outcome = bench.deliver(bench.event(run))
    # Then the result is rejected and nothing is priced
    assert outcome.reason == f"result rejected: no result file at {run.result_uri}"
    assert bench.recommendations(finding.id) == []


def test_a_result_written_for_another_run_is_rejected(bench: Bench) -> None:
    # Given a result file at the run's location that belongs to another run
    finding = bench.add_finding()
    bench.dispatch()
    (run,) = bench.runs(finding.id)
    stray = factories.result(factories.parameters(finding.id))  # another run id
    bench.write_result(run, text=stray.model_dump_json())
    # When the job succeeds
    outcome = bench.deliver(bench.event(run))
    # Then the stray result is rejected
    assert outcome.reason is not None and "run_id" in outcome.reason


def test_a_second_dispatch_submits_nothing_new(bench_db: Bench) -> None:
    bench = bench_db
    # Given two eligible findings, dispatched once
    first = bench.add_finding()
    second = bench.add_finding(factories.finding("bert-ner-g6"))
    assert len(bench.dispatch().submitted) == 2
    jobs_before = bench.clients.batch.list_jobs(jobQueue="chipwise-bench-inf2")["jobSummaryList"]
    # When dispatched again
    report = bench.dispatch()
    # Then nothing is submitted, each finding says why, and the job definition was not registered again
    assert report.submitted == []
    assert {s.finding_id for s in report.skipped} == {first.id, second.id}
    assert all("already submitted" in s.reason for s in report.skipped)
    assert len(bench.clients.batch.list_jobs(jobQueue="chipwise-bench-inf2")["jobSummaryList"]) == len(jobs_before)
    definitions = bench.clients.batch.describe_job_definitions(jobDefinitionName="chipwise-bench-inf2-xlarge")
    assert [d["revision"] for d in definitions["jobDefinitions"]] == [1]
    assert SPEC_HASH_TAG in definitions["jobDefinitions"][0]["tags"]


def test_a_changed_job_definition_is_registered_as_a_new_revision(bench: Bench) -> None:
    # Given a dispatch with the default image
    bench.add_finding()
    bench.dispatch()
    # When the image changes and a new finding is dispatched
    bench.settings = bench.settings.model_copy(update={"benchmark_image": "chipwise-benchmark-neuron:2"})
    bench.add_finding(factories.finding("bert-ner-g6"))
    bench.dispatch()
    # Then revision 2 carries the new image and the job uses it
    definitions = bench.clients.batch.describe_job_definitions(
        jobDefinitionName="chipwise-bench-inf2-xlarge", status="ACTIVE"
    )["jobDefinitions"]
    latest = max(definitions, key=lambda d: d["revision"])
    assert latest["revision"] == 2 and latest["containerProperties"]["image"] == "chipwise-benchmark-neuron:2"
    assert bench.job(bench.runs()[-1])["jobDefinition"] == latest["jobDefinitionArn"]


def test_small_and_non_migration_findings_are_not_benchmarked(bench: Bench) -> None:
    # Given a small saving, a rule that needs no benchmark and a suppressed finding
    bench.add_finding(factories.finding(estimated_monthly_savings_usd=Decimal("150")))  # below $200
    bench.add_finding(factories.finding("idle-box", rule_id="inferentia_idle"))
    bench.add_finding(factories.finding("suppressed", status="suppressed"))
    # When dispatched
    report = bench.dispatch()
    # Then none of them is even considered
    assert report.planned == [] and report.submitted == [] and report.skipped == []


def test_a_stale_run_is_expired_and_retried(bench_db: Bench) -> None:
    bench = bench_db
    # Given a run whose job Batch no longer knows (its event never came)
    finding = bench.add_finding()
    bench.dispatch()
    (run,) = bench.runs(finding.id)
    with session_scope(bench.url) as session:
        stored = session.get(BenchmarkRun, run.id)
        assert stored is not None
        stored.job_id = "00000000-0000-0000-0000-000000000000"
    # When a dispatch runs after the expiry (24 h by default)
    report = bench.dispatch(now=later(25))
    # Then the run is expired with the reason and a second attempt is submitted
    assert report.sweep is not None and report.sweep.expired == [run.id]
    expired = bench.run(run.id)
    assert expired.status == "expired"
    assert expired.failure_reason == "no terminal state within 24 h (job unknown to Batch)"
    assert [(r.attempt, r.status) for r in bench.runs(finding.id)] == [(1, "expired"), (2, "submitted")]
    assert report.sweep.retried == [bench.runs(finding.id)[1].id]


def test_a_missed_success_event_is_caught_up_by_the_sweep(bench: Bench) -> None:
    # Given a job that succeeded and wrote its result, but whose event was lost
    finding = bench.add_finding()
    bench.dispatch()
    (run,) = bench.runs(finding.id)
    bench.write_result(run)
    # When a dispatch runs after the run's expiry
    report = bench.dispatch(now=later(25))
    # Then the success is recorded from DescribeJobs and the recommendation re-priced
    assert report.sweep is not None and report.sweep.caught_up == [run.id]
    assert bench.run(run.id).status == "succeeded"
    assert bench.finding(finding.id).measured_monthly_savings_usd == Decimal("3701.10")


def test_a_running_event_marks_the_run_running(bench: Bench) -> None:
    # Given a submitted run
    finding = bench.add_finding()
    bench.dispatch()
    (run,) = bench.runs(finding.id)
    # When Batch reports it RUNNING
    outcome = bench.deliver(bench.event(run, status="RUNNING"))
    # Then the run is running, and still blocks a second submission
    assert outcome.run_status == "running"
    assert bench.run(run.id).status == "running"
    assert "already running" in bench.dispatch().skipped[0].reason


def test_a_scan_that_overwrote_the_measurement_gets_it_back(bench_db: Bench) -> None:
    bench = bench_db
    # Given a measured finding
    finding = bench.add_finding()
    bench.dispatch()
    (run,) = bench.runs(finding.id)
    bench.write_result(run)
    bench.deliver(bench.event(run))
    # When the next scan re-upserts the finding (new evidence, estimate confidence, no measurement)
    with session_scope(bench.url) as session:
        stored = session.get(Finding, finding.id)
        assert stored is not None
        stored.evidence = {"requests_per_hour": 80000}
        stored.confidence, stored.measured_monthly_savings_usd = "medium", None
    report = bench.dispatch()
    # Then the dispatch that follows the scan puts the measurement back, and submits nothing
    assert report.reapplied == 1 and report.submitted == []
    restored = bench.finding(finding.id)
    assert restored.measured_monthly_savings_usd == Decimal("3701.10") and restored.confidence == "high"
    assert restored.evidence["benchmark"]["run_id"] == run.id
    assert restored.evidence["requests_per_hour"] == 80000


def test_batch_throttling_spends_no_attempt(bench: Bench, aws: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    # Given two eligible findings (a target and its GPU baseline each) and AWS Batch throttling every SubmitJob for
    # three dispatches, past boto3's own retries (one attempt here, so the test does not sit in backoff)
    monkeypatch.setenv("AWS_MAX_ATTEMPTS", "1")
    base_session.cache_clear()
    bench.clients = Clients.for_settings(bench.settings)
    first, second = bench.add_finding(), bench.add_finding(factories.finding("summarizer-g5", instance_count=2))
    for _ in range(3):
        aws.inject_fault("batch", "SubmitJob", "TooManyRequestsException", "Too Many Requests", times=100, status=429)
        report = bench.dispatch()
        aws.clear_faults()
        # Then nothing is stored as a failed attempt: every submission is deferred with its reason
        assert report.submitted == [] and report.deferred
        assert all("TooManyRequests" in d.reason for d in report.deferred)
        assert bench.runs() == []
    # When Batch is back
    report = bench.dispatch()
    # Then every job is submitted, each as attempt 1
    runs = bench.runs()
    assert report.deferred == [] and {r.finding_id for r in runs} == {first.id, second.id}
    assert {r.status for r in runs} == {"submitted"} and {r.attempt for r in runs} == {1}
