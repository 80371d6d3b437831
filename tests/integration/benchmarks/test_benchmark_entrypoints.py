"""The ways in: the two Lambda handlers with the sample events, the CLI, a paired GPU baseline, a training
finding, and a job whose run row was lost."""

from __future__ import annotations

import importlib.util
import json
from decimal import Decimal
from pathlib import Path
from types import ModuleType
from typing import Any

import benchmark_factories as factories
import pytest
from bench_harness import Bench

from chipwise.benchmarks.jobs import JobDefinitions, JobLabels, submit_job
from chipwise.catalog import get_catalog
from chipwise.cli import main
from chipwise.presentation import exclusion, headline
from chipwise.store.repositories.findings import finding_document
from chipwise_devkit.batch import job_state_event

ROOT = Path(__file__).resolve().parents[3]


def _handler(function: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(f"{function}_app", ROOT / "functions" / function / "app.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


# --- the Lambda handlers ---------------------------------------------------------------------------------------


def test_the_dispatch_lambda_benchmarks_the_scanned_account(bench: Bench, lambda_context: Any) -> None:
    # Given an eligible finding in the scanned account
    finding = bench.add_finding()
    # When the ScanCompleted sample event reaches the Lambda
    response = _handler("benchmark_dispatch").handler(
        factories.sample_event("benchmark_dispatch/scan_completed"), lambda_context
    )
    # Then the finding's job is submitted
    assert response["status"] == "dispatched" and response["submitted"] == 1
    (run,) = bench.runs(finding.id)
    assert response["run_ids"] == [run.id]


def test_the_dispatch_lambda_rejects_a_malformed_event(bench: Bench, lambda_context: Any) -> None:
    # Given an eligible finding and a ScanCompleted event without its account
    bench.add_finding()
    # When the Lambda gets it
    response = _handler("benchmark_dispatch").handler(
        factories.sample_event("benchmark_dispatch/malformed"), lambda_context
    )
    # Then it is rejected with the reason, and nothing is submitted
    assert response["status"] == "rejected" and "account_id" in response["reason"]
    assert bench.runs() == []


def test_a_failed_scan_dispatches_nothing(bench: Bench, lambda_context: Any) -> None:
    # Given an eligible finding and a failed scan
    bench.add_finding()
    event = factories.sample_event("benchmark_dispatch/scan_completed")
    event["detail"]["status"] = "failed"
    # When the ScanCompleted event arrives
    response = _handler("benchmark_dispatch").handler(event, lambda_context)
    # Then nothing is dispatched (the findings are stale)
    assert response["status"] == "skipped" and bench.runs() == []


def test_the_result_lambda_records_a_state_change(bench: Bench, lambda_context: Any) -> None:
    # Given a submitted run whose job wrote its result
    finding = bench.add_finding()
    bench.dispatch()
    (run,) = bench.runs(finding.id)
    bench.write_result(run)
    # When the Lambda gets the SUCCEEDED event
    response = _handler("benchmark_result").handler(bench.event(run), lambda_context)
    # Then the recommendation is re-priced
    assert response["status"] == "recorded" and response["verdict"] == "confirmed"
    assert bench.finding(finding.id).measured_monthly_savings_usd == Decimal("3701.10")


def test_the_result_lambda_rejects_a_malformed_event_without_raising(bench: Bench, lambda_context: Any) -> None:
    # When the Lambda gets the malformed sample event
    response = _handler("benchmark_result").handler(
        factories.sample_event("benchmark_result/malformed"), lambda_context
    )
    # Then it is rejected with the reason (no exception: a retry would not help)
    assert response["status"] == "rejected"
    assert "jobId" in response["reason"] and "status" in response["reason"]


@pytest.mark.parametrize("sample", ["succeeded", "failed", "timed_out", "running"])
def test_the_result_lambda_ignores_jobs_chipwise_does_not_know(bench: Bench, lambda_context: Any, sample: str) -> None:
    # Given the sample events, whose finding is not in this store
    response = _handler("benchmark_result").handler(
        factories.sample_event(f"benchmark_result/{sample}"), lambda_context
    )
    # Then nothing is recorded
    assert response["status"] == "ignored" and bench.runs() == []


# --- a job without a run row ---------------------------------------------------------------------------------


def test_a_job_whose_run_row_was_lost_is_adopted_from_its_tags(bench: Bench) -> None:
    # Given a job submitted for a finding, but no run stored (the write failed after SubmitJob)
    finding = bench.add_finding()
    params = factories.parameters(finding.id)
    instance = get_catalog().require("inf2.xlarge")
    job_id = submit_job(
        bench.clients.batch,
        queue="chipwise-bench-inf2",
        definition_arn=JobDefinitions(bench.clients.batch, bench.settings).arn_for(instance, "target"),
        parameters=params,
        labels=JobLabels(rule_id=finding.rule_id, account_id=finding.account_id, attempt=1),
    )
    (job,) = bench.clients.batch.describe_jobs(jobs=[job_id])["jobs"]
    bench.clients.s3.put_object(
        Bucket="chipwise-artifacts",
        Key=f"benchmarks/{params.run_id}/result.json",
        Body=factories.result(params).model_dump_json().encode(),
    )
    # When its SUCCEEDED event arrives
    outcome = bench.deliver(job_state_event(dict(job)))
    # Then the run is stored from the job's tags and parameters, and priced
    assert (outcome.status, outcome.run_id, outcome.verdict) == ("recorded", params.run_id, "confirmed")
    assert bench.run(params.run_id).job_id == job_id


# --- a paired GPU baseline and a training finding ----------------------------------------------------------------


def test_a_gpu_baseline_run_is_paired_and_prices_against_the_right_sized_gpu(bench_with_baseline: Bench) -> None:
    bench = bench_with_baseline
    # Given chat-mistral-g5 and a GPU baseline queue
    finding = bench.add_finding()
    # When dispatched
    report = bench.dispatch()
    # Then two jobs: the target on inf2, the baseline on the GPU queue asking for its GPU
    roles = {s.role: s for s in report.submitted}
    assert set(roles) == {"target", "gpu_baseline"}
    baseline_run = bench.run(roles["gpu_baseline"].run_id)
    job = bench.job(baseline_run)
    assert job["jobQueue"].endswith(":job-queue/chipwise-bench-gpu")
    (definition,) = bench.clients.batch.describe_job_definitions(jobDefinitions=[job["jobDefinition"]])[
        "jobDefinitions"
    ]
    assert {"type": "GPU", "value": "1"} in definition["containerProperties"]["resourceRequirements"]
    # When the target finishes first, the re-pricing waits for the baseline
    target_run = bench.run(roles["target"].run_id)
    bench.write_result(target_run)
    assert bench.deliver(bench.event(target_run)).verdict is None
    assert bench.recommendations(finding.id) == []
    # and when the baseline (20 req/s within the latency limit) succeeds, both are priced together
    bench.write_result(baseline_run, [factories.measurement(1, "10.0", "60"), factories.measurement(4, "20.0", "75")])
    outcome = bench.deliver(bench.event(baseline_run))
    assert outcome.verdict == "confirmed"
    (recommendation,) = bench.recommendations(finding.id)
    # the right-sized GPU fleet: ceil(26.4 × 1.3 ÷ 20) = 2 × $1.515 × 730 = $2,211.90; Inferentia $722.70
    assert recommendation.monthly_savings_usd == Decimal("1489.20")
    measured = bench.run(target_run.id).measured
    assert measured is not None and measured["current_basis"] == "gpu_baseline"
    # like for like per request: 1 − ($0.99 ÷ 40.5) ÷ ($1.515 ÷ 20) = 67.73 % cheaper, inside GPU → Inferentia's
    # published 40–50 % widened by 25 points (15–75 %)
    assert measured["measured_saving_fraction"] == "0.6773"
    assert (measured["plausible_low"], measured["plausible_high"]) == ("0.15", "0.75")


def test_a_measurement_outside_its_plausible_range_needs_review(bench_with_baseline: Bench) -> None:
    bench = bench_with_baseline
    # Given chat-mistral-g5 benchmarked with a GPU baseline that serves only 12 req/s against inf2's 40.5
    finding = bench.add_finding()
    roles = {s.role: s for s in bench.dispatch().submitted}
    target_run, baseline_run = bench.run(roles["target"].run_id), bench.run(roles["gpu_baseline"].run_id)
    bench.write_result(target_run)
    bench.deliver(bench.event(target_run))
    bench.write_result(baseline_run, [factories.measurement(1, "6.0", "60"), factories.measurement(4, "12.0", "75")])
    # When the baseline's result arrives: 1 − ($0.99 ÷ 40.5) ÷ ($1.515 ÷ 12) = 80.64 % cheaper per request
    outcome = bench.deliver(bench.event(baseline_run))
    # Then it is not confirmed: it needs review, saying why, and stays out of the measured totals
    assert outcome.verdict == "needs_review"
    measured = bench.run(target_run.id).measured
    assert measured is not None and measured["measured_saving_fraction"] == "0.8064"
    assert "80.64 % cheaper per unit of work is outside the plausible 15.00 % to 75.00 %" in measured["reason"]
    updated = bench.finding(finding.id)
    assert updated.measured_monthly_savings_usd is None
    assert updated.evidence["benchmark"]["status"] == "needs_review"
    (recommendation,) = bench.recommendations(finding.id)
    assert recommendation.monthly_savings_usd is None and recommendation.confidence == "low"
    document = finding_document(updated)
    assert exclusion(document) == "needs_review"
    totals = headline([document])
    assert (totals.total_usd, totals.counted, totals.needs_review) == (Decimal(0), 0, 1)


def test_a_baseline_that_gives_up_lets_the_target_be_priced_on_the_bill(bench_with_baseline: Bench) -> None:
    bench = bench_with_baseline
    bench.settings = bench.settings.model_copy(update={"benchmark_max_attempts": 1})
    finding = bench.add_finding()
    report = bench.dispatch()
    runs = {s.role: bench.run(s.run_id) for s in report.submitted}
    bench.write_result(runs["target"])
    bench.deliver(bench.event(runs["target"]))
    # When the only baseline attempt fails
    bench.deliver(bench.failed_event(runs["gpu_baseline"]))
    # Then the target is priced against today's bill
    (recommendation,) = bench.recommendations(finding.id)
    assert recommendation.monthly_savings_usd == Decimal("3701.10")


def test_a_training_finding_is_priced_per_trained_model(bench: Bench) -> None:
    # Given a GPU fine-tune observed at 10,000 tokens/s per instance
    finding = bench.add_finding(
        factories.training_finding(evidence={"run_hours": 100, "observed_tokens_per_second": 10000}),
        factories.resource(
            "llama3-8b-finetune",
            arn=factories.training_finding().resource_arn,
            kind="sagemaker_training_job",
            instance_type="ml.p4d.24xlarge",
            hints={"model_family": "llama", "hf_model_id": "meta-llama/Meta-Llama-3-8B", "workload": "training"},
        ),
    )
    bench.dispatch()
    (run,) = bench.runs(finding.id)
    assert run.job_queue == "chipwise-bench-trn1"
    # When the trn1.32xlarge run measures 16,000 tokens/s
    bench.write_result(run, [factories.measurement(8, "7.8", "2100", tps="16000", seq=2048, out=0)])
    outcome = bench.deliver(bench.event(run))
    # Then: ml.trn1.32xlarge $28.497/h (verified) vs the job's own bill: ml.p4d.24xlarge has no public price, so
    # $5,000 over 2 instances x 100 h = $25.00/h; per 1M tokens the month's work costs less on Trainium
    assert outcome.verdict == "confirmed"
    measured = bench.run(run.id).measured
    assert measured is not None
    assert measured["cost_per_million_usd"] == "0.4947"  # 1e6 ÷ 16000 × 28.497 ÷ 3600
    assert measured["current_cost_per_million_usd"] == "0.6944"  # 1e6 ÷ 10000 × 25.00 ÷ 3600
    assert measured["current_dollars_per_run_usd"] == "5000.00"  # 100 h × 2 × 25.00
    (recommendation,) = bench.recommendations(finding.id)
    assert recommendation.monthly_savings_usd == Decimal("1437.88")  # 5000 × (1 − 0.4947396 ÷ 0.6944444)


# --- the CLI -------------------------------------------------------------------------------------------------------


def test_submit_dry_run_prints_the_plan_and_touches_nothing(bench: Bench, capsys: pytest.CaptureFixture[str]) -> None:
    # Given an eligible finding
    finding = bench.add_finding()
    # When `chipwise benchmarks submit --dry-run --json` runs
    assert main(["benchmarks", "submit", "--dry-run", "--json"]) == 0
    # Then the plan is printed and neither the store nor Batch changed
    plan = json.loads(capsys.readouterr().out)
    assert plan["dry_run"] is True and plan["submitted"] == []
    (planned,) = plan["planned"]
    assert planned["finding_id"] == finding.id and planned["job_queue"] == "chipwise-bench-inf2"
    assert planned["parameters"]["instance_type"] == "inf2.xlarge"
    assert bench.runs() == []
    assert bench.clients.batch.list_jobs(jobQueue="chipwise-bench-inf2")["jobSummaryList"] == []


def test_submit_list_and_show(bench: Bench, capsys: pytest.CaptureFixture[str]) -> None:
    # Given one finding submitted through the CLI and measured
    finding = bench.add_finding()
    assert main(["benchmarks", "submit", "--account", factories.ACCOUNT_ID]) == 0
    assert "Submitted (1)" in capsys.readouterr().out
    (run,) = bench.runs(finding.id)
    bench.write_result(run)
    bench.deliver(bench.event(run))
    # When the runs are listed and the run shown
    assert main(["benchmarks", "list", "--json"]) == 0
    (listed,) = json.loads(capsys.readouterr().out)
    assert main(["benchmarks", "show", run.id]) == 0
    shown = capsys.readouterr().out
    # Then they show the measurement
    assert listed["run_id"] == run.id and listed["status"] == "succeeded"
    assert "confirmed" in shown and "40.5" in shown and "recommended" in shown
    assert main(["benchmarks", "list"]) == 0
    assert "saves" in capsys.readouterr().out
    assert listed["measured"]["monthly_savings_usd"] == "3701.10"


def test_show_an_unknown_run_is_one_line(bench: Bench, capsys: pytest.CaptureFixture[str]) -> None:
    # When an unknown run is shown, Then the command fails with one line
    assert main(["benchmarks", "show", "nope"]) == 1
    err = capsys.readouterr().err
    assert "no benchmark run 'nope'" in err and "Traceback" not in err


def test_list_rejects_an_unknown_status(bench: Bench, capsys: pytest.CaptureFixture[str]) -> None:
    # When the status filter is not a run status, Then the command names the valid ones
    assert main(["benchmarks", "list", "--status", "done"]) == 1
    assert "use one of submitted, running, succeeded, failed, expired" in capsys.readouterr().err
