"""The intake as an attacker would use it: not a mail relay, limited per client and per address (under races
too), hostile bodies answered with a 4xx and a reason, and no contact data in the logs."""

from __future__ import annotations

import io
import json
import logging
import re
import threading
from collections.abc import Iterator
from typing import Any

import pytest
from intake_events import Invoke, get, load_event, post_form, post_json, request, sample_form
from plan_factories import intake_dict, workload
from sqlalchemy import func, select

from chipwise.intake import service
from chipwise.intake.limits import normalise_address
from chipwise.observability import logger
from chipwise.plan.intake import IntakeRequest
from chipwise.settings import get_settings
from chipwise.store.session import get_session_factory
from chipwise.store.tables import IntakeSubmission, OutboxMessage

MAILBOX = "ada.lovelace@gmail.com"
VARIANTS = [
    "ada.lovelace@gmail.com",
    "Ada.Lovelace@Gmail.com",
    "adalovelace@gmail.com",
    "a.d.a.lovelace+plans@googlemail.com",
    "ADA.LOVELACE+x@GMAIL.COM",
]
URL = "https://evil.example/login"


def body_of(response: dict[str, Any]) -> Any:
    return json.loads(response["body"])


def outbox(db_url: str) -> list[OutboxMessage]:
    with get_session_factory(db_url)() as session:
        return list(session.scalars(select(OutboxMessage)))


def submissions(db_url: str) -> int:
    with get_session_factory(db_url)() as session:
        return session.scalar(select(func.count()).select_from(IntakeSubmission)) or 0


def limits(monkeypatch: pytest.MonkeyPatch, *, per_client: int = 10, per_address: int = 10) -> None:
    monkeypatch.setenv("CHIPWISE_INTAKE_SUBMISSIONS_PER_CLIENT_PER_HOUR", str(per_client))
    monkeypatch.setenv("CHIPWISE_INTAKE_SUBMISSIONS_PER_ADDRESS_PER_DAY", str(per_address))
    get_settings.cache_clear()


def test_address_variants_normalise_to_one_mailbox() -> None:
    assert {normalise_address(v) for v in VARIANTS} == {"adalovelace@gmail.com"}
    assert normalise_address("Bob.Smith+tag@Example.COM") == "bob.smith@example.com"  # dots kept off Gmail


def test_an_ipv6_client_is_its_slash_48() -> None:
    from chipwise.intake.limits import client_key

    assert client_key("2001:db8:1:2::1") == client_key("2001:db8:1:2:ffff:ffff:ffff:fffe")
    assert client_key("2001:db8:1:2::1") == client_key("2001:db8:1:ffff::1")  # another /64 of the same /48
    assert client_key("2001:db8:1:2::1") != client_key("2001:db8:2:2::1")
    assert client_key("::ffff:192.0.2.1") == client_key("192.0.2.1")


def test_fifty_submissions_naming_one_address_yield_at_most_one_email_to_it(
    invoke: Invoke, use_db: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Given limits high enough that all 50 are accepted, from 50 clients, each with different answers
    limits(monkeypatch, per_client=1000, per_address=1000)
    for n in range(50):
        data = intake_dict(workload(), name=f"Company {n} {URL}")
        data["contact"]["email"] = VARIANTS[n % len(VARIANTS)]
        response = invoke(post_json(data, source_ip=f"198.51.100.{n}"))
        assert response["statusCode"] == 303, response["body"]
    # Then every plan is kept, and the mailbox got one email: the confirmation request
    assert submissions(use_db) == 50
    to_mailbox = [m for m in outbox(use_db) if normalise_address(m.recipient) == "adalovelace@gmail.com"]
    assert len(to_mailbox) == 1 and to_mailbox[0].kind == "intake_confirm"
    # and no subject holds anything the submitters typed
    for message in outbox(use_db):
        assert "Company" not in (message.subject or "") and "evil" not in (message.subject or "")


def test_the_address_limit_answers_429_for_json_and_form_alike(invoke: Invoke, use_db: str) -> None:
    # Given the default limit of 10 submissions a day for one address, from different clients
    for n in range(10):
        data = intake_dict(workload(), name=f"Acme {n}")
        data["contact"]["email"] = VARIANTS[n % len(VARIANTS)]
        assert invoke(post_json(data, source_ip=f"198.51.100.{n}"))["statusCode"] == 303
    # When an 11th comes, as JSON and as the form
    data = intake_dict(workload(), name="Acme 11")
    data["contact"]["email"] = "adalovelace+again@gmail.com"
    refused = invoke(post_json(data, source_ip="198.51.100.200"))
    form = {**sample_form(), "company.name": "Acme 12", "contact.email": "AdaLovelace@gmail.com"}
    refused_form = invoke(post_form(form, source_ip="198.51.100.201"))
    # Then 429 with a clear message (the form shown again, values kept), and nothing more stored
    assert refused["statusCode"] == 429 and "this email address" in body_of(refused)["message"]
    assert int(refused["headers"]["Retry-After"]) > 0
    assert refused_form["statusCode"] == 429 and "this email address" in refused_form["body"]
    assert 'value="Acme 12"' in refused_form["body"]
    assert submissions(use_db) == 10


def test_one_client_is_limited_per_hour_whatever_the_address(invoke: Invoke, use_db: str) -> None:
    for n in range(10):
        data = intake_dict(workload(), name=f"Acme {n}")
        data["contact"]["email"] = f"person{n}@example.com"
        assert invoke(post_json(data, source_ip="192.0.2.9"))["statusCode"] == 303
    data = intake_dict(workload(), name="Acme 10")
    data["contact"]["email"] = "someone.else@example.com"
    refused = invoke(post_json(data, source_ip="192.0.2.9"))
    assert refused["statusCode"] == 429 and "your network" in body_of(refused)["message"]
    # the client's limit comes from the request context, not from a header the client can set
    spoofed = post_json(data, source_ip="192.0.2.9")
    spoofed["headers"]["x-forwarded-for"] = "203.0.113.99"
    assert invoke(spoofed)["statusCode"] == 429
    assert invoke(post_json(data, source_ip="192.0.2.10"))["statusCode"] == 303


def test_a_twenty_way_race_never_exceeds_the_limits(use_db: str, monkeypatch: pytest.MonkeyPatch) -> None:
    # Given a limit of 5 submissions for one address, and 20 submissions for it racing from 20 clients
    limits(monkeypatch, per_client=1000, per_address=5)
    outcomes: list[str] = []
    barrier = threading.Barrier(20)

    def submit(n: int) -> None:
        data = intake_dict(workload(), name=f"Race {n}")
        data["contact"]["email"] = VARIANTS[n % len(VARIANTS)]
        request_ = IntakeRequest.model_validate(data)
        barrier.wait()
        try:
            service.submit_intake(request_, client=f"198.51.100.{n}")
            outcomes.append("stored")
        except service.RateLimited:
            outcomes.append("limited")

    threads = [threading.Thread(target=submit, args=(n,)) for n in range(20)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    # Then exactly 5 were stored, the rest refused, and the mailbox got one email
    assert sorted(outcomes) == ["limited"] * 15 + ["stored"] * 5
    assert submissions(use_db) == 5
    assert len([m for m in outbox(use_db) if m.kind == "intake_confirm"]) == 1


def test_links_in_emails_come_from_the_setting_never_the_request(invoke: Invoke, use_db: str) -> None:
    event = load_event("post_json")
    event["headers"].update({"host": "evil.example", "x-forwarded-host": "evil.example"})
    event["requestContext"]["domainName"] = "evil.example"
    assert invoke(event)["statusCode"] == 303
    message = outbox(use_db)[0]
    for part in (message.payload["html"], message.payload["text"]):
        assert "evil.example" not in part and "https://plans.example/plans/" in part


def test_without_a_public_base_url_nothing_is_emailed(
    invoke: Invoke, use_db: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("CHIPWISE_PUBLIC_BASE_URL")
    get_settings.cache_clear()
    response = invoke(load_event("post_json"))
    assert response["statusCode"] == 303 and outbox(use_db) == []
    assert invoke(get(response["headers"]["Location"]))["statusCode"] == 200


# --- hostile bodies: always a 4xx with a reason -----------------------------------------------------------


def _json_event(raw: str | bytes) -> dict[str, Any]:
    return request(
        "POST",
        "/intake",
        body=raw,
        base64_body=isinstance(raw, bytes),
        headers={"content-type": "application/json", "accept": "application/json"},
    )


def _form_event(raw: str) -> dict[str, Any]:
    return request(
        "POST",
        "/intake",
        body=raw,
        headers={"content-type": "application/x-www-form-urlencoded", "accept": "text/html"},
    )


@pytest.mark.parametrize(
    "event, status, reason",
    [
        pytest.param(_json_event("[" * 1000 + "]" * 1000), 422, "nests deeper", id="json-1000-deep"),
        pytest.param(_json_event('{"a":' * 600 + "1" + "}" * 600), 422, "nests deeper", id="object-600-deep"),
        pytest.param(_json_event('{"company": NaN}'), 422, "Invalid JSON", id="nan"),
        pytest.param(_json_event('{"company": ' + "9" * 5000 + "}"), 422, "Invalid JSON", id="huge-int"),
        pytest.param(_json_event(b'{"company": "\xff\xfe"}'), 422, "UTF-8", id="not-utf8"),
        pytest.param(_form_event("company=x"), 400, "could not be read", id="form-company=x"),
        pytest.param(_form_event("workloads.0=x"), 400, "could not be read", id="form-workloads.0=x"),
        pytest.param(_form_event("company.name=A%00B"), 400, "NUL", id="form-nul"),
        pytest.param(_form_event("company.name=%FF"), 400, "could not be read", id="form-bad-utf8"),
    ],
)
def test_malformed_bodies_are_a_4xx_with_a_reason(
    invoke: Invoke, event: dict[str, Any], status: int, reason: str
) -> None:
    response = invoke(event)
    assert response["statusCode"] == status
    assert reason in response["body"]


def test_a_nul_or_control_character_in_any_text_field_is_named(invoke: Invoke, use_db: str) -> None:
    data = intake_dict(workload(name="chat\u0000serving"), name="Acme\u0007")
    data["contact"]["name"] = "Ada\ud800"
    response = invoke(_json_event(json.dumps(data)))
    assert response["statusCode"] == 422
    paths = {tuple(item["loc"]) for item in body_of(response)["detail"]}
    assert paths == {
        ("body", "workloads", 0, "name"),
        ("body", "company", "name"),
        ("body", "contact", "name"),
    }
    assert submissions(use_db) == 0


@pytest.mark.parametrize("value", ["1e-30", 1e-30, "0.0000001"])
def test_tiny_decimals_are_refused_not_planned(invoke: Invoke, value: Any) -> None:
    response = invoke(post_json(intake_dict(workload(requests_per_day=value))))
    assert response["statusCode"] == 422
    detail = body_of(response)["detail"]
    assert detail[0]["loc"] == ["body", "workloads", 0, "requests_per_day"]
    assert "digits" in detail[0]["msg"] or "decimal places" in detail[0]["msg"]


@pytest.fixture
def every_log_line() -> Iterator[io.StringIO]:
    """Every line the service logs at any level, formatted as in Lambda (JSON with every extra key)."""
    log = logger()
    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    handler.setFormatter(log.registered_formatter)
    level = log.log_level
    log.addHandler(handler)
    log.setLevel("DEBUG")
    yield stream
    log.removeHandler(handler)
    log.setLevel(level)


def test_no_contact_data_reaches_the_logs(invoke: Invoke, use_db: str, every_log_line: io.StringIO) -> None:
    # Given a submission, an invalid one with a NUL byte, a confirmation and a deletion
    created = invoke(load_event("post_json"))
    bad = intake_dict(workload(), name="Acme\u0000")
    invoke(_json_event(json.dumps(bad)))
    confirm = outbox(use_db)[0].payload["text"]
    link = re.search(r"https://plans\.example(/plans/\S+/confirm)\?(\S+)", confirm)
    assert link
    invoke(
        request(
            "POST", link.group(1), body=link.group(2), headers={"content-type": "application/x-www-form-urlencoded"}
        )
    )
    page = invoke(get(created["headers"]["Location"]))["body"]
    fields = dict(re.findall(r'name="(expires|signature)" value="([^"]+)"', page))
    invoke(
        request(
            "POST",
            created["headers"]["Location"] + "/delete",
            body=f"expires={fields['expires']}&signature={fields['signature']}",
            headers={"content-type": "application/x-www-form-urlencoded"},
        )
    )
    # Then the logs name what happened, never who
    text = every_log_line.getvalue()
    assert "plan made" in text and "address confirmed" in text and "deleted at its owner" in text
    assert "ada@acme.example" not in text and "Ada Lovelace" not in text and "Acme" not in text
