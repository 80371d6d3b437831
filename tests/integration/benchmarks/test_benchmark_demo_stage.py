"""The demo's benchmark stage on findings like the ones the rules store for the demo account: jobs on the
emulated queues, result files, state events, one retry, and benchmarks.md with estimate versus measurement."""

from __future__ import annotations

import importlib
from decimal import Decimal
from pathlib import Path
from typing import Any

import benchmark_factories as factories
from bench_harness import Bench
from rich.console import Console

from chipwise.models.benchmark import BenchmarkResult
from chipwise_devkit.demo.runner import DemoContext

STAGE = importlib.import_module("chipwise_devkit.demo.stages.40_benchmarks")


def _demo_findings(bench: Bench) -> dict[str, Any]:
    """Migration findings for demo resources, with the estimates and evidence a rules run would give."""
    llama_70b = factories.finding(
        "llama-70b-trn1-serving",
        rule_id="trainium_serving_inference",
        instance_type="ml.trn1.32xlarge",
        instance_count=1,
        monthly_cost_usd=Decimal("18834.00"),  # 25.80 × 730
        estimated_monthly_savings_usd=Decimal("7460.60"),
        recommendation={
            "action": "migrate",
            "target_platform": "inferentia",
            "target_instance_type": "ml.inf2.48xlarge",
            "target_count": 1,
        },
        evidence={"requests_per_hour": 21600, "peak_requests_per_hour": 28080, "latency_p95_ms": 900},
    )
    summarizer = factories.finding(
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
        evidence={"requests_per_hour": 10800, "peak_requests_per_hour": 14040, "latency_p95_ms": 450},
    )
    bert = factories.finding(
        "bert-ner-g6",
        recommendation={
            "action": "migrate",
            "target_platform": "inferentia",
            "target_instance_type": "ml.inf1.xlarge",
            "target_count": 1,
        },
    )
    findings = {
        "chat-mistral-g5": bench.add_finding(),
        "llama-70b-trn1-serving": bench.add_finding(
            llama_70b,
            factories.resource(
                "llama-70b-trn1-serving",
                instance_type="ml.trn1.32xlarge",
                platform="trainium",
                hints={
                    "model_family": "llama",
                    "hf_model_id": "meta-llama/Llama-3.1-70B-Instruct",
                    "serving_stack": "tgi",
                },
            ),
        ),
        "summarizer-inf2-48xl": bench.add_finding(
            summarizer,
            factories.resource(
                "summarizer-inf2-48xl",
                instance_type="ml.inf2.48xlarge",
                platform="inferentia",
                hints={
                    "model_family": "llama",
                    "hf_model_id": "meta-llama/Llama-3.1-8B-Instruct",
                    "serving_stack": "djl",
                },
            ),
        ),
        "bert-ner-g6": bench.add_finding(bert, factories.resource("bert-ner-g6", hints={"model_family": "bert"})),
    }
    return findings


def test_the_demo_stage_benchmarks_the_migration_findings(bench: Bench, aws: Any, tmp_path: Path) -> None:
    # Given the demo account's migration findings (as the rules stage stores them)
    findings = _demo_findings(bench)
    ctx = DemoContext(out_dir=tmp_path, database_url=bench.url, emulator=aws, console=Console(quiet=True))
    # When the benchmark stage runs
    STAGE.STAGE.run(ctx)
    # Then every Neuron target was benchmarked (chat-mistral-g5 with a paired GPU baseline), inf1 skipped
    runs = bench.runs()
    assert {(bench.finding(r.finding_id).resource_name, r.role) for r in runs} == {
        ("chat-mistral-g5", "target"),
        ("chat-mistral-g5", "gpu_baseline"),
        ("llama-70b-trn1-serving", "target"),
        ("summarizer-inf2-48xl", "target"),
    }
    # one job was lost with its host and retried
    assert sum(1 for r in runs if r.status == "failed" and r.failure_reason and "terminated" in r.failure_reason) == 1
    assert all(r.status == "succeeded" for r in runs if not r.failure_reason)
    # every result file is one the job could have written
    for run in runs:
        if run.result:
            BenchmarkResult.model_validate(run.result)
    # the measurements replaced the estimates
    for name in ("chat-mistral-g5", "llama-70b-trn1-serving", "summarizer-inf2-48xl"):
        finding = bench.finding(findings[name].id)
        assert finding.confidence == "high", name
        assert finding.evidence["benchmark"]["status"] in ("measured", "withdrawn"), name
        assert len(bench.recommendations(finding.id)) == 1
    # and benchmarks.md compares estimate and measurement, with the skipped finding and why
    report = (tmp_path / "benchmarks.md").read_text()
    assert "| chat-mistral-g5 | GPU inference portable to Inferentia | ml.inf2.xlarge | $2,978.40 |" in report
    assert "(the GPU baseline run needs as many)" in report and "after 1 failed attempt" in report
    # (the demo has an inf1 queue: the recommended family's; ml.inf1.xlarge has no cited price, so no measurement
    # could be priced, and it is never measured on inf2 instead)
    skipped = "bert-ner-g6 (GPU inference portable to Inferentia, target): no on-demand price for ml.inf1.xlarge"
    assert skipped in report
    (label, line) = ctx.summary[-1]
    assert label == "Benchmarks" and line.startswith("5 jobs on 2 emulated Batch queues for 3 findings (1 retried")


def test_the_demo_measurements_follow_the_documented_derivation() -> None:
    # Given chat-mistral-g5: 22 req/s over 4 ml.g5.2xlarge at 62 % GPU -> 8.87 req/s each today
    spec = next(r for r in STAGE.demo_resources() if r.name == "chat-mistral-g5")
    today = STAGE.today_capacity(spec)
    assert today.quantize(Decimal("0.01")) == Decimal("8.87")
    # When scaled to one inf2.xlarge (1 chip vs 1 GPU, inf2/GPU ratio 2.0 in assumptions.json)
    from chipwise.catalog import get_catalog

    catalog = get_catalog()
    scale = STAGE.capacity_scale(catalog.require("inf2.xlarge"), catalog.require("ml.g5.2xlarge"))
    assert scale == Decimal("2.0")
    # Then the serving batch measures today's × 2.0 × the demo factor 0.85 at p95 70 ms × 1.15
    params = factories.parameters(sequence_lengths=(512,))
    measured = STAGE.inference_measurements(params, today * scale * STAGE.DEMO_MEASUREMENT_FACTOR, Decimal("80.5"))
    serving = next(m for m in measured if m.batch_size == 8)
    assert serving.requests_per_second == Decimal("15.1") and serving.latency_p95_ms == Decimal("80.5")
    assert serving.tokens_per_second == Decimal("1930.3")  # 15.0806 req/s × 128 tokens a request
    beyond = next(m for m in measured if m.batch_size == 16)
    assert beyond.requests_per_second == serving.requests_per_second and beyond.latency_p95_ms == Decimal("161.0")
    # Neuron to Neuron scales by NeuronCores: inf2.48xlarge (24) -> inf2.24xlarge (12)
    assert STAGE.capacity_scale(catalog.require("inf2.24xlarge"), catalog.require("inf2.48xlarge")) == Decimal("0.5")
