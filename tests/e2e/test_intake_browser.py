"""The intake form in headless Chromium (Debian's, through Playwright): fill it, submit it, read the plan;
a submission with errors shows each message beside its field with the typed values kept."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from chipwise.cli.serve import address, make_server
from chipwise.store import ensure_schema

pytestmark = pytest.mark.browser

EVIL = "<img src=x onerror=alert(1)>"


@pytest.fixture
def base_url(use_db: str) -> Iterator[str]:
    """``chipwise serve``'s server on a free 127.0.0.1 port, in a thread."""
    ensure_schema(use_db)
    httpd = make_server("127.0.0.1", 0)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    host, port = address(httpd)
    yield f"http://{host}:{port}"
    httpd.shutdown()
    httpd.server_close()


@pytest.fixture
def page(browser: Any) -> Iterator[Any]:
    context = browser.new_context(viewport={"width": 1100, "height": 900})
    opened = context.new_page()
    dialogs: list[str] = []
    opened.on("dialog", lambda dialog: (dialogs.append(dialog.message), dialog.dismiss()))
    yield opened
    context.close()
    assert dialogs == [], f"a script from a form field ran: {dialogs}"


def open_more(scope: Any, summary: str) -> None:
    """Open a "More about …" section (optional fields are folded away to keep the form short)."""
    scope.locator("summary", has_text=summary).first.click()


def fill_company_and_contact(page: Any, *, company: str = "Acme AI", email: str = "ada@acme.example") -> None:
    page.get_by_label("Company name").fill(company)
    page.get_by_label("Funding stage").select_option("seed")
    page.get_by_label("Raised money from a VC, accelerator or angel group").check()
    open_more(page, "More about the company")
    page.get_by_label("Website").fill("acme.example")
    page.get_by_label("Monthly AWS spend (USD)").fill("40000")
    page.get_by_label("Your name").fill("Ada Lovelace")
    page.get_by_label("Email").fill(email)


def fill_serving_workload(page: Any, block: Any, *, instance: str = "g5.xlarge") -> None:
    block.get_by_label("Name").fill("chat serving")
    block.get_by_label("Model family").fill("llama")
    block.get_by_label("Current instance type").fill(instance)
    block.get_by_label("Instances").fill("6")
    block.get_by_label("Requests a day").fill("10000000")
    block.get_by_label("Requests a second per instance").fill("20")
    open_more(block, "More about serving")
    block.get_by_label("Latency target (ms)").fill("200")
    open_more(block, "More about the model")
    block.get_by_label("Parameters (billions)").fill("8")


def no_horizontal_overflow(page: Any) -> None:
    overflow = page.evaluate("document.documentElement.scrollWidth - window.innerWidth")
    assert overflow <= 0, f"the page is {overflow}px wider than the screen"


def submissions(db_url: str) -> int:
    from sqlalchemy import func, select

    from chipwise.store.session import get_session_factory
    from chipwise.store.tables import IntakeSubmission

    with get_session_factory(db_url)() as session:
        return session.scalar(select(func.count()).select_from(IntakeSubmission)) or 0


def test_fill_the_form_add_a_workload_submit_and_see_the_plan(page: Any, base_url: str, use_db: str) -> None:
    # Given the form, its decision fields first and the stage's own fields only
    page.goto(f"{base_url}/intake")
    workloads = page.locator("fieldset.workload")
    first = workloads.nth(0)
    assert first.get_by_label("Requests a day").is_visible()
    assert not first.get_by_label("Training runs a month").is_visible()  # training-only: hidden for serving
    fill_serving_workload(page, first)
    # When a second workload is added with the keyboard and filled in as training
    add = page.get_by_role("button", name="Add another workload")
    add.focus()
    page.keyboard.press("Enter")
    assert workloads.count() == 2
    second = workloads.nth(1)
    assert second.get_by_label("Name").evaluate("el => el === document.activeElement")
    second.get_by_label("Name").fill("weekly fine-tune")
    second.get_by_label("Stage").select_option("training")
    assert not second.get_by_label("Requests a day").is_visible()  # serving-only: hidden for training
    second.get_by_label("Model family").fill("llama")
    second.get_by_label("Current instance type").fill("p4d.24xlarge")
    second.get_by_label("Instances").fill("2")
    second.get_by_label("Hours a month").fill("160")
    second.get_by_label("Training runs a month").fill("4")
    fill_company_and_contact(page)
    # and the consent notice is there, the referral box unticked
    assert "Who sees your answers" in page.locator("#consent").inner_text()
    assert not page.get_by_label("Yes, introduce me to an AWS partner").is_checked()
    # and the form is submitted
    page.get_by_role("button", name="Get my plan").click()
    # Then the browser lands on the plan's permanent link (303), which shows both workloads and the saving
    page.wait_for_selector("h1:has-text('Your credits-and-migration plan')")
    assert page.url.startswith(f"{base_url}/plans/")
    text = page.locator("main").inner_text()
    assert "chat serving" in text and "weekly fine-tune" in text
    assert "3 × inf2.xlarge" in text and "trn1.32xlarge" in text
    assert "$2,745.82" in text
    assert page.locator("#credits").is_visible() and page.locator("#steps li").count() >= 4
    assert "ada@acme.example" not in page.content()
    # When the page is reloaded
    page.reload()
    page.wait_for_selector("#total-savings")
    # Then it is the same plan, and the store still holds one submission
    assert "chat serving" in page.locator("main").inner_text()
    assert submissions(use_db) == 1
    # When the founder deletes the plan from its page
    plan_url = page.url
    page.get_by_role("button", name="Delete this plan and my answers").click()
    page.wait_for_selector("h1:has-text('Deleted')")
    # Then the answers are gone and the link no longer works
    assert submissions(use_db) == 0
    assert page.goto(plan_url).status == 404


def test_a_submission_with_errors_shows_each_message_beside_its_field(page: Any, base_url: str) -> None:
    # Given values the browser accepts but the server refuses, and HTML in the company name
    page.goto(f"{base_url}/intake")
    fill_serving_workload(page, page.locator("fieldset.workload").nth(0), instance="g9.mega")
    fill_company_and_contact(page, company=f"Acme {EVIL}", email="ada@nowhere")
    # When it is submitted
    page.get_by_role("button", name="Get my plan").click()
    page.wait_for_selector(".error-summary")
    # Then the messages sit beside their fields, described by them, and the summary links to them
    email_error = page.locator("#contact-email-error")
    assert "email address" in email_error.inner_text()
    assert page.get_by_label("Email").get_attribute("aria-invalid") == "true"
    assert "contact-email-error" in (page.get_by_label("Email").get_attribute("aria-describedby") or "")
    instance_error = page.locator("#workloads-0-current_instance_type-error")
    assert "g9.mega" in instance_error.inner_text()
    assert page.locator(".error-summary a").count() == 2
    # and everything typed is still there (folded sections with values open), the HTML shown as text
    assert page.get_by_label("Company name").input_value() == f"Acme {EVIL}"
    assert page.get_by_label("Email").input_value() == "ada@nowhere"
    assert page.get_by_label("Requests a day").input_value() == "10000000"
    assert page.get_by_label("Monthly AWS spend (USD)").is_visible()
    assert page.get_by_label("Raised money from a VC, accelerator or angel group").is_checked()
    assert page.locator("img").count() == 0
    # When the two fields are corrected and the form sent again
    page.get_by_label("Email").fill("ada@acme.example")
    page.get_by_label("Current instance type").fill("g5.xlarge")
    page.get_by_role("button", name="Get my plan").click()
    # Then the plan is made, the company name still shown as text
    page.wait_for_selector("#total-savings")
    assert f"Acme {EVIL}" in page.locator("h1").inner_text()


def test_the_form_works_without_javascript_for_one_workload(browser: Any, base_url: str) -> None:
    context = browser.new_context(java_script_enabled=False)
    plain = context.new_page()
    plain.goto(f"{base_url}/intake")
    assert not plain.get_by_role("button", name="Add another workload").is_visible()  # needs the script
    fill_serving_workload(plain, plain.locator("fieldset.workload").nth(0))
    fill_company_and_contact(plain)
    plain.get_by_role("button", name="Get my plan").click()
    plain.wait_for_selector("#total-savings")
    assert "3 × inf2.xlarge" in plain.locator("main").inner_text()
    context.close()


@pytest.mark.parametrize("width", [1280, 390])
def test_the_form_and_the_plan_fit_the_screen(browser: Any, base_url: str, width: int) -> None:
    context = browser.new_context(viewport={"width": width, "height": 900}, is_mobile=width < 600)
    page = context.new_page()
    # Given the form at this width
    page.goto(f"{base_url}/intake")
    no_horizontal_overflow(page)
    name_box = page.get_by_label("Company name").bounding_box()
    assert name_box is not None and name_box["width"] > min(250, width * 0.6)
    # When it is filled in (long unbroken text included) and submitted
    fill_serving_workload(page, page.locator("fieldset.workload").nth(0))
    fill_company_and_contact(page, company="Acme" + "X" * 100)
    no_horizontal_overflow(page)
    page.get_by_role("button", name="Get my plan").click()
    page.wait_for_selector("#total-savings")
    # Then the plan fits too: no table is wider than the screen, no money figure is clipped
    no_horizontal_overflow(page)
    for figure in page.locator("td.num").all():
        assert figure.evaluate("el => el.scrollWidth <= el.clientWidth + 1"), figure.inner_text()
    cell = page.locator("td[data-label]").first
    display = cell.evaluate("el => getComputedStyle(el).display")
    label = cell.evaluate("el => getComputedStyle(el, '::before').content")
    if width < 600:  # on a phone the tables stack, and each cell says what it is
        assert display == "block" and label == '"Today: "'
    else:
        assert display == "table-cell"
    context.close()


def test_the_founder_email_reads_at_phone_width(browser: Any) -> None:
    from datetime import UTC, datetime

    from chipwise.intake import views
    from chipwise.plan.intake import IntakeRequest
    from chipwise.plan.planner import build_plan

    sample = Path(__file__).resolve().parents[2] / "devkit" / "chipwise_devkit" / "demo" / "intake.json"
    intake = IntakeRequest.model_validate_json(sample.read_text())
    plan = build_plan(intake, plan_id="p" * 43, created_at=datetime(2026, 11, 25, tzinfo=UTC)).public()
    html, _ = views.contact_email(
        plan, link="https://plans.example/plans/x", delete_link="https://plans.example/d", expires_at=plan.created_at
    )
    for width in (390, 1280):
        context = browser.new_context(viewport={"width": width, "height": 900})
        page = context.new_page()
        page.set_content(html)
        no_horizontal_overflow(page)
        assert page.locator("[data-figure=total-savings]").is_visible()
        context.close()
