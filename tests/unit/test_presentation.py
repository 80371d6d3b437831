"""The one headline every surface shows, and the one ranking every list follows."""

from __future__ import annotations

from decimal import Decimal

from chipwise.links import console_url
from chipwise.presentation import SavingFacts, current_capacity, headline, rank


def facts(saving: str, *, measured: bool = False, status: str = "open", apart: str | None = None) -> SavingFacts:
    return SavingFacts(status=status, excluded_from_totals=apart, measured=measured, saving_usd=Decimal(saving))


ITEMS = [
    facts("1000.005", measured=True),
    facts("250.10"),
    facts("99.99"),
    facts("16071.68", apart="quote_needed"),
    facts("800", apart="committed"),
    facts("0", status="withdrawn", measured=True),
]


def test_the_headline_counts_measured_and_estimated_apart_and_names_what_is_left_out() -> None:
    # When the headline is taken over a measured saving, two estimates and three findings that do not count
    result = headline(ITEMS)
    # Then measured $1,000.01 (half up), estimated 250.10 + 99.99 = $350.09, total $1,350.10
    assert (result.measured_usd, result.estimated_usd, result.total_usd) == (
        Decimal("1000.01"),
        Decimal("350.09"),
        Decimal("1350.10"),
    )
    assert result.sentence() == (
        "$1,350.10 a month: $1,000.01 measured, $350.09 estimated "
        "(1 needs a price quote, 1 on committed hours, 1 withdrawn by measurement: not counted)"
    )


def test_two_quotes_read_in_the_plural() -> None:
    result = headline([facts("10", apart="quote_needed"), facts("20", apart="quote_needed")])
    assert result.sentence() == "$0.00 a month: $0.00 measured, $0.00 estimated (2 need a price quote: not counted)"


def test_the_ranking_puts_measurements_first_and_set_apart_savings_last() -> None:
    ordered = sorted(ITEMS, key=rank)
    assert [f.saving_usd for f in ordered] == [
        Decimal("1000.005"),
        Decimal("250.10"),
        Decimal("99.99"),
        Decimal("16071.68"),
        Decimal("800"),
        Decimal("0"),
    ]


def test_capacity_reads_an_inference_component_as_copies_on_its_endpoint() -> None:
    assert current_capacity("ml.g5.2xlarge", 4, "sagemaker_endpoint") == "ml.g5.2xlarge ×4"
    assert current_capacity("ml.g5.12xlarge", 1, "sagemaker_inference_component") == "ml.g5.12xlarge, 1 copy"
    assert current_capacity("ml.g5.12xlarge", 2, "sagemaker_inference_component") == "ml.g5.12xlarge, 2 copies"
    # and its console page is its endpoint's, where SageMaker lists the components
    arn = "arn:aws:sagemaker:us-east-1:123456789012:inference-component/chat"
    link = console_url(arn, "us-east-1", "sagemaker_inference_component", "shared-llm/chat")
    assert link.endswith("#/endpoints/shared-llm")
    # and a variant's, whose id is its endpoint's ARN with the variant
    variant = "arn:aws:sagemaker:us-east-1:123456789012:endpoint/chat-ab#variant/canary"
    assert console_url(variant, "us-east-1", "sagemaker_endpoint", "chat-ab/canary").endswith("#/endpoints/chat-ab")


def test_the_benchmark_verdict_reads_what_the_lenient_evidence_model_keeps() -> None:
    # Given stored evidence: a benchmark mapping, one of the wrong type, none at all, or beside keys of wrong types
    from chipwise.models.evidence import FindingEvidence
    from chipwise.models.findings import FindingDocument
    from chipwise.presentation import benchmark_verdict

    stored: list[dict[str, object]] = [
        {"benchmark": {"status": "needs_review", "reason": "implausible"}},
        {"benchmark": {"status": "withdrawn"}, "hourly_rate_usd": "not a number", "unknown_key": 1},
        {"benchmark": "confirmed"},
        {"benchmark": None},
        {"benchmark": {"reason": "no status"}},
        {"benchmark": {"status": ""}},
        {},
    ]
    for evidence in stored:
        # When the verdict is read without validating the whole evidence
        said = benchmark_verdict(FindingDocument.model_construct(evidence=evidence))
        # Then it is what FindingEvidence.read keeps of it
        kept = FindingEvidence.read(evidence).benchmark
        assert said == (str(kept["status"]) if kept and kept.get("status") else None), evidence
    assert benchmark_verdict(FindingDocument.model_construct(evidence=stored[0])) == "needs_review"
    assert benchmark_verdict(FindingDocument.model_construct(evidence=stored[2])) is None
