"""The plausibility gate: a measurement outside the published range for its move, widened by the stated margin, or
compared with a rate that has no source, is ``needs_review``, never ``confirmed``. Figures computed by hand."""

from __future__ import annotations

from decimal import Decimal

from benchmark_factories import measurement, parameters, result, training_finding

from chipwise.benchmarks.repricing import Current, PlausibleRange, Target, price_training
from chipwise.benchmarks.workload import current_of, plausible_range
from chipwise.catalog import get_assumptions, get_catalog
from chipwise.models.benchmark import BenchmarkResult, Measurement

TRN1 = Target("ml.trn1.32xlarge", Decimal("24.72"))
# llama3-8b-finetune: 2 × ml.p4d.24xlarge, $5,000 over 100 h of runs: the account's rate is $25.00/h
P4D_ACCOUNT = Current("ml.p4d.24xlarge", 2, Decimal("25.00"), Decimal("5000.00"), run_hours=Decimal(100))


def _training(tokens_per_second: str) -> list[Measurement]:
    return [measurement(8, "4", "2000", tps=tokens_per_second, seq=2048, out=0)]


def _runs(trn_tps: str, gpu_tps: str) -> tuple[BenchmarkResult, BenchmarkResult]:
    trn = result(
        parameters(task="training", instance_type="trn1.32xlarge", priced_as="ml.trn1.32xlarge"), _training(trn_tps)
    )
    gpu = result(
        parameters(
            task="training",
            role="gpu_baseline",
            instance_type="p4d.24xlarge",
            priced_as="ml.p4d.24xlarge",
            runner="cuda",
        ),
        _training(gpu_tps),
    )
    return trn, gpu


def _range() -> PlausibleRange:
    finding = training_finding()
    found = plausible_range(finding, "ml.trn1.32xlarge", get_catalog(), "training")
    assert found is not None
    return found


def test_the_range_is_the_published_one_widened_by_the_stated_margin() -> None:
    # Given Trainium's published 30-50 % training price-performance gain and the 25-point margin (assumptions.json)
    gain = get_assumptions().trainium_training_price_performance_gain
    assert (gain.low, gain.high, get_assumptions().measurement_plausibility_margin.value) == (
        Decimal("0.30"),
        Decimal("0.50"),
        Decimal("0.25"),
    )
    # Then a GPU → Trainium training move may measure 5 % to 75 % cheaper per trained model
    plausible = _range()
    assert (plausible.low, plausible.high, plausible.move) == (
        Decimal("0.05"),
        Decimal("0.75"),
        "GPU → Trainium training",
    )


def test_a_neuron_to_neuron_move_has_no_published_ratio() -> None:
    finding = training_finding(instance_type="trn1.32xlarge")
    assert plausible_range(finding, "inf2.xlarge", get_catalog(), "inference") is None


def test_the_demos_99_percent_cheaper_training_run_needs_review() -> None:
    # Given the run the demo once wrote: the GPU baseline normalised at a $1/h fallback (277.8 tokens/s), Trainium
    # at 277.8 × 24.72 ÷ 1 ÷ 0.6 × 0.85 = 9,728.6 tokens/s, priced against the account's $25.00/h
    trn, gpu = _runs("9728.6", "277.8")
    # When priced
    priced = price_training(trn, current=P4D_ACCOUNT, target=TRN1, baseline=gpu, plausible=_range())
    # Then: $/1M on trn1 = 1e6 ÷ 9728.6 × 24.72 ÷ 3600 = 0.70582; on p4d 1e6 ÷ 277.8 × 25 ÷ 3600 = 24.99800:
    # 1 − 0.70582 ÷ 24.99800 = 97.18 % cheaper, outside 5-75 %: needs review, not confirmed
    assert priced.verdict == "needs_review"
    assert priced.measured_saving_fraction == Decimal("0.9718")
    assert priced.review_reason is not None
    assert "97.18 % cheaper per unit of work is outside the plausible 5.00 % to 75.00 %" in priced.review_reason
    assert "trainium_training_price_performance_gain" in priced.review_reason
    assert priced.reason.startswith("needs review: ")


def test_a_training_run_inside_the_range_is_confirmed() -> None:
    # Given the demo's run priced consistently: the baseline at the account's $25.00/h (6,944.4 tokens/s normalised
    # to $1 per 1M) and Trainium at 6,944.4 × 24.72 ÷ 25 ÷ 0.6 × 0.85 = 9,728.6 tokens/s
    trn, gpu = _runs("9728.6", "6944.4")
    priced = price_training(trn, current=P4D_ACCOUNT, target=TRN1, baseline=gpu, plausible=_range())
    # Then 1 − 0.70582 ÷ (1e6 ÷ 6944.4 × 25 ÷ 3600 = 1.00001) = 29.42 % cheaper: inside 5-75 %, confirmed
    assert priced.verdict == "confirmed"
    assert priced.measured_saving_fraction == Decimal("0.2942")
    assert (priced.plausible_low, priced.plausible_high, priced.rate_basis) == (
        Decimal("0.05"),
        Decimal("0.75"),
        "account",
    )


def test_a_saving_too_small_for_the_move_needs_review_too() -> None:
    # Given Trainium only 2 % cheaper per trained model (below the widened low of 5 %)
    trn, gpu = _runs("7086.1", "6944.4")  # 1 − (24.72 ÷ 7086.1) ÷ (25 ÷ 6944.4) = 3.10 %
    priced = price_training(trn, current=P4D_ACCOUNT, target=TRN1, baseline=gpu, plausible=_range())
    assert priced.verdict == "needs_review"
    assert priced.measured_saving_fraction == Decimal("0.0310")


def test_a_baseline_rate_with_no_source_needs_review() -> None:
    # Given a training job with no cost in the bill and no cited price for its type
    unsourced = Current("ml.p4d.24xlarge", 2, Decimal(0), Decimal(0), run_hours=Decimal(100), rate_basis="none")
    trn, gpu = _runs("9728.6", "6944.4")
    priced = price_training(trn, current=unsourced, target=TRN1, baseline=gpu, plausible=_range())
    assert priced.verdict == "needs_review"
    assert priced.review_reason is not None and "neither the account's" in priced.review_reason


def test_today_s_rate_says_where_it_comes_from() -> None:
    catalog = get_catalog()
    # ml.p4d.24xlarge has no cited price: the account's bill over the hours it ran ($5,000 ÷ (2 × 100 h))
    current = current_of(training_finding(), catalog, "training")
    assert (current.price_usd_per_hour, current.rate_basis) == (Decimal(25), "account")
    # p4d.24xlarge has one (EC2 on-demand): a training job is priced at it
    cited = current_of(training_finding(instance_type="p4d.24xlarge"), catalog, "training")
    assert cited.rate_basis == "catalog" and cited.price_usd_per_hour == catalog.price("p4d.24xlarge")
    # nothing in the bill and no price: no source
    none = current_of(training_finding(monthly_cost_usd=Decimal(0)), catalog, "training")
    assert (none.price_usd_per_hour, none.rate_basis) == (Decimal(0), "none")


def test_a_withdrawal_is_not_turned_into_a_review() -> None:
    # Given Trainium costing more per trained model (a measurement that adds no money to any total)
    trn, gpu = _runs("5000", "6944.4")
    priced = price_training(trn, current=P4D_ACCOUNT, target=TRN1, baseline=gpu, plausible=_range())
    assert priced.verdict == "withdrawn"
