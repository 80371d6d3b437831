"""The partner-referral draft is a valid ACE CreateOpportunity request (botocore's model), never sent."""

from __future__ import annotations

import gzip
import json
import re
from decimal import Decimal
from functools import lru_cache
from pathlib import Path
from typing import Any

import botocore
from botocore.model import ServiceModel, Shape
from botocore.validate import validate_parameters

from chipwise.plan.ace import clip, opportunity_document

HOSTILE = '<script>alert("x")</script> & Sons'


@lru_cache(maxsize=1)
def selling_model() -> ServiceModel:
    path = Path(botocore.__file__).parent / "data" / "partnercentral-selling" / "2022-07-26" / "service-2.json.gz"
    return ServiceModel(json.loads(gzip.decompress(path.read_bytes())))


def document(**overrides: Any) -> dict[str, Any]:
    fields: dict[str, Any] = {
        "company_name": "Acme AI",
        "website": "https://acme.example/",
        "country_code": "us",
        "contact_name": "Ada Lovelace",
        "contact_email": "Ada@Acme.Example",
        "aws_account_id": "123456789012",
        "expected_monthly_spend_usd": Decimal("37254.178"),
        "project_title": "Acme AI: AI accelerator cost plan",
        "business_problem": "A GPU bill of $40,000 a month; a plan to move serving to Inferentia2.",
        "next_steps": "Prove the path on one inf2.xlarge.",
    }
    fields.update(overrides)
    return opportunity_document(**fields)


def patterns_hold(value: Any, shape: Shape, where: str = "") -> list[str]:
    """Botocore validates types and lengths, not patterns and enums: check those too."""
    problems: list[str] = []
    if shape.type_name == "structure":
        for name, member in shape.members.items():  # type: ignore[attr-defined]
            if name in value:
                problems += patterns_hold(value[name], member, f"{where}.{name}")
    elif shape.type_name == "list":
        for index, item in enumerate(value):
            problems += patterns_hold(item, shape.member, f"{where}[{index}]")  # type: ignore[attr-defined]
    elif shape.type_name == "string":
        pattern = shape.metadata.get("pattern")
        if pattern and not re.fullmatch(pattern, value):
            problems.append(f"{where}: {value!r} does not match {pattern}")
        if shape.enum and value not in shape.enum:
            problems.append(f"{where}: {value!r} not in enum")
    return problems


def test_the_draft_passes_botocore_validation_for_create_opportunity() -> None:
    # Given the draft for a typical referral
    draft = document()
    # When it is validated against the CreateOpportunity input shape
    shape = selling_model().operation_model("CreateOpportunity").input_shape
    validate_parameters(draft, shape)  # raises ParamValidationError on a wrong type or a missing field
    # Then every pattern and enum holds as well
    assert patterns_hold(draft, shape) == []
    assert draft["Catalog"] == "AWS" and draft["Origin"] == "Partner Referral"
    assert draft["OpportunityType"] == "Net New Business"
    assert draft["LifeCycle"]["Stage"] == "Prospect"
    spend = draft["Project"]["ExpectedCustomerSpend"][0]
    assert spend == {"Amount": "37254.18", "CurrencyCode": "USD", "Frequency": "Monthly", "TargetCompany": "AWS"}


def test_the_client_token_is_deterministic_per_case() -> None:
    assert document()["ClientToken"] == document()["ClientToken"]
    assert document()["ClientToken"] != document(company_name="Other Co")["ClientToken"]


def test_html_in_any_field_is_escaped_and_long_text_is_clipped_to_the_api_limits() -> None:
    # Given hostile and over-long text in every free-text field
    draft = document(
        company_name=HOSTILE * 10,
        contact_name=HOSTILE,
        project_title=HOSTILE * 20,
        business_problem=HOSTILE * 100,
        next_steps=HOSTILE * 20,
    )
    # Then no raw markup survives anywhere, and the API's length limits hold
    text = json.dumps(draft)
    assert "<script>" not in text and "&lt;script&gt;" in text
    shape = selling_model().operation_model("CreateOpportunity").input_shape
    validate_parameters(draft, shape)
    assert patterns_hold(draft, shape) == []


def test_clip_never_cuts_an_escaped_character_in_half() -> None:
    clipped = clip("<" * 100, 10)
    assert clipped == "&lt;&lt;…"
    assert len(clipped) <= 10
