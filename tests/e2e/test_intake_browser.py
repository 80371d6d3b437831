"""The intake form in headless Chromium (Debian's, through Playwright): fill it, submit it, read the plan;
a submission with errors shows each message beside its field with the typed values kept."""

from __future__ import annotations

import threading
from collections.abc import Iterator
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


def fill_company_and_contact(page: Any, *, company: str = "Acme AI", email: str = "ada@acme.example") -> None:
    page.get_by_label("Company name").fill(company)
    page.get_by_label("Website").fill("acme.example")
    page.get_by_label("Funding stage").select_option("seed")
    page.get_by_label("Raised money from a VC, accelerator or angel group").check()
    page.get_by_label("Your name").fill("Ada Lovelace")
    page.get_by_label("Email").fill(email)
    page.get_by_label("Monthly AWS spend (USD)").fill("40000")


def fill_serving_workload(page: Any, block: Any, *, instance: str = "g5.xlarge") -> None:
    block.get_by_label("Name").fill("chat serving")
    block.get_by_label("Model family").fill("llama")
    block.get_by_label("Parameters (billions)").fill("8")
    block.get_by_label("Current instance type").fill(instance)
    block.get_by_label("Instances").fill("6")
    block.get_by_label("Requests a day").fill("10000000")
    block.get_by_label("Requests a second per instance").fill("20")
    block.get_by_label("Latency target (ms)").fill("200")


def test_fill_the_form_add_a_workload_submit_and_see_the_plan(page: Any, base_url: str) -> None:
    # Given the form
    page.goto(f"{base_url}/intake")
    assert page.get_by_label("Country").input_value() == "US"  # a sensible default
    fill_company_and_contact(page)
    workloads = page.locator("fieldset.workload")
    fill_serving_workload(page, workloads.nth(0))
    # When a second workload is added with the keyboard and filled in
    add = page.get_by_role("button", name="Add another workload")
    add.focus()
    page.keyboard.press("Enter")
    assert workloads.count() == 2
    second = workloads.nth(1)
    assert second.get_by_label("Name").evaluate("el => el === document.activeElement")
    second.get_by_label("Name").fill("weekly fine-tune")
    second.get_by_label("Stage").select_option("training")
    second.get_by_label("Model family").fill("llama")
    second.get_by_label("Current instance type").fill("p4d.24xlarge")
    second.get_by_label("Instances").fill("2")
    second.get_by_label("Hours a month").fill("160")
    second.get_by_label("Training runs a month").fill("4")
    # and the form is submitted
    page.get_by_role("button", name="Get my plan").click()
    # Then the plan page shows both workloads with their targets and the saving
    page.wait_for_selector("h1:has-text('Your credits-and-migration plan')")
    text = page.locator("main").inner_text()
    assert "chat serving" in text and "weekly fine-tune" in text
    assert "3 × inf2.xlarge" in text and "trn1.32xlarge" in text
    assert "$2,745.82" in text
    assert page.locator("#credits").is_visible() and page.locator("#steps li").count() >= 4
    # and its permanent link serves the same plan
    page.get_by_role("link", name="Permanent link to this plan").click()
    page.wait_for_selector("#total-savings")
    assert page.url.startswith(f"{base_url}/plans/")
    assert "chat serving" in page.locator("main").inner_text()


def test_a_submission_with_errors_shows_each_message_beside_its_field(page: Any, base_url: str) -> None:
    # Given values the browser accepts but the server refuses, and HTML in the company name
    page.goto(f"{base_url}/intake")
    fill_company_and_contact(page, company=f"Acme {EVIL}", email="ada@nowhere")
    fill_serving_workload(page, page.locator("fieldset.workload").nth(0), instance="g9.mega")
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
    # and everything typed is still there, the HTML shown as text
    assert page.get_by_label("Company name").input_value() == f"Acme {EVIL}"
    assert page.get_by_label("Email").input_value() == "ada@nowhere"
    assert page.get_by_label("Requests a day").input_value() == "10000000"
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
    fill_company_and_contact(plain)
    fill_serving_workload(plain, plain.locator("fieldset.workload").nth(0))
    plain.get_by_role("button", name="Get my plan").click()
    plain.wait_for_selector("#total-savings")
    assert "3 × inf2.xlarge" in plain.locator("main").inner_text()
    context.close()


def test_the_form_is_readable_on_a_phone(browser: Any, base_url: str) -> None:
    context = browser.new_context(viewport={"width": 375, "height": 812}, is_mobile=True)
    phone = context.new_page()
    phone.goto(f"{base_url}/intake")
    overflow = phone.evaluate("document.documentElement.scrollWidth - window.innerWidth")
    assert overflow <= 0
    name_box = phone.get_by_label("Company name").bounding_box()
    assert name_box is not None and name_box["width"] > 250  # fields take the width of the screen
    context.close()
