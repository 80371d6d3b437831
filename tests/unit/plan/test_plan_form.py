"""The form's view: labels, error placement beside fields, values shown back as typed."""

from __future__ import annotations

from chipwise.intake.form import flatten, form_field, label_of, place_errors, summary_label_of, workload_count


def test_errors_land_on_the_field_they_name() -> None:
    assert form_field("contact.email") == "contact.email"
    assert form_field("workloads.3.model_family") == "workloads.3.model_family"
    assert form_field("aws.account_ids.1") == "aws.account_ids"  # one box holds all the ids
    assert form_field("workloads") == "workloads"
    assert form_field("") == ""


def test_errors_without_a_field_are_kept_for_the_top_of_the_form() -> None:
    by_field, general = place_errors({"contact.email": "bad", "aws.account_ids.0": "12 digits", "": "whole form"})
    assert by_field == {"contact.email": "bad", "aws.account_ids": "12 digits"}
    assert general == ["whole form"]


def test_labels_name_the_workload_in_the_summary_only() -> None:
    assert label_of("workloads.1.instance_count") == "Instances"
    assert summary_label_of("workloads.1.instance_count") == "Workload 2: Instances"
    assert label_of("company.name") == "Company name"


def test_flatten_gives_back_the_typed_strings() -> None:
    raw = {
        "company": {"name": "<b>Acme</b>", "ai_first": True},
        "aws": {"account_ids": ["123456789012", "bad"]},
        "workloads": [{"name": "a"}, {"name": "b", "requests_per_day": "ten"}],
    }
    flat = flatten(raw)
    assert flat == {
        "company.name": "<b>Acme</b>",
        "company.ai_first": "true",
        "aws.account_ids": "123456789012, bad",
        "workloads.0.name": "a",
        "workloads.1.name": "b",
        "workloads.1.requests_per_day": "ten",
    }
    assert workload_count(flat) == 2
    assert workload_count({}) == 1
