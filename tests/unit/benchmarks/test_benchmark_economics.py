"""The economics of a measurement, against hand-computed figures (and the published ones in assumptions.json)."""

from __future__ import annotations

from decimal import Decimal

import pytest
from benchmark_factories import measurement, parameters, result

from chipwise.benchmarks.repricing import (
    Current,
    Demand,
    RepricingPolicy,
    Target,
    best_within,
    price_inference,
    price_training,
)
from chipwise.catalog import get_assumptions, get_catalog
from chipwise.economics import cost_per_million, instances_needed, monthly_cost
from chipwise.models.benchmark import Measurement

NO_HEADROOM = RepricingPolicy(headroom=Decimal(1), latency_tolerance=Decimal("1.2"))
POLICY = RepricingPolicy(headroom=Decimal("1.3"), latency_tolerance=Decimal("1.2"))
# chat-mistral-g5 today: 4 × ml.g5.2xlarge at $1.515/h; 22 req/s on average, 26.4 at peak, p95 70 ms
MISTRAL_TODAY = Current("ml.g5.2xlarge", 4, Decimal("1.515"), Decimal("4423.80"))
MISTRAL_DEMAND = Demand("requests", Decimal("26.4"), Decimal(22), Decimal(70), "evidence")
INF2_XLARGE_SAGEMAKER = Target("ml.inf2.xlarge", Decimal("0.99"))


def within(actual: Decimal, expected: Decimal, tolerance: Decimal) -> bool:
    return abs(actual - expected) <= expected * tolerance


# --- cost per million -------------------------------------------------------------------------------------------


def test_neurons_published_example_inf2_48xlarge_at_649_tokens_per_second() -> None:
    # Given an inf2.48xlarge at $12.98/h producing 649 tokens/s (Neuron's published example)
    # When the cost of a million tokens is computed
    cost = cost_per_million(Decimal("12.98"), Decimal(649))
    # Then it is ≈ $5.56 (1e6 ÷ 649 × 12.98 ÷ 3600 = 5.5556)
    assert cost.quantize(Decimal("0.01")) == Decimal("5.56")
    assert cost.quantize(Decimal("0.0001")) == Decimal("5.5556")


def test_the_catalog_price_of_inf2_48xlarge_gives_the_same_figure() -> None:
    # Given the catalog's exact on-demand price (12.98127)
    price = get_catalog().price("inf2.48xlarge")
    assert price is not None
    # When / Then
    assert cost_per_million(price, Decimal(649)).quantize(Decimal("0.01")) == Decimal("5.56")


def test_a_zero_throughput_cannot_be_priced() -> None:
    # When a throughput of zero is priced, Then it is refused (the cost would be unbounded)
    with pytest.raises(ValueError, match="positive"):
        cost_per_million(Decimal(1), Decimal(0))


@pytest.mark.parametrize(
    ("peak", "capacity", "headroom", "expected"),
    [
        (Decimal("115.74"), Decimal(20), Decimal(1), 6),  # 5.787 -> 6
        (Decimal("115.74"), Decimal(40), Decimal(1), 3),  # 2.894 -> 3
        (Decimal(40), Decimal(40), Decimal(1), 1),  # exactly full
        (Decimal(40), Decimal(40), Decimal("1.3"), 2),  # headroom pushes it over
        (Decimal("0.01"), Decimal(40), Decimal("1.3"), 1),  # never zero
    ],
)
def test_instances_needed(peak: Decimal, capacity: Decimal, headroom: Decimal, expected: int) -> None:
    # When the peak is divided by the capacity with headroom, Then the count is rounded up, never zero
    assert instances_needed(peak, capacity, headroom) == expected


def test_the_domains_worked_example_is_reproduced_within_its_tolerance() -> None:
    # Given the worked example: 10 M requests/day, g5.xlarge ~20 req/s vs inf2.xlarge ~40 req/s (assumptions.json)
    example = get_assumptions().worked_examples.inference_10m_requests_per_day
    catalog = get_catalog()
    gpu_price = catalog.price(example.gpu_instance_type)
    neuron_price = catalog.price(example.neuron_instance_type)
    assert gpu_price is not None and neuron_price is not None
    rate = example.requests_per_day / 86_400
    gpu_count = instances_needed(rate, example.gpu_requests_per_second, Decimal(1))
    today = Current(example.gpu_instance_type, gpu_count, gpu_price, monthly_cost(gpu_price, gpu_count))
    measured = result(
        parameters(instance_type="inf2.xlarge", priced_as="inf2.xlarge"),
        [measurement(8, str(example.neuron_requests_per_second), "50")],
    )
    # When the measurement is priced against today's fleet
    priced = price_inference(
        measured,
        demand=Demand("requests", rate, rate, None, "evidence"),
        current=today,
        target=Target(example.neuron_instance_type, neuron_price),
        policy=NO_HEADROOM,
    )
    # Then the counts match and the dollars are within the example's tolerance (it used ~723 h a month)
    assert (gpu_count, priced.target_count) == (example.expected_gpu_instances, example.expected_neuron_instances)
    assert priced.current_monthly_cost_usd == Decimal("4406.28")  # 6 × 1.006 × 730
    assert priced.target_monthly_cost_usd == Decimal("1660.46")  # 3 × 0.7582 × 730
    assert priced.monthly_savings_usd == Decimal("2745.82")
    assert within(priced.current_monthly_cost_usd, example.expected_gpu_monthly_usd, example.tolerance)
    assert within(priced.target_monthly_cost_usd, example.expected_neuron_monthly_usd, example.tolerance)
    assert within(priced.monthly_savings_usd, example.expected_monthly_saving_usd, example.tolerance)


# --- inference ------------------------------------------------------------------------------------------------------


def test_the_fastest_shape_within_the_latency_limit_sizes_the_target() -> None:
    # Given measurements at batch 1/4/8/16 (p95 71, 80.2, 131, 182 ms) and a limit of 70 ms × 1.2 = 84 ms
    measured = result(parameters())
    # When priced for 26.4 req/s at peak with 30 % headroom
    priced = price_inference(
        measured, demand=MISTRAL_DEMAND, current=MISTRAL_TODAY, target=INF2_XLARGE_SAGEMAKER, policy=POLICY
    )
    # Then batch 4 (40.5 req/s) is chosen: ceil(26.4 × 1.3 ÷ 40.5) = 1 instance at $0.99 × 730
    assert priced.verdict == "confirmed"
    assert priced.chosen is not None and priced.chosen.batch_size == 4
    assert priced.latency_limit_ms == Decimal("84.0000")
    assert priced.target_count == 1
    assert priced.target_monthly_cost_usd == Decimal("722.70")
    assert priced.monthly_savings_usd == Decimal("3701.10")  # 4423.80 - 722.70
    assert priced.cost_per_million_usd == Decimal("6.7901")  # 1e6 ÷ 40.5 × 0.99 ÷ 3600
    # 22 req/s × 3600 × 730 = 57.816 M requests a month
    assert priced.cost_per_million_at_traffic_usd == Decimal("12.5000")
    assert priced.current_cost_per_million_usd == Decimal("76.5152")
    assert priced.current_basis == "observed"


def test_tokens_are_used_when_the_traffic_is_in_tokens() -> None:
    # Given traffic of 20,000 generated tokens/s at peak
    demand = Demand("tokens", Decimal(20_000), Decimal(15_000), Decimal(70), "evidence")
    # When priced
    priced = price_inference(
        result(parameters()), demand=demand, current=MISTRAL_TODAY, target=INF2_XLARGE_SAGEMAKER, policy=POLICY
    )
    # Then batch 4's 5,184 tokens/s sizes the fleet: ceil(20000 × 1.3 ÷ 5184) = 6
    assert priced.unit == "tokens"
    assert priced.target_count == 6
    assert priced.cost_per_million_usd == Decimal("0.0530")  # 1e6 ÷ 5184 × 0.99 ÷ 3600


def test_a_target_that_misses_the_latency_target_is_withdrawn() -> None:
    # Given today's p95 of 50 ms (limit 60 ms) and no shape faster than 71 ms
    demand = Demand("requests", Decimal("26.4"), Decimal(22), Decimal(50), "evidence")
    # When priced
    priced = price_inference(
        result(parameters()), demand=demand, current=MISTRAL_TODAY, target=INF2_XLARGE_SAGEMAKER, policy=POLICY
    )
    # Then the recommendation is withdrawn, saying why
    assert priced.verdict == "withdrawn"
    assert "misses the latency target" in priced.reason and "71.0 ms" in priced.reason and "60" in priced.reason
    assert priced.monthly_savings_usd is None


def test_a_target_that_costs_more_than_today_is_withdrawn() -> None:
    # Given an endpoint that costs $500 a month today
    cheap = Current("ml.g5.2xlarge", 1, Decimal("0.6849"), Decimal("500"))
    demand = Demand("requests", Decimal(200), Decimal(150), None, "evidence")
    # When the measured fleet for 200 req/s at peak is priced (no latency target: the fastest shape, 88 req/s)
    priced = price_inference(
        result(parameters()), demand=demand, current=cheap, target=INF2_XLARGE_SAGEMAKER, policy=POLICY
    )
    # Then ceil(200 × 1.3 ÷ 88) = 3 instances cost $2,168.10 > $500: withdrawn
    assert priced.verdict == "withdrawn"
    assert priced.target_count == 3
    assert priced.monthly_savings_usd == Decimal("-1668.10")
    assert priced.reason.startswith("no saving")


def test_without_observed_traffic_the_estimate_stands() -> None:
    # When a result is priced without observed traffic
    priced = price_inference(
        result(parameters()), demand=None, current=MISTRAL_TODAY, target=INF2_XLARGE_SAGEMAKER, policy=POLICY
    )
    # Then nothing can be sized: the estimate stands, the cost per 1M is still reported
    assert priced.verdict == "inconclusive"
    assert priced.monthly_savings_usd is None
    assert priced.cost_per_million_usd == Decimal("3.1250")  # the fastest shape: 1e6 ÷ 88 × 0.99 ÷ 3600


def test_a_paired_gpu_baseline_replaces_an_oversized_bill() -> None:
    # Given a GPU baseline run measuring 12 req/s within the latency limit on ml.g5.2xlarge
    baseline = result(
        parameters(role="gpu_baseline", instance_type="g5.2xlarge", priced_as="ml.g5.2xlarge", runner="cuda"),
        [measurement(1, "6.0", "60"), measurement(4, "12.0", "75"), measurement(8, "18.0", "120")],
    )
    # When priced: the GPU sized the same way needs ceil(26.4 × 1.3 ÷ 12) = 3 instances (today: 4)
    priced = price_inference(
        result(parameters()),
        demand=MISTRAL_DEMAND,
        current=MISTRAL_TODAY,
        target=INF2_XLARGE_SAGEMAKER,
        policy=POLICY,
        baseline=baseline,
    )
    # Then the comparison is with the right-sized GPU: 3 × 1.515 × 730 = 3317.85
    assert priced.current_basis == "gpu_baseline"
    assert priced.current_monthly_cost_usd == Decimal("3317.85")
    assert priced.monthly_savings_usd == Decimal("2595.15")  # 3317.85 - 722.70


def test_best_within_prefers_throughput_then_latency() -> None:
    # Given two shapes with the same throughput and a faster, slower one
    shapes = [measurement(4, "40", "80"), measurement(8, "40", "70"), measurement(16, "90", "200")]
    # When / Then: the faster of equals within the limit; the fastest without one; none when nothing fits
    assert best_within(shapes, "requests", Decimal(100)) == shapes[1]
    assert best_within(shapes, "requests", None) == shapes[2]
    assert best_within(shapes, "tokens", None) is None  # nothing measured in tokens
    assert best_within(shapes, "requests", Decimal(10)) is None


# --- training -------------------------------------------------------------------------------------------------------

TRN1 = Target("trn1.32xlarge", Decimal("21.50"))
P4D_TODAY = Current("p4d.24xlarge", 2, Decimal("21.957642"), Decimal("5000"), run_hours=Decimal(100))


def _training(tokens_per_second: str) -> list[Measurement]:
    """One training shape: 8 × 2048-token samples a step."""
    return [measurement(8, "4", "2000", tps=tokens_per_second, seq=2048, out=0)]


def test_training_is_priced_per_trained_model_against_the_gpu_baseline() -> None:
    # Given 16,000 tokens/s on trn1.32xlarge ($21.50/h) and 10,000 on p4d.24xlarge ($21.957642/h)
    trn = result(
        parameters(task="training", instance_type="trn1.32xlarge", priced_as="trn1.32xlarge"), _training("16000")
    )
    gpu = result(
        parameters(
            task="training", role="gpu_baseline", instance_type="p4d.24xlarge", priced_as="p4d.24xlarge", runner="cuda"
        ),
        _training("10000"),
    )
    # When priced
    priced = price_training(trn, current=P4D_TODAY, target=TRN1, baseline=gpu)
    # Then $/1M tokens: 1e6 ÷ 16000 × 21.50 ÷ 3600 = 0.3733 vs 1e6 ÷ 10000 × 21.957642 ÷ 3600 = 0.6099
    assert priced.verdict == "confirmed"
    assert (priced.cost_per_million_usd, priced.current_cost_per_million_usd) == (Decimal("0.3733"), Decimal("0.6099"))
    # the same work costs 5000 × 0.61197... = 3059.87 a month
    assert priced.target_monthly_cost_usd == Decimal("3059.87")
    assert priced.monthly_savings_usd == Decimal("1940.13")
    # one 100 h run on 2 × p4d: $4,391.53 today, $2,687.50 on Trainium (the same tokens at 16,000/s)
    assert priced.current_dollars_per_run_usd == Decimal("4391.53")
    assert priced.dollars_per_run_usd == Decimal("2687.50")
    assert priced.target_count == 2  # ceil(2 × 10000 ÷ 16000): the same time to train
    assert priced.current_basis == "gpu_baseline"
    # the measured time to train on 2 × trn1: 2 × 10000 ÷ (2 × 16000) = 0.63 × today's
    assert priced.time_to_train_ratio == Decimal("0.63")
    assert priced.reason == "38.80 % less per trained model on 2 × trn1.32xlarge, 0.63 × today's time to train"


def test_training_is_measured_at_the_recommended_count_not_one_of_its_own() -> None:
    # Given the recommendation moves the 2 × p4d job to 1 × trn1.32xlarge
    trn = result(
        parameters(task="training", instance_type="trn1.32xlarge", priced_as="trn1.32xlarge"), _training("16000")
    )
    gpu = result(
        parameters(
            task="training", role="gpu_baseline", instance_type="p4d.24xlarge", priced_as="p4d.24xlarge", runner="cuda"
        ),
        _training("10000"),
    )
    priced = price_training(trn, current=P4D_TODAY, target=TRN1, baseline=gpu, recommended_count=1)
    # Then the result speaks of 1 instance, and the time to train it measured: 2 × 10000 ÷ 16000 = 1.25 × today's
    assert (priced.target_count, priced.time_to_train_ratio) == (1, Decimal("1.25"))
    assert "on 1 × trn1.32xlarge, 1.25 × today's time to train" in priced.reason
    # the saving per trained model does not depend on the count: the measured $/1M tokens decide it
    assert priced.monthly_savings_usd == Decimal("1940.13")


def test_the_worked_training_example_costs_2196_dollars() -> None:
    # Given the worked example: a 7B model for 100 h on one p4d.24xlarge
    example = get_assumptions().worked_examples.training_7b_100h_p4d
    price = get_catalog().price(example.instance_type)
    assert price is not None
    today = Current(example.instance_type, 1, price, price * example.hours, run_hours=example.hours)
    # When a run twice as fast per dollar is priced against the observed throughput
    trn = result(
        parameters(task="training", instance_type="trn1.32xlarge", priced_as="trn1.32xlarge"), _training("2000")
    )
    priced = price_training(trn, current=today, target=TRN1, observed_tokens_per_second=Decimal(1000))
    # Then today's run costs the example's $2,196 (100 × 21.957642)
    assert priced.current_dollars_per_run_usd == Decimal("2195.76")
    assert within(priced.current_dollars_per_run_usd, example.expected_cost_usd, example.tolerance)
    # and the run on trn1: 100 h of work at twice the speed, at $21.50/h = $1,075.00
    assert priced.dollars_per_run_usd == Decimal("1075.00")
    assert priced.current_basis == "observed"


def test_a_slower_per_dollar_training_run_is_withdrawn() -> None:
    # Given 8,000 tokens/s on trn1.32xlarge against 10,000 observed on p4d.24xlarge at a similar price
    trn = result(
        parameters(task="training", instance_type="trn1.32xlarge", priced_as="trn1.32xlarge"), _training("8000")
    )
    # When priced
    priced = price_training(trn, current=P4D_TODAY, target=TRN1, observed_tokens_per_second=Decimal(10_000))
    # Then it costs more per trained model: withdrawn
    assert priced.verdict == "withdrawn"
    assert priced.monthly_savings_usd is not None and priced.monthly_savings_usd < 0
    assert "more per trained model" in priced.reason


def test_training_without_a_gpu_throughput_is_inconclusive() -> None:
    # Given a Trainium measurement and no GPU throughput (no baseline run, nothing observed)
    trn = result(
        parameters(task="training", instance_type="trn1.32xlarge", priced_as="trn1.32xlarge"), _training("16000")
    )
    # When priced
    priced = price_training(trn, current=P4D_TODAY, target=TRN1)
    # Then the estimate stands, saying how to get a baseline
    assert priced.verdict == "inconclusive"
    assert "gpu_baseline" in priced.reason
    assert priced.cost_per_million_usd == Decimal("0.3733")


def _swept(concurrency: int, rps: str, p95: str) -> Measurement:
    return Measurement(
        batch_size=1,
        sequence_length=512,
        output_tokens=128,
        requests_per_second=Decimal(rps),
        latency_p50_ms=Decimal(p95) * Decimal("0.8"),
        latency_p95_ms=Decimal(p95),
        latency_p99_ms=Decimal(p95) * Decimal("1.1"),
        ttft_p50_ms=Decimal(30),
        ttft_p99_ms=Decimal(45),
        tpot_p50_ms=Decimal(2),
        tpot_p99_ms=Decimal(3),
        error_rate=Decimal(0),
        iterations=64,
        concurrency=concurrency,
    )


def test_an_slo_sized_result_prices_its_instance_count() -> None:
    # Given a run that swept concurrency 1/4/8 (11, 30 and 44 req/s at p95 60, 78 and 95 ms) and sized the target
    # for today's peak of 26.4 req/s at a p95 target of 84 ms: concurrency 4 (30 req/s) -> ceil(26.4 / 30) = 1
    from chipwise.models.benchmark import size_for_slo

    sweep = [_swept(1, "11", "60"), _swept(4, "30", "78"), _swept(8, "44", "95")]
    slo = size_for_slo(sweep, latency_target_ms=Decimal(84), peak_requests_per_second=Decimal("26.4"))
    assert (slo.met, slo.concurrency, slo.instances) == (True, 4, 1)
    # And at a peak of 95 req/s: ceil(95 / 30) = 4 instances (the headroom rule would have said ceil(95 x 1.3 / 30))
    busier = size_for_slo(sweep, latency_target_ms=Decimal(84), peak_requests_per_second=Decimal(95))
    assert busier.instances == 4
    measured = result(parameters(), sweep).model_copy(update={"slo": busier})
    demand = Demand("requests", Decimal(95), Decimal(60), Decimal(70), "evidence")
    today = Current("ml.g5.2xlarge", 12, Decimal("1.515"), Decimal("13271.40"))
    # When priced
    priced = price_inference(measured, demand=demand, current=today, target=INF2_XLARGE_SAGEMAKER, policy=POLICY)
    # Then the saving uses the SLO count: 4 x $0.99 x 730 = $2,890.80; 13,271.40 - 2,890.80 = $10,380.60
    assert priced.sizing == "slo"
    assert priced.target_count == 4
    assert priced.target_monthly_cost_usd == Decimal("2890.80")
    assert priced.monthly_savings_usd == Decimal("10380.60")
    assert priced.chosen is not None and priced.chosen.concurrency == 4
    assert priced.chosen.ttft_p99_ms == Decimal(45) and priced.chosen.latency_p99_ms == Decimal("85.8")
    assert "SLO sweep" in priced.reason


def test_no_concurrency_level_within_the_target_withdraws_the_move() -> None:
    from chipwise.models.benchmark import size_for_slo

    sweep = [_swept(1, "11", "90"), _swept(4, "30", "120")]
    slo = size_for_slo(sweep, latency_target_ms=Decimal(84), peak_requests_per_second=Decimal(10))
    assert not slo.met and slo.instances is None and "90" in slo.reason
    measured = result(parameters(), sweep).model_copy(update={"slo": slo})
    priced = price_inference(
        measured, demand=MISTRAL_DEMAND, current=MISTRAL_TODAY, target=INF2_XLARGE_SAGEMAKER, policy=POLICY
    )
    assert priced.verdict == "withdrawn"
    assert priced.reason.startswith("SLO sizing: no concurrency level meets p95 84 ms")


def test_the_measured_saving_follows_the_measured_throughput_and_shows_the_estimates_error() -> None:
    # Given the same move measured twice: once at the throughput the estimate assumed, once a third slower
    fast = result(parameters(), measurements=[measurement(4, rps="40.5", p95="80.2")])
    slow = result(parameters(), measurements=[measurement(4, rps="13.5", p95="80.2")])
    priced = [
        price_inference(r, demand=MISTRAL_DEMAND, current=MISTRAL_TODAY, target=INF2_XLARGE_SAGEMAKER, policy=POLICY)
        for r in (fast, slow)
    ]
    # When each is set beside the rule's estimate (1 instance, $3,701.10 a month)
    fast_priced, slow_priced = (p.beside(Decimal("3701.10"), 1) for p in priced)
    # Then the first agrees with it, and the slower run needs 3 instances: a smaller saving, the estimate 27 % off
    assert (fast_priced.target_count, fast_priced.monthly_savings_usd) == (1, Decimal("3701.10"))
    assert fast_priced.prediction_error == Decimal("0.0000")
    assert slow_priced.target_count == 3  # ceil(26.4 × 1.3 ÷ 13.5)
    assert slow_priced.monthly_savings_usd == Decimal("2255.70")  # 4423.80 − 3 × 0.99 × 730
    assert slow_priced.prediction_error == Decimal("0.6408")  # (3701.10 − 2255.70) ÷ 2255.70
    assert (slow_priced.estimated_monthly_savings_usd, slow_priced.estimated_target_count) == (Decimal("3701.10"), 1)
    # and per request at today's traffic the slower target costs more
    assert slow_priced.cost_per_million_at_traffic_usd > fast_priced.cost_per_million_at_traffic_usd  # type: ignore[operator]
