"""The intake Lambda (API Gateway HTTP API events) on a real store: form, plan, stored, emailed, refused."""

from __future__ import annotations

import json
import re
import secrets
from typing import Any

import pytest
from intake_events import Invoke, get, load_event, post_form, post_json, request, sample_form
from plan_factories import intake_dict, workload
from sqlalchemy import func, select

from chipwise.plan.intake import HONEYPOT_FIELD, MAX_BODY_BYTES, MAX_WORKLOADS
from chipwise.store.session import get_session_factory
from chipwise.store.tables import Draft, IntakeSubmission, OutboxMessage, Plan

EVIL = "<script>alert('pwned')</script>"


def body_of(response: dict[str, Any]) -> Any:
    return json.loads(response["body"])


def counts(db_url: str) -> dict[str, int]:
    with get_session_factory(db_url)() as session:
        return {
            table.__tablename__: session.scalar(select(func.count()).select_from(table)) or 0
            for table in (IntakeSubmission, Plan, Draft, OutboxMessage)
        }


def test_get_the_form(invoke: Invoke) -> None:
    # Given the sample GET event
    response = invoke(load_event("get_form"))
    # Then the page, with a CSP nonce on its inline script and no caching
    assert response["statusCode"] == 200
    headers = response["headers"]
    assert headers["Content-Type"].startswith("text/html")
    nonce = re.search(r"'nonce-([^']+)'", headers["Content-Security-Policy"])
    assert nonce and f'<script nonce="{nonce.group(1)}">' in response["body"]
    assert headers["Cache-Control"] == "no-store"
    assert '<form method="post" action="/intake"' in response["body"]


def test_post_json_answers_303_to_the_plan_stores_it_and_queues_only_a_confirmation(
    invoke: Invoke, use_db: str
) -> None:
    # Given the sample JSON submission
    response = invoke(load_event("post_json"))
    # Then 303 to the plan's permanent link, the id in the body for JSON clients
    assert response["statusCode"] == 303
    created = body_of(response)
    assert response["headers"]["Location"] == created["location"] == f"/plans/{created['plan_id']}"
    plan = body_of(invoke(get(created["location"], accept="application/json")))
    assert plan["workloads"][0]["recommended_instance_type"] == "inf2.xlarge"
    assert plan["total_monthly_savings_usd"] == "2745.82"
    # and the submission and the plan are stored; no referral draft (not asked for); one email: the confirmation
    assert counts(use_db) == {"intake_submissions": 1, "plans": 1, "drafts": 0, "notification_outbox": 1}
    with get_session_factory(use_db)() as session:
        message = session.scalars(select(OutboxMessage)).one()
    assert message.recipient == "ada@acme.example" and message.kind == "intake_confirm"
    assert message.subject == "Confirm your email address to receive your Chipwise plan"
    assert f"https://plans.example/plans/{created['plan_id']}/confirm?expires=" in message.payload["html"]
    assert "Acme" not in message.payload["html"] and "Acme" not in message.payload["text"]


def test_a_referral_is_drafted_only_when_the_founder_asks(invoke: Invoke, use_db: str) -> None:
    data = json.loads(load_event("post_json")["body"])
    data["partner_referral"] = True
    response = invoke(post_json(data))
    assert response["statusCode"] == 303
    with get_session_factory(use_db)() as session:
        draft = session.scalars(select(Draft)).one()
    assert draft.kind == "partner_referral" and draft.plan_id == body_of(response)["plan_id"]
    assert draft.document["Origin"] == "Partner Referral"


def test_the_stored_plan_is_retrievable_by_its_id_and_not_by_a_guessable_one(invoke: Invoke) -> None:
    # Given two stored plans (different answers: the same answers again would be the same plan)
    first_id = body_of(invoke(load_event("post_json")))["plan_id"]
    other = json.loads(load_event("post_json")["body"])
    other["company"]["name"] = "Other AI"
    second_id = body_of(invoke(post_json(other)))["plan_id"]
    # Then their ids are long, random and unrelated
    assert len(first_id) >= 43 and first_id != second_id
    # and each is served by its id, as JSON or as a page
    first = body_of(invoke(get(f"/plans/{first_id}", accept="application/json")))
    assert first["plan_id"] == first_id and first["referral_draft"] == {}
    page = invoke(get(f"/plans/{first_id}"))
    assert page["statusCode"] == 200 and "Acme AI" in page["body"] and "inf2.xlarge" in page["body"]
    assert page["headers"]["Referrer-Policy"] == "no-referrer"
    # and the public page shows neither the contact's address nor an account id
    assert "ada@acme.example" not in page["body"] and "Ada Lovelace" not in page["body"]
    assert "ada@acme.example" not in json.dumps(first)
    # and nothing is served for a guessed id, a short id or a nearly right one
    nearly = first_id[:-1] + ("B" if first_id.endswith("A") else "A")
    for guess in ("1", "2", "plan", secrets.token_urlsafe(32), nearly, "../intake"):
        missing = invoke(get(f"/plans/{guess}", accept="application/json"))
        assert missing["statusCode"] == 404, guess
        assert "Acme" not in missing["body"]


def test_post_form_from_the_page_answers_303_to_the_plan_page(invoke: Invoke, use_db: str) -> None:
    # Given the sample form-encoded submission (and the same body base64-encoded, as API Gateway may send it)
    locations = []
    for event in (load_event("post_form"), post_form(sample_form(), base64_body=True)):
        response = invoke(event)
        # Then 303 to the plan's page, which links to its own address
        assert response["statusCode"] == 303
        location = response["headers"]["Location"]
        page = invoke(get(location))
        assert page["statusCode"] == 200 and page["headers"]["Content-Type"].startswith("text/html")
        assert "Your credits-and-migration plan, Acme AI" in page["body"]
        assert f'href="{location}"' in page["body"]
        locations.append(location)
    # and the same answers again, moments later, are the same plan: one stored
    assert locations[0] == locations[1]
    assert counts(use_db)["plans"] == 1


def test_invalid_json_gets_422_naming_every_field(invoke: Invoke, use_db: str) -> None:
    # Given the sample invalid submission
    response = invoke(load_event("post_invalid"))
    # Then 422 with the path of every bad field, and nothing stored
    assert response["statusCode"] == 422
    paths = {tuple(item["loc"]) for item in body_of(response)["detail"]}
    assert paths == {
        ("body", "company", "name"),
        ("body", "company", "website"),
        ("body", "company", "country"),
        ("body", "company", "stage"),
        ("body", "contact", "email"),
        ("body", "aws", "account_ids", 0),
        ("body", "workloads", 0, "current_instance_type"),
        ("body", "workloads", 0, "traffic"),
        ("body", "workloads", 0, "instance_count"),
    }
    assert all(item["msg"] for item in body_of(response)["detail"])
    assert counts(use_db)["plans"] == 0


@pytest.mark.parametrize(
    "body, loc",
    [("{not json", ["body", 1]), ("[1, 2]", ["body"])],
)
def test_malformed_json_is_a_422_too(invoke: Invoke, body: str, loc: list[Any]) -> None:
    response = invoke(
        request(
            "POST", "/intake", body=body, headers={"content-type": "application/json", "accept": "application/json"}
        )
    )
    assert response["statusCode"] == 422
    assert body_of(response)["detail"][0]["loc"] == loc


def test_an_invalid_form_comes_back_with_messages_beside_the_fields_and_the_values_kept(
    invoke: Invoke, use_db: str
) -> None:
    # Given the form with a bad email, an unknown instance type and HTML in the company name
    fields = {
        **sample_form(),
        "company.name": f"Acme {EVIL}",
        "contact.email": "ada@nowhere",
        "workloads.0.current_instance_type": "g9.mega",
        "workloads.0.requests_per_day": "lots",
    }
    response = invoke(post_form(fields))
    # Then 422 with the form again: each message beside its field, every value as typed (escaped)
    page = response["body"]
    assert "Input should" not in page
    assert response["statusCode"] == 422
    assert re.search(r'id="contact-email-error">.*?email address', page)
    assert re.search(r'id="workloads-0-current_instance_type-error">.*?g9\.mega', page)
    assert re.search(r'id="workloads-0-requests_per_day-error">.*?Enter a number', page)
    assert 'value="ada@nowhere"' in page and 'value="g9.mega"' in page and 'value="lots"' in page
    assert 'value="chat serving"' in page and 'value="10000000"' not in page  # the typed "lots" replaced it
    assert "&lt;script&gt;alert(&#39;pwned&#39;)&lt;/script&gt;" in page and EVIL not in page
    assert counts(use_db)["plans"] == 0


def test_the_honeypot_stops_bots_and_keeps_the_values_for_people(invoke: Invoke, use_db: str) -> None:
    response = invoke(post_form({**sample_form(), HONEYPOT_FIELD: "http://spam.example"}))
    assert response["statusCode"] == 400
    assert "looked automated" in response["body"]
    assert 'value="Acme AI"' in response["body"] and "spam.example" not in response["body"]
    assert counts(use_db) == {"intake_submissions": 0, "plans": 0, "drafts": 0, "notification_outbox": 0}


def test_a_body_over_the_limit_is_refused_unread(invoke: Invoke, use_db: str) -> None:
    big = intake_dict(workload(name="x" * 10), name="A" * 80)
    big["padding"] = "x" * MAX_BODY_BYTES
    response = invoke(post_json(big))
    assert response["statusCode"] == 413
    assert counts(use_db)["plans"] == 0


def test_too_many_workloads_are_refused_with_the_field_named(invoke: Invoke) -> None:
    data = intake_dict(*[workload(name=f"w{i}") for i in range(MAX_WORKLOADS + 1)])
    response = invoke(post_json(data))
    assert response["statusCode"] == 422
    assert ["body", "workloads"] in [item["loc"] for item in body_of(response)["detail"]]


def test_html_in_fields_is_escaped_in_the_page_the_emails_and_the_draft(invoke: Invoke, use_db: str) -> None:
    # Given a browser submission with HTML in the company, contact and workload names
    fields = {
        **sample_form(),
        "company.name": f"Acme {EVIL}",
        "contact.name": f"Ada {EVIL}",
        "workloads.0.name": f"chat {EVIL}",
    }
    fields["partner_referral"] = "true"
    response = invoke(post_form(fields))
    assert response["statusCode"] == 303
    # Then the page shows the text, never the markup
    page = invoke(get(response["headers"]["Location"]))["body"]
    assert EVIL not in page and "&lt;script&gt;" in page
    # and so do the stored draft and every queued email (which holds none of the typed text at all)
    with get_session_factory(use_db)() as session:
        messages = list(session.scalars(select(OutboxMessage)))
        draft = session.scalars(select(Draft)).one()
    for message in messages:
        assert EVIL not in message.payload["html"] and "pwned" not in message.payload["html"]
    assert EVIL not in draft.body and EVIL not in json.dumps(draft.document)


def test_other_content_types_are_refused(invoke: Invoke) -> None:
    response = invoke(
        request(
            "POST", "/intake", body="<xml/>", headers={"content-type": "application/xml", "accept": "application/json"}
        )
    )
    assert response["statusCode"] == 415


def test_the_openapi_document_describes_the_api(invoke: Invoke) -> None:
    document = body_of(invoke(get("/openapi.json", accept="application/json")))
    assert {"/intake", "/plans/{plan_id}", "/plans/{plan_id}/confirm", "/plans/{plan_id}/delete"} <= set(
        document["paths"]
    )
    post = document["paths"]["/intake"]["post"]
    assert post["requestBody"]["content"]["application/json"]["schema"] == {
        "$ref": "#/components/schemas/IntakeRequest"
    }
    assert "application/x-www-form-urlencoded" in post["requestBody"]["content"]
    assert {"303", "413", "422", "429"} <= set(post["responses"])
    assert {"IntakeRequest", "WorkloadIn", "PlanDocument"} <= set(document["components"]["schemas"])
    assert document["paths"]["/plans/{plan_id}"]["get"]["parameters"][0]["schema"]["pattern"]


def test_an_unreachable_store_is_a_503_not_a_crash(
    intake_handler: Any, lambda_context: Any, monkeypatch: pytest.MonkeyPatch, tmp_path: Any
) -> None:
    from chipwise.settings import get_settings

    monkeypatch.setenv("CHIPWISE_DATABASE_URL", f"sqlite:///{tmp_path}/missing/dir/chipwise.db")
    get_settings.cache_clear()
    response = intake_handler(load_event("post_json"), lambda_context)
    assert response["statusCode"] == 503
    assert "try again" in body_of(response)["message"]


def test_unknown_paths_are_404(invoke: Invoke) -> None:
    assert invoke(get("/wp-admin"))["statusCode"] == 404
    assert invoke(get("/"))["statusCode"] == 303
