"""A plan's life: confirmed by its owner (then emailed once), deleted on request, expired and purged by the
retention job; the advisory team hears of submissions once a day."""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from intake_events import Invoke, get, load_event, request
from plan_factories import intake
from sqlalchemy import func, select

from chipwise.intake import service
from chipwise.store.session import get_session_factory
from chipwise.store.tables import Draft, IntakeLimit, IntakeSubmission, OutboxMessage, Plan

FORM = {"content-type": "application/x-www-form-urlencoded", "accept": "text/html"}


def rows(db_url: str) -> dict[str, int]:
    with get_session_factory(db_url)() as session:
        return {
            table.__tablename__: session.scalar(select(func.count()).select_from(table)) or 0
            for table in (IntakeSubmission, Plan, Draft, OutboxMessage, IntakeLimit)
        }


def messages(db_url: str) -> list[OutboxMessage]:
    with get_session_factory(db_url)() as session:
        return list(session.scalars(select(OutboxMessage).order_by(OutboxMessage.id)))


def link_in(text: str, action: str) -> tuple[str, str]:
    """(path, query) of the confirm or delete link in an email's text."""
    found = re.search(rf"https://plans\.example(/plans/[^/\s]+/{action})\?(\S+)", text)
    assert found, text
    return found.group(1), found.group(2)


def submit(invoke: Invoke) -> str:
    response = invoke(load_event("post_json"))
    assert response["statusCode"] == 303
    location: str = response["headers"]["Location"]
    return location


def test_the_owner_confirms_and_gets_the_plan_once(invoke: Invoke, use_db: str) -> None:
    # Given a submission and its confirmation email
    location = submit(invoke)
    path, query = link_in(messages(use_db)[0].payload["text"], "confirm")
    # When the link is opened (a mail scanner would do this too): a page with a button, nothing sent
    opened = invoke(request("GET", path, query=query))
    assert opened["statusCode"] == 200 and "Confirm and email me the plan" in opened["body"]
    assert len(messages(use_db)) == 1
    # and the button is pressed, twice
    for _ in range(2):
        assert invoke(request("POST", path, body=query, headers=FORM))["statusCode"] == 200
    # Then the plan is queued once, to the address, with a fixed subject and links on the configured address
    plan_emails = [m for m in messages(use_db) if m.kind == "plan"]
    assert len(plan_emails) == 1
    email = plan_emails[0]
    assert email.recipient == "ada@acme.example" and email.subject == "Your Chipwise AI accelerator plan"
    assert f"https://plans.example{location}" in email.payload["text"]
    assert "$2,745.82" in email.payload["html"]
    # and the plan page says so
    assert "Your address is confirmed" in invoke(get(location))["body"]


@pytest.mark.parametrize("tamper", ["signature", "expires", "purpose"])
def test_a_tampered_link_does_nothing(invoke: Invoke, use_db: str, tamper: str) -> None:
    submit(invoke)
    path, query = link_in(messages(use_db)[0].payload["text"], "confirm")
    fields = dict(part.split("=", 1) for part in query.split("&"))
    if tamper == "signature":
        fields["signature"] = ("A" if fields["signature"][0] != "A" else "B") + fields["signature"][1:]
    elif tamper == "expires":
        fields["expires"] = str(int(fields["expires"]) + 3600)
    else:
        path = path.replace("/confirm", "/delete")  # a confirm link is not a delete link
    query = "&".join(f"{k}={v}" for k, v in fields.items())
    response = invoke(request("POST", path, body=query, headers=FORM))
    assert response["statusCode"] == 404 and "expired or is not valid" in response["body"]
    assert rows(use_db)["intake_submissions"] == 1 and len(messages(use_db)) == 1


def test_an_expired_confirmation_link_does_nothing(invoke: Invoke, use_db: str) -> None:
    location = submit(invoke)
    _path, query = link_in(messages(use_db)[0].payload["text"], "confirm")
    fields = dict(part.split("=", 1) for part in query.split("&"))
    later = datetime.fromtimestamp(int(fields["expires"]), UTC) + timedelta(seconds=1)
    with pytest.raises(service.NotFound):
        service.confirm_address(location.rsplit("/", 1)[1], fields["expires"], fields["signature"], now=later)


def test_the_owner_deletes_the_plan_from_its_page_and_everything_goes(invoke: Invoke, use_db: str) -> None:
    # Given a plan with a referral draft and a confirmation email
    data = json.loads(load_event("post_json")["body"])
    data["partner_referral"] = True
    response = invoke(request("POST", "/intake", body=json.dumps(data), headers={"content-type": "application/json"}))
    location = response["headers"]["Location"]
    assert rows(use_db)["drafts"] == 1
    # When the page's delete button is pressed
    page = invoke(get(location))["body"]
    assert 'id="delete-form"' in page
    fields = dict(re.findall(r'name="(expires|signature)" value="([^"]+)"', page))
    done = invoke(
        request("POST", f"{location}/delete", body="&".join(f"{k}={v}" for k, v in fields.items()), headers=FORM)
    )
    # Then the plan, the answers, the contact data, the draft and the unsent email are gone; the link is dead
    assert done["statusCode"] == 200 and "deleted" in done["body"]
    counts = rows(use_db)
    assert counts["intake_submissions"] == counts["plans"] == counts["drafts"] == counts["notification_outbox"] == 0
    assert invoke(get(location))["statusCode"] == 404


def test_the_delete_link_in_the_email_works_too(invoke: Invoke, use_db: str) -> None:
    location = submit(invoke)
    path, query = link_in(messages(use_db)[0].payload["text"], "delete")
    assert "Delete the plan and my answers" in invoke(request("GET", path, query=query))["body"]
    assert invoke(request("POST", path, body=query, headers=FORM))["statusCode"] == 200
    assert invoke(get(location))["statusCode"] == 404


def test_retention_deletes_old_submissions_their_mail_and_counters(use_db: str) -> None:
    # Given a submission 91 days old and one from today
    now = datetime(2026, 11, 25, 12, 0, tzinfo=UTC)
    old = service.submit_intake(intake(), client="192.0.2.1", now=now - timedelta(days=91))
    new = service.submit_intake(intake(name="Fresh AI"), client="192.0.2.2", now=now)
    # Then the old plan's link no longer works, even before the job runs
    with pytest.raises(service.NotFound):
        service.load_plan(old.plan.plan_id, now=now)
    # When the retention job runs
    report = service.run_retention(now=now)
    # Then the old submission, its plan, its email and its rate-limit counters are gone; today's stay
    assert report.submissions_deleted == 1 and report.limits_deleted >= 2
    assert rows(use_db)["intake_submissions"] == 1 and rows(use_db)["plans"] == 1
    assert service.load_plan(new.plan.plan_id, now=now).plan.company == "Fresh AI"
    with get_session_factory(use_db)() as session:
        left = list(session.scalars(select(OutboxMessage.dedupe_key)))
    assert all(old.plan.plan_id not in key for key in left)
    assert len([key for key in left if key.endswith(":confirm")]) == 1


def test_retention_follows_the_setting(use_db: str, monkeypatch: pytest.MonkeyPatch) -> None:
    from chipwise.settings import get_settings

    monkeypatch.setenv("CHIPWISE_INTAKE_RETENTION_DAYS", "7")
    get_settings.cache_clear()
    now = datetime(2026, 11, 25, 12, 0, tzinfo=UTC)
    service.submit_intake(intake(), client="192.0.2.1", now=now - timedelta(days=8))
    assert service.run_retention(now=now).submissions_deleted == 1


def test_the_advisory_team_gets_one_digest_a_day(use_db: str) -> None:
    # Given three submissions yesterday (one asking for a referral) and one today
    now = datetime(2026, 11, 25, 6, 0, tzinfo=UTC)
    yesterday = now - timedelta(hours=12)
    for n in range(3):
        data: dict[str, Any] = json.loads(load_event("post_json")["body"])
        data["company"]["name"] = f"Startup {n} https://evil.example"
        data["contact"]["email"] = f"founder{n}@example.com"
        data["partner_referral"] = n == 0
        from chipwise.plan.intake import IntakeRequest

        service.submit_intake(IntakeRequest.model_validate(data), client=f"192.0.2.{n}", now=yesterday)
    service.submit_intake(intake(name="Today AI"), client="192.0.2.9", now=now)
    # When the daily job runs twice
    assert service.run_retention(now=now).digest_queued
    assert not service.run_retention(now=now + timedelta(hours=1)).digest_queued
    # Then one digest went to the advisory team, naming yesterday's three, with no typed text in the subject
    digests = [m for m in messages(use_db) if m.kind == "intake_digest"]
    assert len(digests) == 1
    digest = digests[0]
    assert digest.recipient == "advisory@example.com"
    assert digest.subject == "[Chipwise] Intake digest for 2026-11-24: 3 new plans"
    assert digest.payload["html"].count("Open the plan") == 3 and "Today AI" not in digest.payload["html"]
    assert "evil.example" not in digest.payload["html"] and "partner referral" in digest.payload["html"]
    # and no per-submission email went to the advisory team
    assert [m.recipient for m in messages(use_db)].count("advisory@example.com") == 1


def test_the_scheduled_event_runs_retention_through_the_handler(
    intake_handler: Any, lambda_context: Any, use_db: str
) -> None:
    old = datetime.now(UTC) - timedelta(days=120)
    service.submit_intake(intake(), client="192.0.2.1", now=old)
    result = intake_handler({"chipwise_job": "intake_retention"}, lambda_context)
    assert result["submissions_deleted"] == 1 and rows(use_db)["intake_submissions"] == 0


def test_a_plan_stored_in_an_earlier_shape_is_a_404_not_a_500(invoke: Invoke, use_db: str) -> None:
    location = submit(invoke)
    with get_session_factory(use_db).begin() as session:
        row = session.get(Plan, location.rsplit("/", 1)[1])
        assert row is not None
        document = dict(row.document)
        document["totals"] = {**document["totals"], "largest_eligible_credit_usd": "1000000.00"}
        row.document = document
    response = invoke(get(location))
    assert response["statusCode"] == 404 and "earlier version" in response["body"]
