"""Rendering for the intake: the form page, the plan as a page, Markdown and emails, and the draft body.

Templates receive the typed plan and a label helper; they never query anything. HTML is autoescaped by the one
Jinja environment, Markdown escapes every intake value with the ``md`` filter, so HTML typed into any field
comes out as text everywhere.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import date, datetime
from decimal import Decimal
from typing import Any

from chipwise.catalog import get_catalog, get_model_families, get_regions
from chipwise.intake import form
from chipwise.plan.document import PlanDocument, WorkloadPlan
from chipwise.plan.intake import IntakeRequest
from chipwise.render import render
from chipwise.settings import get_settings

PLATFORM_LABELS = {
    "trainium": "AWS Trainium",
    "inferentia": "AWS Inferentia",
    "bedrock": "Amazon Bedrock",
    "gpu": "Stay on GPU",
}
DEFAULT_HOME = "/intake"


def target_of(line: WorkloadPlan) -> str:
    """ "AWS Inferentia", or "Keep on AWS Inferentia" / "Stay on GPU" when the workload stays as it is."""
    label = PLATFORM_LABELS[line.recommended_platform]
    if line.action == "keep" and line.recommended_platform != "gpu":
        return f"Keep on {label}"
    return label


def _choices() -> dict[str, list[str]]:
    """What the form suggests: model families, priced accelerated instance types, regions the catalog can price."""
    catalog = get_catalog()
    return {
        "model_families": sorted(f.id for f in get_model_families().all() if f.id != "custom"),
        "instance_types": sorted(
            t.name for t in catalog.all() if t.accelerated and not t.sagemaker and catalog.price(t.name) is not None
        ),
        "regions": sorted(r.code for r in get_regions().all() if r.multiplier is not None),
    }


def flat_values(raw: Mapping[str, Any]) -> dict[str, str]:
    """The typed values by form field name (to show the form again exactly as it was filled in)."""
    return form.flatten(raw)


def form_page(
    *,
    values: Mapping[str, str] | None = None,
    errors: Mapping[str, str] | None = None,
    message: str | None = None,
    action: str = DEFAULT_HOME,
    nonce: str | None = None,
) -> str:
    context = form.form_context(
        values=values,
        errors=errors,
        message=message,
        retention_days=get_settings().intake_retention_days,
        **_choices(),
    )
    return render("intake/form.html.j2", action=action, nonce=nonce, **context)


def message_page(title: str, message: str, *, home: str = DEFAULT_HOME, nonce: str | None = None) -> str:
    return render("intake/message.html.j2", title=title, message=message, home=home, nonce=nonce)


def referral_json(plan: PlanDocument) -> str:
    return json.dumps(plan.referral_draft, indent=2, ensure_ascii=False)


def plan_page(
    plan: PlanDocument,
    *,
    permalink: str,
    home: str = DEFAULT_HOME,
    nonce: str | None = None,
    email: str = "no_email",
    delete_action: str | None = None,
    delete_fields: Mapping[str, str] | None = None,
    expires_at: datetime | None = None,
) -> str:
    """The plan's page. ``email``: what happened about email (confirm_sent, confirmed, withheld_today,
    withheld_volume, no_email); ``delete_action``/``delete_fields``: the signed form that deletes the plan (none
    for an offline plan)."""
    return render(
        "plan/plan.html.j2",
        plan=plan.public(),
        permalink=permalink,
        home=home,
        target_of=target_of,
        nonce=nonce,
        email=email,
        delete_action=delete_action,
        delete_fields=dict(delete_fields or {}),
        expires_at=expires_at,
    )


def confirm_page(
    *, title: str, message: str, action: str | None, fields: Mapping[str, str], button: str, home: str, nonce: str
) -> str:
    """A page asking the owner to press a button (a link scanner's GET never confirms or deletes anything)."""
    return render(
        "intake/action.html.j2",
        title=title,
        message=message,
        action=action,
        fields=dict(fields),
        button=button,
        home=home,
        nonce=nonce,
    )


def plan_markdown(plan: PlanDocument) -> str:
    return render("plan/plan.md.j2", plan=plan, target_of=target_of)


def plan_json(plan: PlanDocument) -> str:
    return json.dumps(plan.model_dump(mode="json"), indent=2, ensure_ascii=False) + "\n"


def _people(intake: IntakeRequest) -> dict[str, Any]:
    """Contact facts for the referral draft (internal: never on the public page or in a founder's email)."""
    return {
        "contact_name": intake.contact.name,
        "contact_email": str(intake.contact.email),
        "website": intake.company.website,
        "stage": intake.company.stage,
        "account_ids": list(intake.aws.account_ids),
        "monthly_spend": intake.aws.monthly_spend_usd,
    }


def confirm_email(*, confirm_link: str, delete_link: str, expires_at: datetime) -> tuple[str, str]:
    """(html, text) of the confirmation request: nothing the submitter typed is in it, only our own links."""
    context = {"confirm_link": confirm_link, "delete_link": delete_link, "expires_at": expires_at}
    return render("intake/confirm_email.html.j2", **context), render("intake/confirm_email.txt.j2", **context)


def contact_email(plan: PlanDocument, *, link: str, delete_link: str, expires_at: datetime) -> tuple[str, str]:
    """(html, text) of the plan emailed to a confirmed address; typed values are inert (never links)."""
    context = {
        "plan": plan,
        "target_of": target_of,
        "link": link,
        "delete_link": delete_link,
        "expires_at": expires_at,
    }
    return render("plan/email.html.j2", **context), render("plan/email.txt.j2", **context)


@dataclass(frozen=True)
class DigestEntry:
    """One submission in the advisory team's daily digest."""

    received_at: datetime
    company: str
    contact_email: str
    monthly_savings_usd: Decimal
    partner_referral: bool
    link: str | None


def advisory_digest(
    entries: list[DigestEntry], *, day: date, mail_withheld: int = 0, mail_cap: int = 0
) -> tuple[str, str]:
    """(html, text) of the advisory team's one email a day about new intake submissions; ``mail_withheld``: how
    many of them were shown and not mailed because the day's ``mail_cap`` on confirmation emails was reached."""
    context = {
        "entries": entries,
        "day": day,
        "target_of": target_of,
        "mail_withheld": mail_withheld,
        "mail_cap": mail_cap,
    }
    return render("intake/advisory_digest.html.j2", **context), render("intake/advisory_digest.txt.j2", **context)


def referral_body(plan: PlanDocument, intake: IntakeRequest) -> str:
    """The drafts row's body: the referral in Markdown, for the reviewer."""
    return render("plan/referral.md.j2", plan=plan, referral_json=referral_json(plan), **_people(intake))
