"""Credits-application and partner-referral drafts: the account's real figures, stored, reviewed, never sent."""

from __future__ import annotations

import json
from datetime import timedelta
from decimal import Decimal
from pathlib import Path

import pytest
from notify_factories import NOW, add_costs, add_finding, add_resource, estate
from sqlalchemy import func, select
from sqlalchemy.orm import Session, sessionmaker

from chipwise.drafts import CompanyFacts, account_figures, prepare_account_drafts, write_files
from chipwise.errors import NotFound
from chipwise.settings import Settings
from chipwise.store.tables import Account, Draft, OutboxMessage

LAST_DAY = NOW.date() - timedelta(days=1)


def _account_with_costs(session: Session) -> dict[str, Decimal]:
    """The estate plus 14 days of costs: GPU $300/day, Inferentia $40/day, CPU noise $100/day."""
    estate(session)
    add_resource(
        session,
        "train-llama-trn1",
        platform="trainium",
        instance_type="ml.trn1.32xlarge",
        kind="sagemaker_training_job",
        hints={"workload": "training", "hf_model_id": "meta-llama/Llama-3.1-8B"},
    )
    add_resource(session, "cpu-api", platform="cpu", instance_type="m5.xlarge", kind="ec2_instance")
    add_finding(session, "measured-one", savings="900", measured="650.25", first_seen=NOW - timedelta(days=10))
    return {
        "nvidia": add_costs(session, "ml.g5.2xlarge", "300.00", days=14, last_day=LAST_DAY),
        "inferentia": add_costs(session, "ml.inf2.xlarge", "40.00", days=14, last_day=LAST_DAY),
        "cpu": add_costs(session, "m5.xlarge", "100.00", days=14, last_day=LAST_DAY),
    }


def test_figures_are_the_accounts_own(session: Session) -> None:
    # Given 14 days of costs and open findings
    _account_with_costs(session)
    # When the figures are read
    figures = account_figures(session, "123456789012", company=None, lookback_days=14)
    # Then spend is every surface's (accelerator and compute, chipwise.spend), the monthly run rate over the 14
    # complete days of Cost Explorer records; the split by platform is the accelerators'
    assert figures.accelerator_spend_usd == Decimal("6160.00")  # (300 + 40 + 100) × 14
    assert figures.monthly_accelerator_spend_usd == Decimal("13383.33")  # 440 × 730 / 24
    assert figures.spend_basis == "Cost Explorer; Cost Explorer's monthly run rate over 14 complete days"
    assert figures.monthly_by_platform == {"inferentia": Decimal("1216.67"), "nvidia": Decimal("9125.00")}
    assert (figures.window_start, figures.window_end, figures.days) == (
        LAST_DAY - timedelta(days=13),
        LAST_DAY + timedelta(days=1),
        14,
    )
    # ...savings are the open findings' (measured where measured)
    assert figures.open_findings == 4
    assert figures.monthly_savings_usd == Decimal("3915.55")  # 2400.50 + 310 + 554.80 + 650.25
    assert figures.measured_monthly_savings_usd == Decimal("650.25")
    assert figures.monthly_after_usd == Decimal("9467.78")  # 13,383.33 − 3,915.55
    # ...and the workloads are the accelerator resources
    assert sorted(w.name for w in figures.workloads) == [
        "bert-ner-g6",
        "chat-mistral-g5",
        "old-endpoint",
        "search-idle-inf2",
        "train-llama-trn1",
    ]
    assert figures.company == "Acme AI"


def test_drafts_carry_the_figures_programs_and_an_ace_document(
    session_factory: sessionmaker[Session], tmp_path: Path
) -> None:
    # Given an account with costs and findings
    with session_factory.begin() as session:
        _account_with_costs(session)
    settings = Settings(advisory_email="advisory@example.com", email_recipients=["cto@acme.example"])
    facts = CompanyFacts(stage="seed", institutional_funding=True, activate_provider_org_id="ORG-1234")
    # When the drafts are prepared
    with session_factory.begin() as session:
        result = prepare_account_drafts(session, "123456789012", settings, facts, now=NOW)
    drafts = result.drafts
    # Then the credits draft quotes the account's figures and the programs that fit
    credits = drafts.credits.body
    for text in ("$13,383 a month", "$3,915.55 a month", "$650.25 measured", "train-llama-trn1", "ml.trn1.32xlarge"):
        assert text in credits
    eligible = {m.program for m in drafts.programs if m.eligible}
    assert {"activate_portfolio", "genai_poc_funding", "genai_accelerator", "map"} <= eligible
    assert "activate_founders" not in eligible  # self-funded only: this company has investors
    assert "AWS Activate Portfolio" in credits and "Source:" in credits
    # ...the referral is an ACE CreateOpportunity document with the customer, project, spend and next steps
    ace = drafts.ace_document
    assert ace["Catalog"] == "AWS" and ace["Origin"] == "Partner Referral"
    assert ace["Customer"]["Account"] == {
        "CompanyName": "Acme AI",
        "Industry": "Software and Internet",
        "Address": {"CountryCode": "US"},
        "AwsAccountId": "123456789012",
    }
    assert ace["Customer"]["Contacts"] == [{"Email": "cto@acme.example"}]
    assert ace["Project"]["ExpectedCustomerSpend"] == [
        {"Amount": "9467.78", "CurrencyCode": "USD", "Frequency": "Monthly", "TargetCompany": "AWS"}
    ]
    assert "$13,383 a month" in ace["Project"]["CustomerBusinessProblem"]
    assert "AWS Activate Portfolio" in ace["LifeCycle"]["NextSteps"]
    assert drafts.referral.document["submitted"] is False
    assert "$3,915.55 a month of savings" in drafts.referral.body
    # ...both are stored and a review email is queued to the advisory address with the files attached
    with session_factory() as session:
        stored = session.scalars(select(Draft).order_by(Draft.kind)).all()
        review = session.scalars(select(OutboxMessage)).one()
    assert [d.kind for d in stored] == ["credits_application", "partner_referral"]
    assert stored[1].document["ace_create_opportunity"] == ace
    assert (review.kind, review.recipient, review.payload["to"]) == (
        "draft",
        "advisory@example.com",
        ["advisory@example.com"],
    )
    assert [a["filename"] for a in review.payload["attachments"]] == [
        "credits-application.md",
        "credits-application.json",
        "partner-referral-email.txt",
        "ace-create-opportunity.json",
    ]
    assert "Nothing has been submitted" in review.payload["html"]
    # ...and the CLI's files are the same documents
    paths = write_files(drafts, tmp_path / "out")
    assert json.loads((tmp_path / "out" / "ace-create-opportunity.json").read_text()) == ace
    assert len(paths) == 4


def test_drafts_are_updated_in_place_and_reviewed_once_per_version(session_factory: sessionmaker[Session]) -> None:
    # Given drafts prepared once
    with session_factory.begin() as session:
        _account_with_costs(session)
    settings = Settings()
    with session_factory.begin() as session:
        first = prepare_account_drafts(session, "123456789012", settings, now=NOW)
    # When prepared again unchanged, then after a new finding
    with session_factory.begin() as session:
        same = prepare_account_drafts(session, "123456789012", settings, now=NOW + timedelta(hours=1))
    with session_factory.begin() as session:
        add_finding(session, "chat-mistral-g5", rule_id="another_rule", savings="99")
        changed = prepare_account_drafts(session, "123456789012", settings, now=NOW + timedelta(hours=2))
    # Then the rows keep their ids, an unchanged version is not emailed again, a changed one is
    assert [d.id for d in same.stored] == [d.id for d in first.stored] == [d.id for d in changed.stored]
    assert first.review is not None and same.review is None and changed.review is not None
    with session_factory() as session:
        assert session.scalar(select(func.count()).select_from(Draft)) == 2
        assert session.scalar(select(func.count()).select_from(OutboxMessage)) == 2


def test_an_unknown_account_is_not_found(session: Session) -> None:
    with pytest.raises(NotFound, match="scan it first"):
        account_figures(session, "999999999999", company=None, lookback_days=14)


def test_an_account_without_costs_still_gets_honest_drafts(session_factory: sessionmaker[Session]) -> None:
    # Given an account with findings but no cost records yet
    with session_factory.begin() as session:
        estate(session)
        result = prepare_account_drafts(session, "123456789012", Settings(), now=NOW)
    # Then the spend is zero and said to be missing, not invented
    assert result.drafts.figures.monthly_accelerator_spend_usd == Decimal("0.00")
    assert "unknown: no bill or Cost Explorer records yet" in result.drafts.credits.body


def test_the_referral_names_the_largest_workloads_by_spend_not_by_name(
    session_factory: sessionmaker[Session],
) -> None:
    # Given the estate: chat-mistral-g5 costs $4,406.28 a month and bert-ner-g6 $1,300 (their findings' figures),
    # old-endpoint (its finding resolved) runs 1 × ml.g5.2xlarge always on ($1.515/h × 730 = $1,105.95),
    # search-idle-inf2 $554.80 (its finding), and train-llama-trn1 is a training job (part-time: no run-rate)
    with session_factory.begin() as session:
        _account_with_costs(session)
        result = prepare_account_drafts(session, "123456789012", Settings(), now=NOW)
    figures = result.drafts.figures
    # Then the workloads run largest spend first, unknown last, and the referral's examples are the top 3
    assert [(w.name, w.monthly_cost_usd) for w in figures.workloads] == [
        ("chat-mistral-g5", Decimal("4406.28")),
        ("bert-ner-g6", Decimal("1300.00")),
        ("old-endpoint", Decimal("1105.95")),
        ("search-idle-inf2", Decimal("554.80")),
        ("train-llama-trn1", None),
    ]
    assert (
        "including chat-mistral-g5 (ml.g5.2xlarge ×4, about $4,406 a month), bert-ner-g6 (ml.g5.2xlarge, about "
        "$1,300 a month), old-endpoint (ml.g5.2xlarge, about $1,106 a month)."
    ) in result.drafts.referral.body


def test_an_unnamed_company_is_its_account_once(session_factory: sessionmaker[Session]) -> None:
    # Given an account Chipwise knows by its id only (no name, no company given)
    with session_factory.begin() as session:
        estate(session)
        session.get(Account, "123456789012").name = None  # type: ignore[union-attr]
        result = prepare_account_drafts(session, "123456789012", Settings(), now=NOW)
    drafts = result.drafts
    # Then the drafts say "AWS account 123456789012" once, never "AWS account X (AWS account X)"
    for text in (drafts.referral.body, drafts.credits.body, drafts.referral.title, drafts.credits.title):
        assert "(AWS account 123456789012)" not in text and "123456789012 (123456789012)" not in text
    assert "We would like to refer AWS account 123456789012 to you" in drafts.referral.body
