"""Mail volume (issue 26 item 3): a global daily cap on confirmation emails (past it the plan is shown, not
mailed, and the advisory digest says so), IPv6 clients keyed on their /48, the bot trap for JSON clients too,
addresses normalised with NFKC and ``%`` routing refused."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from intake_events import Invoke, get, post_json
from plan_factories import intake_dict, workload
from sqlalchemy import func, select

from chipwise.intake import service
from chipwise.intake.limits import normalise_address
from chipwise.plan.intake import IntakeRequest
from chipwise.settings import get_settings
from chipwise.store.session import get_session_factory
from chipwise.store.tables import IntakeSubmission, OutboxMessage


def _settings(monkeypatch: pytest.MonkeyPatch, *, cap: int, per_client: int) -> None:
    monkeypatch.setenv("CHIPWISE_INTAKE_CONFIRMATION_EMAILS_PER_DAY", str(cap))
    monkeypatch.setenv("CHIPWISE_INTAKE_SUBMISSIONS_PER_CLIENT_PER_HOUR", str(per_client))
    monkeypatch.setenv("CHIPWISE_ADVISORY_EMAIL", "advisory@example.com")
    get_settings.cache_clear()


def _confirmations(db_url: str) -> int:
    with get_session_factory(db_url)() as session:
        count = session.scalar(
            select(func.count()).select_from(OutboxMessage).where(OutboxMessage.kind == service.CONFIRM_KIND)
        )
        return int(count or 0)


def _from_one_slash_48(invoke: Invoke, n: int) -> dict[str, Any]:
    """The n-th submission: its own address and answers, from its own /64 of 2001:db8:7::/48."""
    data = intake_dict(workload(), name=f"Stranger {n} AI")
    data["contact"]["email"] = f"stranger{n}@example.org"
    return invoke(post_json(data, source_ip=f"2001:db8:7:{n:x}::1"))


def test_sixty_slash_64s_of_one_slash_48_are_one_client(
    invoke: Invoke, use_db: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Given a daily cap of 25 confirmation emails and the default 10 submissions a client an hour
    _settings(monkeypatch, cap=25, per_client=10)
    # When 60 submissions come from 60 different /64s of one /48
    statuses = [_from_one_slash_48(invoke, n)["statusCode"] for n in range(60)]
    # Then the /48 is one client: 10 accepted, 50 refused, and 10 emails (at most the cap, at most the limit)
    assert statuses.count(303) == 10 and statuses.count(429) == 50
    assert _confirmations(use_db) == 10


def test_past_the_daily_cap_plans_are_shown_not_mailed_and_the_digest_says_so(
    invoke: Invoke, use_db: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Given a cap of 25 confirmation emails a day and no per-client limit in the way
    _settings(monkeypatch, cap=25, per_client=1000)
    # When 60 strangers submit from one /48
    responses = [_from_one_slash_48(invoke, n) for n in range(60)]
    # Then all 60 plans are made, 25 confirmation emails are queued, 35 withheld
    assert [r["statusCode"] for r in responses] == [303] * 60
    assert _confirmations(use_db) == 25
    with get_session_factory(use_db)() as session:
        withheld = session.scalar(
            select(func.count()).select_from(IntakeSubmission).where(IntakeSubmission.mail_withheld.is_(True))
        )
    assert withheld == 35
    # And the 26th plan's page says it was not emailed because the day's emails are used up
    page = invoke(get(responses[25]["headers"]["Location"]))
    assert page["statusCode"] == 200 and "we send a limited number of emails a day" in page["body"]
    first = invoke(get(responses[0]["headers"]["Location"]))
    assert "We sent a confirmation request" in first["body"]
    # And the next day's advisory digest says how many were not mailed
    tomorrow = datetime.now(UTC) + timedelta(days=1)
    assert service.run_retention(now=tomorrow).digest_queued
    with get_session_factory(use_db)() as session:
        digest = session.scalars(select(OutboxMessage).where(OutboxMessage.kind == service.DIGEST_KIND)).one()
    expected = "The daily cap of 25 confirmation emails was reached: 35 plans below were shown on the page and not"
    assert expected in digest.payload["text"]
    assert "35 plans below were shown on the page and not mailed" in digest.payload["html"]


def test_the_bot_trap_holds_for_json_clients(invoke: Invoke, use_db: str) -> None:
    # Given a JSON body that fills the hidden field, and one that leaves it empty
    trapped = intake_dict(workload(), name="Bot AI")
    trapped["nickname"] = "bot"
    honest = intake_dict(workload(), name="Honest AI")
    honest["nickname"] = ""
    # When both are posted
    refused = invoke(post_json(trapped, source_ip="192.0.2.50"))
    accepted = invoke(post_json(honest, source_ip="192.0.2.51"))
    # Then the trapped one is a 400, stored nowhere, mailed to nobody; the honest one is planned
    assert refused["statusCode"] == 400 and "looked automated" in json.loads(refused["body"])["message"]
    assert accepted["statusCode"] == 303
    with get_session_factory(use_db)() as session:
        names = session.scalars(select(IntakeSubmission.company_name)).all()
    assert names == ["Honest AI"] and _confirmations(use_db) == 1


def test_a_fullwidth_address_is_the_address_it_stands_for() -> None:
    fullwidth = "ａｄａ．ｌｏｖｅｌａｃｅ＠ｇｍａｉｌ．ｃｏｍ"
    assert normalise_address(fullwidth) == normalise_address("adalovelace@gmail.com") == "adalovelace@gmail.com"
    data = intake_dict(workload())
    data["contact"]["email"] = "ａｄａ@example.com"
    assert str(IntakeRequest.model_validate(data).contact.email) == "ada@example.com"


def test_a_fullwidth_address_uses_the_same_daily_places(invoke: Invoke, use_db: str) -> None:
    # Given one confirmation already sent to ada@example.com today
    data = intake_dict(workload(), name="First AI")
    data["contact"]["email"] = "ada@example.com"
    assert invoke(post_json(data, source_ip="192.0.2.60"))["statusCode"] == 303
    # When its fullwidth form submits again with other answers
    again = intake_dict(workload(), name="Second AI")
    again["contact"]["email"] = "ａｄａ@ｅｘａｍｐｌｅ.com"
    assert invoke(post_json(again, source_ip="192.0.2.61"))["statusCode"] == 303
    # Then no second email goes out, and the address is stored in its plain form
    assert _confirmations(use_db) == 1
    with get_session_factory(use_db)() as session:
        assert set(session.scalars(select(IntakeSubmission.contact_email))) == {"ada@example.com"}


@pytest.mark.parametrize("address", ["victim%evil.example@relay.example", "a%b@example.com"])
def test_percent_routing_is_refused(invoke: Invoke, use_db: str, address: str) -> None:
    data = intake_dict(workload())
    data["contact"]["email"] = address
    refused = invoke(post_json(data, source_ip="192.0.2.70"))
    assert refused["statusCode"] == 422
    assert "routes mail through another host" in refused["body"]
    assert _confirmations(use_db) == 0
