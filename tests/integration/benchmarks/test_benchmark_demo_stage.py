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
    # When modelled on one inf2.xlarge: Mistral-7B (15.65 GiB with its cache) fits one chip on both sides, and
    # generation is bound by memory bandwidth: Inferentia2 820 GB/s against the A10G's 600 GB/s
    from chipwise.catalog import get_catalog

    catalog = get_catalog()
    on_inf2 = STAGE.serving_on(catalog.require("inf2.xlarge"), Decimal("15.65"), "text-generation")
    on_g5 = STAGE.serving_on(catalog.require("ml.g5.2xlarge"), Decimal("15.65"), "text-generation")
    assert (on_inf2.replicas, on_inf2.chips_per_replica, on_g5.replicas, on_g5.chips_per_replica) == (1, 1, 1, 1)
    more, slower = STAGE.capacity_scale(on_inf2, on_g5)
    assert more == Decimal(820) / Decimal(600) and slower == Decimal(600) / Decimal(820)
    # (not the rules' inferentia2_inference_throughput_ratio of 2.0: the measurement can differ from the estimate)
    assert more != STAGE.get_assumptions().inferentia2_inference_throughput_ratio.value
    # Then the serving batch measures today's × 1.37 × the demo factor 0.85 at p95 70 ms × 0.73 ÷ 0.85
    params = factories.parameters(sequence_lengths=(512,))
    capacity = today * more * STAGE.DEMO_MEASUREMENT_FACTOR
    measured = STAGE.inference_measurements(params, capacity, Decimal(70) * slower / STAGE.DEMO_MEASUREMENT_FACTOR)
    serving = next(m for m in measured if m.batch_size == 8)
    assert serving.requests_per_second == Decimal("10.3") and serving.latency_p95_ms == Decimal("60.3")
    beyond = next(m for m in measured if m.batch_size == 16)
    assert beyond.requests_per_second == serving.requests_per_second and beyond.latency_p95_ms == Decimal("120.5")
    # Neuron to Neuron by replicas: a 70B model (168 GiB) spans 6 chips of 32 GiB: 2 replicas on a trn1.32xlarge,
    # 1 on an inf2.24xlarge (half the capacity, the same latency); a 48 GiB model on inf2.48xlarge -> 24xlarge
    trn1 = STAGE.serving_on(catalog.require("trn1.32xlarge"), Decimal(168), "text-generation")
    inf2 = STAGE.serving_on(catalog.require("inf2.24xlarge"), Decimal(168), "text-generation")
    assert (trn1.replicas, trn1.chips_per_replica, inf2.replicas) == (2, 6, 1)
    assert STAGE.capacity_scale(inf2, trn1) == (Decimal("0.5"), Decimal(1))
    big, small = (
        STAGE.serving_on(catalog.require(t), Decimal(48), "text-generation") for t in ("inf2.48xlarge", "inf2.24xlarge")
    )
    assert STAGE.capacity_scale(small, big) == (Decimal("0.5"), Decimal(1))
    # an encoder is bound by compute instead (dense BF16: 190 TFLOPS a Neuron chip against the L4's 121)
    encoder = STAGE.serving_on(catalog.require("inf2.xlarge"), Decimal("0.25"), "token-classification")
    assert encoder.per_chip == Decimal(190)
