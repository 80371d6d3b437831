"""The commitments section's AWS comparison and surfaces (issue 38): Cost Explorer's
GetSavingsPlansPurchaseRecommendation read through a botocore Stubber with the response shape AWS documents, the
explanation beside Chipwise's own purchase, "unavailable" when the call fails, and the JSON document citing the
rate's source."""

from __future__ import annotations

from datetime import date
from decimal import Decimal

import boto3
import pytest
from botocore.stub import Stubber

from chipwise.analyse.commitments import (
    AwsRecommendation,
    CommitmentsResult,
    HeldCommitment,
    PurchaseAdvice,
    size_purchase,
)
from chipwise.pipeline.commitments import _aws
from chipwise.report.commitments import commitments_document, commitments_lines

# 24 hours of 10 $/h and 24 of 20 $/h left after the fixes; 25 % off: the 10th percentile is 10 $/h of spend,
# a commitment of 7.50 $/h that every hour uses whole
SPEND = [Decimal(10)] * 24 + [Decimal(20)] * 24
OURS = size_purchase(
    SPEND, Decimal("0.25"), kind="compute_savings_plan", term_years=0, payment_option="as the plan held",
    rate_source="the account's own bill 2026-11: its effective vs public on-demand cost",
)  # fmt: skip


def _advice() -> PurchaseAdvice:
    assert OURS is not None
    return PurchaseAdvice("compute_savings_plan", OURS, OURS.rate_source, "sized", Decimal("4.00"))


def _ce() -> tuple[object, Stubber]:
    client = boto3.client("ce", region_name="us-east-1", aws_access_key_id="x", aws_secret_access_key="x")
    return client, Stubber(client)


def test_the_purchase_is_hand_computed() -> None:
    assert OURS is not None
    assert (OURS.hourly_commitment, OURS.expected_utilisation, OURS.percentile) == (Decimal("7.50"), 1, 10.0)
    # each hour: 7.50 commitment covers 10 $/h of spend, the rest on demand: saves 2.50 $/h → 1,825.00 a month
    assert OURS.monthly_saving == Decimal("1825.00")


def test_aws_recommendation_is_read_and_the_difference_explained() -> None:
    client, stubber = _ce()
    expected = {
        "SavingsPlansType": "COMPUTE_SP",
        "TermInYears": "ONE_YEAR",
        "PaymentOption": "NO_UPFRONT",
        "LookbackPeriodInDays": "THIRTY_DAYS",
    }
    response = {
        "Metadata": {"RecommendationId": "r-1", "GenerationTimestamp": "2026-11-29T00:00:00Z"},
        "SavingsPlansPurchaseRecommendation": {
            "SavingsPlansType": "COMPUTE_SP",
            "TermInYears": "ONE_YEAR",
            "PaymentOption": "NO_UPFRONT",
            "LookbackPeriodInDays": "THIRTY_DAYS",
            "SavingsPlansPurchaseRecommendationDetails": [],
            "SavingsPlansPurchaseRecommendationSummary": {
                "HourlyCommitmentToPurchase": "10.5",
                "CurrencyCode": "USD",
                "EstimatedMonthlySavingsAmount": "2000",
            },
        },
    }  # fmt: skip
    stubber.add_response("get_savings_plans_purchase_recommendation", response, expected)
    with stubber:
        found = _aws(client, [_advice()])  # type: ignore[arg-type]
    assert (found.available, found.hourly_commitment) == (True, Decimal("10.5"))
    assert found.note == (
        "AWS sizes to the past usage, including $4.00/h of capacity this report removes: "
        "$3.00/h more commitment than the usage left after the fixes keeps busy"
    )


def test_a_failed_call_is_unavailable_with_its_cause_and_no_call_is_made_unasked() -> None:
    client, stubber = _ce()
    stubber.add_client_error("get_savings_plans_purchase_recommendation", "DataUnavailableException", "no data")
    with stubber:
        found = _aws(client, [_advice()])  # type: ignore[arg-type]
    assert (
        not found.available
        and found.note.startswith("unavailable: DataUnavailableException")
        and "no data" in found.note
    )
    assert _aws(None, [_advice()]).note.startswith("not asked")


@pytest.fixture
def result() -> CommitmentsResult:
    return CommitmentsResult(
        account_id="123456789012", today=date(2026, 11, 29), bill_periods=("2026-11",), usage_days=2,
        usage_note="by day", held=(), unknown_type=(), following=(), stranded=(),
        purchases=(_advice(), PurchaseAdvice("sagemaker_savings_plan", None, "rate unknown", "rate unknown: why",
                                             Decimal(0))),
        lapses=(), capacity=(), aws=AwsRecommendation(False, None, "not asked"),
    )  # fmt: skip


def test_the_document_cites_the_rate_source_and_never_invents_one(result: CommitmentsResult) -> None:
    document = commitments_document(result)
    compute, sagemaker = document["purchases"]
    assert compute["purchase"]["hourly_commitment_usd"] == "7.50" and compute["purchase"]["percentile"] == 10.0
    assert compute["rate_source"].startswith("the account's own bill 2026-11")
    assert (sagemaker["purchase"], sagemaker["rate_source"]) == (None, "rate unknown")
    assert document["bill_periods"] == ["2026-11"] and "not" in document["note"]
    text = "\n".join(commitments_lines(result))
    assert "10th percentile" in text and "rate unknown: why" in text


def test_a_compute_plan_follows_a_move_to_trainium_an_instance_plan_does_not() -> None:
    compute = HeldCommitment("a", "1", "compute_savings_plan", None, None, Decimal(1), None, date(2027, 1, 1),
                             None, Decimal(0), None, "bill")  # fmt: skip
    instance = HeldCommitment("b", "1", "ec2_instance_savings_plan", "us-east-1", "p4d", Decimal(1), None,
                              date(2027, 1, 1), None, Decimal(0), None, "bill")  # fmt: skip
    assert compute.follows("ec2", "trn1", "us-east-1") and not instance.follows("ec2", "trn1", "us-east-1")
