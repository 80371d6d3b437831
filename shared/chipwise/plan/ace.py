"""A partner-referral draft shaped like the ACE ``CreateOpportunity`` request (Partner Central Selling API).

The document is for a person to review and file: Chipwise never sends it to any API. It follows the botocore
service model (``partnercentral-selling/2022-07-26``) closely enough to pass its parameter validation, so the
advisory team can paste it into the partner's tooling unchanged. Free text from the intake form is
HTML-escaped and clipped to the API's length limits, because partner portals render these fields as HTML.
"""

from __future__ import annotations

import hashlib
import html
from decimal import Decimal
from typing import Any

from chipwise.economics import cents

CATALOG = "AWS"
ORIGIN = "Partner Referral"  # the only origin allowed for partner-created opportunities in the AWS catalog
OPPORTUNITY_TYPE = "Net New Business"
PRIMARY_NEEDS = ("Co-Sell - Technical Consultation", "Co-Sell - Total Cost of Ownership Evaluation")
USE_CASE = "AI Machine Learning and Analytics"
DELIVERY_MODELS = ("Professional Services",)
SALES_ACTIVITIES = ("Initialized discussions with customer",)
LIFECYCLE_STAGE = "Prospect"

# Length limits from the service model's patterns ("(?s).{0,120}" and so on).
_LIMITS = {
    "company": 120,
    "website": 255,
    "name": 80,
    "email": 80,
    "title": 255,
    "problem": 2000,
    "next_steps": 255,
    "comments": 255,
}
_PROBLEM_MIN = 20


def clip(text: str, limit: int) -> str:
    """Whitespace collapsed, HTML-escaped, and cut (with an ellipsis) so the *escaped* text fits ``limit``."""
    escaped = [html.escape(ch, quote=False) for ch in " ".join(text.split())]
    if sum(len(part) for part in escaped) <= limit:
        return "".join(escaped)
    kept: list[str] = []
    used = 0
    for part in escaped:
        if used + len(part) > limit - 1:
            break
        kept.append(part)
        used += len(part)
    return "".join(kept).rstrip() + "…"


def split_name(full_name: str) -> tuple[str, str]:
    """("Ada", "Lovelace") from "Ada Lovelace"; a single word is a first name."""
    parts = full_name.split()
    if not parts:
        return "", ""
    return parts[0], " ".join(parts[1:])


def client_token(*parts: str | None) -> str:
    """The same case always yields the same token, so filing it twice cannot create two opportunities."""
    digest = hashlib.sha256("\x1f".join((p or "").strip().casefold() for p in parts).encode()).hexdigest()
    return f"chipwise-{digest[:40]}"


def _account(
    company_name: str, website: str | None, country_code: str, aws_account_id: str | None, industry: str
) -> dict[str, Any]:
    account: dict[str, Any] = {
        "CompanyName": clip(company_name, _LIMITS["company"]),
        "Industry": industry,
        "Address": {"CountryCode": country_code.upper()},
    }
    if website:
        account["WebsiteUrl"] = clip(website, _LIMITS["website"])
    if aws_account_id:
        account["AwsAccountId"] = aws_account_id
    return account


def _contact(contact_name: str, contact_email: str) -> dict[str, Any]:
    first, last = split_name(contact_name)
    contact: dict[str, Any] = {"Email": contact_email.strip().lower()[: _LIMITS["email"]]}
    if first:
        contact["FirstName"] = clip(first, _LIMITS["name"])
    if last:
        contact["LastName"] = clip(last, _LIMITS["name"])
    return contact


def _problem(business_problem: str) -> str:
    text = clip(business_problem, _LIMITS["problem"])
    if len(text) < _PROBLEM_MIN:  # the API rejects shorter problem statements
        text = clip(f"{text} (AI accelerator cost review)", _LIMITS["problem"])
    return text


def opportunity_document(
    *,
    company_name: str,
    website: str | None,
    country_code: str,
    contact_name: str,
    contact_email: str,
    aws_account_id: str | None,
    expected_monthly_spend_usd: Decimal,
    project_title: str,
    business_problem: str,
    next_steps: str,
    industry: str = "Software and Internet",
    additional_comments: str | None = None,
) -> dict[str, Any]:
    """The ``CreateOpportunity`` request body for a partner referral (a draft: never sent by Chipwise).

    ``expected_monthly_spend_usd`` is the customer's expected AWS spend a month after the move (AWS MRR).
    """
    spend = cents(max(expected_monthly_spend_usd, Decimal(0)))
    project: dict[str, Any] = {
        "Title": clip(project_title, _LIMITS["title"]),
        "CustomerBusinessProblem": _problem(business_problem),
        "CustomerUseCase": USE_CASE,
        "DeliveryModels": list(DELIVERY_MODELS),
        "SalesActivities": list(SALES_ACTIVITIES),
        "ExpectedCustomerSpend": [
            {"Amount": f"{spend}", "CurrencyCode": "USD", "Frequency": "Monthly", "TargetCompany": "AWS"}
        ],
    }
    if additional_comments and additional_comments.strip():
        project["AdditionalComments"] = clip(additional_comments, _LIMITS["comments"])
    return {
        "Catalog": CATALOG,
        "ClientToken": client_token(company_name, website, contact_email, aws_account_id, project_title),
        "Origin": ORIGIN,
        "OpportunityType": OPPORTUNITY_TYPE,
        "PrimaryNeedsFromAws": list(PRIMARY_NEEDS),
        "Customer": {
            "Account": _account(company_name, website, country_code, aws_account_id, industry),
            "Contacts": [_contact(contact_name, contact_email)],
        },
        "Project": project,
        "LifeCycle": {"Stage": LIFECYCLE_STAGE, "NextSteps": clip(next_steps, _LIMITS["next_steps"])},
    }
