"""Rendering for the intake: the form page, the plan as a page, Markdown and emails, and the draft body.

Templates receive the typed plan and a label helper; they never query anything. HTML is autoescaped by the one
Jinja environment, Markdown escapes every intake value with the ``md`` filter, so HTML typed into any field
comes out as text everywhere.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from chipwise.catalog import get_catalog, get_model_families, get_regions
from chipwise.intake import form
from chipwise.plan.document import PlanDocument, WorkloadPlan
from chipwise.plan.intake import IntakeRequest
from chipwise.render import render

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
    context = form.form_context(values=values, errors=errors, message=message, **_choices())
    return render("intake/form.html.j2", action=action, nonce=nonce, **context)


def message_page(title: str, message: str, *, home: str = DEFAULT_HOME, nonce: str | None = None) -> str:
    return render("intake/message.html.j2", title=title, message=message, home=home, nonce=nonce)


def referral_json(plan: PlanDocument) -> str:
    return json.dumps(plan.referral_draft, indent=2, ensure_ascii=False)


def plan_page(plan: PlanDocument, *, permalink: str, home: str = DEFAULT_HOME, nonce: str | None = None) -> str:
    return render(
        "plan/plan.html.j2",
        plan=plan,
        permalink=permalink,
        home=home,
        target_of=target_of,
        referral_json=referral_json(plan),
        nonce=nonce,
    )


def plan_markdown(plan: PlanDocument) -> str:
    return render("plan/plan.md.j2", plan=plan, target_of=target_of)


def plan_json(plan: PlanDocument) -> str:
    return json.dumps(plan.model_dump(mode="json"), indent=2, ensure_ascii=False) + "\n"


def _people(intake: IntakeRequest) -> dict[str, Any]:
    return {
        "contact_name": intake.contact.name,
        "contact_email": str(intake.contact.email),
        "website": intake.company.website,
        "stage": intake.company.stage,
        "account_ids": list(intake.aws.account_ids),
        "monthly_spend": intake.aws.monthly_spend_usd,
    }


def contact_email(plan: PlanDocument, intake: IntakeRequest, link: str | None) -> tuple[str, str]:
    """(html, text) of the plan emailed to the contact."""
    context = {"plan": plan, "target_of": target_of, "link": link, **_people(intake)}
    return render("plan/email.html.j2", **context), render("plan/email.txt.j2", **context)


def internal_email(plan: PlanDocument, intake: IntakeRequest, link: str | None) -> tuple[str, str]:
    """(html, text) of the advisory team's copy, with the partner-referral draft."""
    context = {
        "plan": plan,
        "target_of": target_of,
        "link": link,
        "referral_json": referral_json(plan),
        **_people(intake),
    }
    return render("plan/internal.html.j2", **context), render("plan/internal.txt.j2", **context)


def referral_body(plan: PlanDocument, intake: IntakeRequest) -> str:
    """The drafts row's body: the referral in Markdown, for the reviewer."""
    return render("plan/referral.md.j2", plan=plan, referral_json=referral_json(plan), **_people(intake))
