"""Rendering: HTML typed into any field comes out as text in the page, the Markdown, the emails and the draft."""

from __future__ import annotations

import re

import pytest
from plan_factories import CREATED, PLAN_ID, intake_dict, workload

from chipwise.intake import views
from chipwise.plan.intake import IntakeRequest
from chipwise.plan.planner import build_plan

PAYLOAD = '<img src=x onerror="alert(1)">'


@pytest.fixture
def hostile() -> tuple[IntakeRequest, object]:
    data = intake_dict(workload(name=f"chat {PAYLOAD}", model_family=f"llama {PAYLOAD}"), name=f"Evil {PAYLOAD} Co")
    data["contact"]["name"] = f"Mallory {PAYLOAD}"
    intake = IntakeRequest.model_validate(data)
    return intake, build_plan(intake, plan_id=PLAN_ID, created_at=CREATED)


def no_raw_markup(text: str) -> None:
    assert "<img" not in text
    assert "onerror" not in text or "&lt;img" in text or "\\<" in text


def test_the_plan_page_escapes_every_field(hostile: tuple[IntakeRequest, object]) -> None:
    _, plan = hostile
    page = views.plan_page(plan, permalink="/plans/x", nonce="n0nce")  # type: ignore[arg-type]
    no_raw_markup(page)
    assert "ada@acme.example" not in page and "Mallory" not in page  # no contact data on the public page
    assert "Evil &lt;img src=x onerror=&#34;alert(1)&#34;&gt; Co" in page
    assert 'nonce="n0nce"' in page


def test_the_markdown_escapes_every_field(hostile: tuple[IntakeRequest, object]) -> None:
    _, plan = hostile
    markdown = views.plan_markdown(plan)  # type: ignore[arg-type]
    no_raw_markup(markdown)
    assert '&lt;img src=x onerror="alert(1)"&gt;' in markdown


def test_the_emails_and_the_draft_body_escape_every_field(hostile: tuple[IntakeRequest, object]) -> None:
    intake, plan = hostile
    entry = views.DigestEntry(
        received_at=CREATED,
        company=intake.company.name,
        contact_email="m@evil.example",
        monthly_savings_usd=plan.totals.monthly_savings_usd,  # type: ignore[attr-defined]
        partner_referral=True,
        link=None,
    )
    for html, _text in (
        views.contact_email(plan, link="https://x/plans/y", delete_link="https://x/d", expires_at=CREATED),  # type: ignore[arg-type]
        views.advisory_digest([entry], day=CREATED.date()),
    ):
        no_raw_markup(html)
        assert "&lt;img" in html
    body = views.referral_body(plan, intake)  # type: ignore[arg-type]
    assert "<img" not in body
    assert "&lt;img" in views.referral_json(plan)  # type: ignore[arg-type]


def test_the_form_shows_errors_beside_their_fields_and_keeps_the_values() -> None:
    # Given a submission with a bad email, a bad instance type in the second workload and HTML in a name
    values = {
        "company.name": PAYLOAD,
        "contact.email": "ada@nowhere",
        "workloads.0.name": "a",
        "workloads.1.name": "b",
        "workloads.1.current_instance_type": "g9.mega",
        "workloads.1.one_off": "true",
    }
    errors = {"contact.email": "Enter an email address.", "workloads.1.current_instance_type": "Unknown type."}
    # When the form is rendered again
    page = views.form_page(values=values, errors=errors, nonce="abc")
    # Then each message sits in its field's block, tied to the input, and the values are kept (escaped)
    assert re.search(r'id="contact-email-error">.*Enter an email address\.', page)
    assert 'aria-describedby="contact-email-hint contact-email-error"' in page
    assert re.search(r'id="workloads-1-current_instance_type" name="[^"]+" type="text" value="g9.mega"', page)
    assert 'value="ada@nowhere"' in page
    assert "&lt;img" in page and "<img" not in page
    assert re.search(r'name="workloads.1.one_off" type="checkbox" value="true"\s*checked', page)
    assert "Please check 2 fields" in page
    assert 'data-index="1"' in page and 'data-index="2"' not in page  # two blocks (plus the script's template)


def test_the_empty_form_has_labels_for_every_input_and_sensible_defaults() -> None:
    page = views.form_page(nonce="abc")
    inputs = re.findall(r'<(?:input|select)[^>]*\bid="([^"]+)"', page)
    hidden_honeypot = "nickname"
    for field_id in inputs:
        assert f'for="{field_id}"' in page, field_id
    assert hidden_honeypot in inputs
    assert "This form" not in page  # every label has its text, the script's template block included
    assert re.search(r'id="company-country"[^>]*value="US"', page)
    assert re.search(r'<option value="us-east-1" selected>', page)
    assert re.search(r'id="company-ai_first"[^>]*value="true"\s*checked', page)
    assert '<meta name="viewport"' in page
    assert "Add another workload" in page


URL = "https://evil.example/login"


def test_a_url_typed_into_any_field_is_never_a_link_in_an_email() -> None:
    # Given a URL in every free-text field a founder fills in
    data = intake_dict(workload(name=f"chat {URL}", model_family=URL), name=f"URGENT: verify at {URL}")
    data["contact"]["name"] = URL
    data["company"]["website"] = "evil.example"
    intake = IntakeRequest.model_validate(data)
    plan = build_plan(intake, plan_id=PLAN_ID, created_at=CREATED)
    entry = views.DigestEntry(
        CREATED,
        intake.company.name,
        "ada@evil.example",
        plan.totals.monthly_savings_usd,
        False,
        "https://plans.example/p",
    )
    rendered = [
        *views.contact_email(
            plan, link="https://plans.example/plans/p", delete_link="https://plans.example/d", expires_at=CREATED
        ),
        *views.advisory_digest([entry], day=CREATED.date()),
    ]
    for body in rendered:
        # Then the address is not there as an address (no client can link it), and every href is ours
        assert "evil.example" not in body and "https://evil" not in body
        assert all(href.startswith("https://plans.example/") for href in re.findall(r'href="([^"]+)"', body))
    # and the text is still readable as typed
    assert "evil\u2024example" in rendered[0]


def test_the_confirmation_email_holds_nothing_but_our_links() -> None:
    html, text = views.confirm_email(
        confirm_link="https://plans.example/plans/p/confirm?x=1",
        delete_link="https://plans.example/d",
        expires_at=CREATED,
    )
    assert re.findall(r'href="([^"]+)"', html) == [
        "https://plans.example/plans/p/confirm?x=1",
        "https://plans.example/d",
    ]
    assert "https://plans.example/plans/p/confirm?x=1" in text


def test_the_public_plan_document_carries_no_contact_data() -> None:
    data = intake_dict(workload())
    data["aws"] = {"account_ids": ["123456789012"]}
    plan = build_plan(IntakeRequest.model_validate(data), plan_id=PLAN_ID, created_at=CREATED)
    assert "ada@acme.example" in plan.model_dump_json()  # the offline plan's referral draft has it
    public = plan.public().model_dump_json()
    assert "ada@acme.example" not in public and "123456789012" not in public
