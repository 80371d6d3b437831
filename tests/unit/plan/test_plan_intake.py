"""The intake model: limits, every invalid field named by its path, and the form's flat fields."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

import pytest
from plan_factories import intake_dict, workload
from pydantic import ValidationError

from chipwise.plan.intake import (
    HONEYPOT_FIELD,
    MAX_WORKLOADS,
    FormError,
    IntakeRequest,
    api_error_detail,
    field_errors,
    form_to_raw,
    honeypot_filled,
)


def errors_of(data: dict[str, Any]) -> dict[str, str]:
    with pytest.raises(ValidationError) as caught:
        IntakeRequest.model_validate(data)
    return field_errors(caught.value)


def test_the_issue_example_is_valid_and_keeps_decimals() -> None:
    intake = IntakeRequest.model_validate(intake_dict())
    assert intake.aws.monthly_spend_usd == Decimal(40000)
    assert intake.workloads[0].current_instance_type == "g5.xlarge"
    assert str(intake.contact.email) == "ada@acme.example"


def test_every_invalid_field_is_named_by_its_path() -> None:
    # Given an intake with many bad fields at once
    data = intake_dict(
        workload(current_instance_type="g9.mega", traffic="bursty", instance_count=0),
        workload(name="", requests_per_day=-1),
        name="",
        website="not a url",
        country="USA",
        stage="unicorn",
    )
    data["contact"]["email"] = "ada-at-example"
    data["aws"]["account_ids"] = ["12345"]
    # When it is validated
    errors = errors_of(data)
    # Then each bad field is reported at its own path
    assert set(errors) == {
        "company.name",
        "company.website",
        "company.country",
        "company.stage",
        "contact.email",
        "aws.account_ids.0",
        "workloads.0.current_instance_type",
        "workloads.0.traffic",
        "workloads.0.instance_count",
        "workloads.1.name",
        "workloads.1.requests_per_day",
    }
    assert errors["company.name"] == "This field is required."
    assert "12 digits" in errors["aws.account_ids.0"]
    assert "g9.mega" in errors["workloads.0.current_instance_type"]


def test_api_detail_paths_start_with_body_like_powertools() -> None:
    with pytest.raises(ValidationError) as caught:
        IntakeRequest.model_validate(intake_dict(workload(traffic="bursty")))
    detail = api_error_detail(caught.value)
    assert detail == [
        {
            "loc": ["body", "workloads", 0, "traffic"],
            "type": "literal_error",
            "msg": "Choose one of the listed options.",
        }
    ]


@pytest.mark.parametrize(
    "email",
    ["ada@localhost", "ada@acme", "ada acme@example.com", "<script>@example.com", "a" * 250 + "@example.com"],
)
def test_email_addresses_are_validated(email: str) -> None:
    data = intake_dict()
    data["contact"]["email"] = email
    assert "contact.email" in errors_of(data)


def test_too_many_workloads_is_refused() -> None:
    data = intake_dict(*[workload(name=f"w{i}") for i in range(MAX_WORKLOADS + 1)])
    assert "workloads" in errors_of(data)


def test_at_least_one_workload_is_needed() -> None:
    data = intake_dict()
    data["workloads"] = []
    assert "workloads" in errors_of(data)


@pytest.mark.parametrize(
    "instance, fragment",
    [("m5.large", "no accelerator"), ("p5e.48xlarge", "no on-demand price"), ("zz.top", "Unknown instance type")],
)
def test_instance_types_must_be_priced_accelerators(instance: str, fragment: str) -> None:
    errors = errors_of(intake_dict(workload(current_instance_type=instance)))
    assert fragment in errors["workloads.0.current_instance_type"]


def test_regions_without_known_prices_are_refused() -> None:
    data = intake_dict()
    data["aws"]["region"] = "ca-west-1"
    assert "not known" in errors_of(data)["aws.region"]


def test_unknown_fields_are_refused_not_ignored() -> None:
    data = intake_dict()
    data["company"]["favourite_colour"] = "blue"
    assert "company.favourite_colour" in errors_of(data)


def test_a_website_without_a_scheme_is_taken_as_https() -> None:
    intake = IntakeRequest.model_validate(intake_dict(website="acme.example"))
    assert intake.company.website == "https://acme.example/"


def test_account_ids_typed_in_one_box_are_split() -> None:
    data = intake_dict()
    data["aws"]["account_ids"] = "123456789012, 210987654321\n111111111111"
    intake = IntakeRequest.model_validate(data)
    assert intake.aws.account_ids == ["123456789012", "210987654321", "111111111111"]


# --- the form's flat fields ---------------------------------------------------------------------------------------


def test_form_fields_become_the_nested_intake_with_renumbered_workloads() -> None:
    # Given form fields with a gap in the workload numbers (a block was removed in the page)
    fields = {
        "company.name": ["Acme"],
        "contact.name": ["Ada"],
        "contact.email": ["ada@acme.example"],
        "workloads.0.name": ["chat"],
        "workloads.0.model_family": ["llama"],
        "workloads.0.requests_per_day": [""],
        "workloads.2.name": ["train"],
        "workloads.2.stage": ["training"],
        "workloads.2.model_family": ["llama"],
        "workloads.2.one_off": ["true"],
        HONEYPOT_FIELD: [""],
    }
    # When they are read
    raw = form_to_raw(fields)
    # Then the workloads are in order without the gap, blanks are left out, unticked boxes are false
    assert [w["name"] for w in raw["workloads"]] == ["chat", "train"]
    assert "requests_per_day" not in raw["workloads"][0]
    assert raw["workloads"][1]["one_off"] == "true"
    assert raw["workloads"][0]["foundation_model_only"] == "false"
    assert "one_off" not in raw["workloads"][0]  # a training-only field: not part of a serving workload
    assert raw["partner_referral"] == "false"  # the referral is off unless ticked
    assert raw["company"]["ai_first"] == "false"
    assert HONEYPOT_FIELD not in raw
    # and the result validates as an intake
    intake = IntakeRequest.model_validate(raw)
    assert intake.workloads[1].one_off is True and intake.company.ai_first is False


@pytest.mark.parametrize(
    "fields",
    [
        {"workloads.x.name": ["a"]},
        {"workloads.5000.name": ["a"]},
        {"company": ["a"], "company.name": ["b"]},
        {"company=x": ["a"]},
        {"workloads.0": ["x"]},
        {"workloads.0.name.deeper": ["x"]},
        {"company.nope": ["x"]},
        {"contact": ["x"]},
        {"workloads": ["x"]},
    ],
)
def test_field_names_we_never_served_are_a_malformed_form(fields: dict[str, list[str]]) -> None:
    with pytest.raises(FormError):
        form_to_raw(fields)


def test_the_honeypot_is_detected() -> None:
    assert honeypot_filled({HONEYPOT_FIELD: ["http://spam.example"]})
    assert not honeypot_filled({HONEYPOT_FIELD: ["  "]})
    assert not honeypot_filled({})


def test_the_other_stages_fields_are_dropped_from_a_form_post() -> None:
    # Given a training workload whose hidden serving fields still hold values typed before the stage changed
    fields = {
        "workloads.0.name": ["train"],
        "workloads.0.stage": ["training"],
        "workloads.0.model_family": ["llama"],
        "workloads.0.requests_per_day": ["1000"],
        "workloads.0.runs_per_month": ["4"],
    }
    workload = form_to_raw(fields)["workloads"][0]
    # Then only the training fields count
    assert workload["runs_per_month"] == "4" and "requests_per_day" not in workload
    assert "foundation_model_only" not in workload and workload["one_off"] == "false"


@pytest.mark.parametrize(
    "field, value, message",
    [
        ("requests_per_day", "1e-30", "at most 15 digits"),
        ("requests_per_day", "0.001", "at most 2 decimal places"),
        ("instance_count", "0", "at least 1"),
        ("hours_per_month", "800", "no larger than 744"),
        ("parameters_billion", "NaN", "Enter a number"),
    ],
)
def test_numbers_out_of_range_get_human_messages(field: str, value: str, message: str) -> None:
    data = intake_dict(workload(**{field: value}))
    with pytest.raises(ValidationError) as caught:
        IntakeRequest.model_validate(data)
    messages = field_errors(caught.value)
    assert message in messages[f"workloads.0.{field}"]
    assert "Input should" not in messages[f"workloads.0.{field}"]
