"""Credits-application and partner-referral drafts for an account, for the advisory team to review and send.

The figures are the account's own: spend is every surface's (:func:`chipwise.spend.spend_of`: the bill's monthly
run rate when the bill covers the latest scan's window, else Cost Explorer's over complete days), the accelerator
workloads from the inventory, and the savings from the open findings
(measured where a benchmark ran). The programs come from :func:`chipwise.plan.credits.match_programs` over the
catalog's credit programs; the referral is :func:`chipwise.plan.ace.opportunity_document`, shaped like an ACE
``CreateOpportunity`` request.

Drafts are stored (table ``drafts``, one per kind and account, updated in place), written to files by the CLI
and emailed to ``settings.advisory_email`` for review. Nothing here calls an AWS API: a person files them.
"""

from __future__ import annotations

import hashlib
import json
import uuid
from collections import defaultdict
from dataclasses import asdict, dataclass, field, replace
from datetime import date, datetime, timedelta
from decimal import Decimal
from pathlib import Path
from typing import Any

from chipwise.catalog import CompanyStage, get_catalog, platform_of
from chipwise.clock import utcnow
from chipwise.economics import cents, monthly_cost, per_month
from chipwise.errors import NotFound
from chipwise.models.scan import ScanCosts, ScanWindow
from chipwise.notify.digest import FindingLine, by_savings, headline_of, load_snapshot
from chipwise.notify.outbox import enqueue
from chipwise.plan.ace import opportunity_document
from chipwise.plan.credits import CompanyProfile, CreditMatch, match_programs
from chipwise.presentation import current_capacity, ledger
from chipwise.render import money, render
from chipwise.settings import Settings
from chipwise.spend import Spend, spend_of
from chipwise.store import Session
from chipwise.store.repositories.accounts import AccountRepository
from chipwise.store.repositories.inventory import ResourceRecord, ResourceRepository
from chipwise.store.repositories.messaging import DraftRecord, DraftRepository, OutboxRecord

ACCELERATORS = ("inferentia", "trainium", "nvidia")
CREDITS_KIND = "credits_application"
REFERRAL_KIND = "partner_referral"
TOP_FINDINGS = 5


# --- the account's figures ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class CompanyFacts:
    """What the drafts need to know about the company that Chipwise cannot see in the account.

    A fact nobody gave is unknown (None), never guessed: the drafts say "unknown: fill in" for it, and a credit
    program that depends on it is only "possible", never likely. Stated facts are listed for the reviewer to
    confirm.
    """

    company_name: str | None = None
    stage: CompanyStage | None = None
    institutional_funding: bool | None = None
    activate_provider_org_id: str | None = None
    website: str | None = None
    country: str = "US"
    contact_name: str = ""
    contact_email: str | None = None


@dataclass(frozen=True)
class DraftWorkload:
    """An accelerator resource in the account's inventory."""

    name: str
    kind: str
    region: str
    instance_type: str | None
    instance_count: int
    platform: str
    stage: str | None
    model: str | None
    monthly_cost_usd: Decimal | None = None  # on-demand run-rate from the catalog (None: an inference component)

    @property
    def capacity(self) -> str:
        """ "ml.g5.2xlarge ×4"; an inference component's copies (its instances are its endpoint's)."""
        return current_capacity(self.instance_type, self.instance_count, self.kind)


@dataclass(frozen=True)
class AccountFigures:
    """The account's real numbers, as the drafts quote them."""

    account_id: str
    company: str
    window_start: date | None
    window_end: date | None  # exclusive
    accelerator_spend_usd: Decimal  # accelerator and compute spend over the window (chipwise.spend: every surface's)
    monthly_accelerator_spend_usd: Decimal  # its monthly run rate over the days the source covers
    monthly_by_platform: dict[str, Decimal]
    workloads: list[DraftWorkload]
    open_findings: int
    findings_words: str  # what the counts count: "19 counted findings (30 open, 11 not counted)"
    monthly_savings_usd: Decimal
    measured_monthly_savings_usd: Decimal
    top_findings: list[FindingLine]
    migrations: list[FindingLine] = field(default_factory=list)
    spend_basis: str = ""  # where the spend comes from and its measure, in words
    summary: tuple[str, ...] = ()  # the five-line executive summary of the ledger (the digest's, the report's)

    @property
    def who(self) -> str:
        """The company and its account, once: "Acme AI (AWS account 123456789012)", or "AWS account 123456789012"
        when the company name is not known (never "AWS account X (AWS account X)")."""
        if self.account_id in self.company:
            return self.company
        return f"{self.company} (AWS account {self.account_id})"

    @property
    def monthly_after_usd(self) -> Decimal:
        """Expected accelerator spend a month once the findings are acted on."""
        return max(Decimal(0), self.monthly_accelerator_spend_usd - self.monthly_savings_usd)

    @property
    def days(self) -> int:
        if self.window_start is None or self.window_end is None:
            return 0
        return (self.window_end - self.window_start).days


def _cost_explorer_costs(session: Session, account_id: str, lookback_days: int) -> tuple[ScanWindow, ScanCosts] | None:
    """Without a scan document: Cost Explorer's records over the last ``lookback_days`` days that have any (complete
    days only), shaped as a scan's costs so that :func:`chipwise.spend.spend_of` prices them like every surface."""
    from chipwise.store.repositories.usage import UsageRepository  # only without a scan: drafts read no rollups

    _, last = UsageRepository(session).cost_day_range(account_id)
    if last is None:
        return None
    start, end = last - timedelta(days=lookback_days - 1), last + timedelta(days=1)
    by_type = dict(UsageRepository(session).cost_by_instance_type(account_id, start, end))
    days = UsageRepository(session).stored_cost_days(account_id, start, end)
    costs = ScanCosts(total_usd=sum(by_type.values(), Decimal(0)), by_instance_type=by_type, days_covered=len(days))
    return ScanWindow(start=min(days, default=start), end=end), costs


def _by_platform(costs: ScanCosts, spend: Spend) -> dict[str, Decimal]:
    """The monthly spend on each accelerator platform at the spend's run rate (its days)."""
    hours = (spend.days or 0) * 24
    by_platform: dict[str, Decimal] = defaultdict(Decimal)
    for instance_type, total in costs.by_instance_type.items():
        platform = platform_of(instance_type)
        if platform in ACCELERATORS and hours:
            by_platform[platform] += total
    return {p: per_month(v, hours) for p, v in sorted(by_platform.items())}


ALWAYS_ON = ("ec2_instance", "sagemaker_endpoint")  # kinds billed around the clock while they run


def _monthly_cost(resource: ResourceRecord, costed: dict[str, Decimal]) -> Decimal | None:
    """A workload's monthly cost: its finding's (priced at the account's effective rate and share) where it has
    one, else the on-demand run-rate of an always-on instance or endpoint (catalog price in its region × its
    instances × 730 h); None for what runs part-time or shares instances (a training job, an inference
    component) or an unpriced type."""
    if resource.key in costed:
        return costed[resource.key]
    if resource.kind not in ALWAYS_ON or not resource.instance_type:
        return None
    price = get_catalog().price(resource.instance_type, resource.region)
    return None if price is None else monthly_cost(price, resource.instance_count)


def by_spend(workloads: list[DraftWorkload]) -> list[DraftWorkload]:
    """Largest monthly spend first (the examples a referral names), unpriced ones last, then by name."""
    return sorted(workloads, key=lambda w: (w.monthly_cost_usd is None, -(w.monthly_cost_usd or 0), w.name))


def _workloads(session: Session, account_id: str, costed: dict[str, Decimal]) -> list[DraftWorkload]:
    rows = ResourceRepository(session).live_on_platforms(account_id, ACCELERATORS, ("terminated", "deleted", "Deleted"))
    return by_spend(
        [
            DraftWorkload(
                name=r.name,
                kind=r.kind,
                region=r.region,
                instance_type=r.instance_type,
                instance_count=r.instance_count,
                platform=r.platform,
                stage=(r.hints or {}).get("workload"),
                model=(r.hints or {}).get("hf_model_id") or (r.hints or {}).get("model_family"),
                monthly_cost_usd=_monthly_cost(r, costed),
            )
            for r in rows
            if r.kind != "batch_job_queue"
        ]
    )


def account_figures(session: Session, account_id: str, *, company: str | None, lookback_days: int) -> AccountFigures:
    """The figures of one account from the store; NotFound when Chipwise has never seen it."""
    account = AccountRepository(session).get(account_id)
    if account is None:
        raise NotFound(f"account {account_id} is not in the store: scan it first (chipwise scan)")
    snapshot = load_snapshot(session, account_id, since=utcnow())
    ranked = by_savings(snapshot.open)
    totals = headline_of(ranked)
    figures = ledger((f.document for f in ranked if f.document is not None), snapshot.costs, snapshot.window_hours)
    window, costs = snapshot.window, snapshot.costs
    if costs is None or window is None:  # never scanned: Cost Explorer's records, through the same function
        found = _cost_explorer_costs(session, account_id, lookback_days)
        window, costs = found if found else (None, None)
        figures = replace(figures, spend=spend_of(costs, window.hours if window else 0))
    spend = figures.spend
    return AccountFigures(
        account_id=account_id,
        company=company or account.name or f"AWS account {account_id}",
        window_start=window.start if window and spend else None,
        window_end=window.end if window and spend else None,
        accelerator_spend_usd=spend.window_usd if spend else Decimal(0),
        monthly_accelerator_spend_usd=spend.monthly_usd if spend else Decimal(0),
        monthly_by_platform=_by_platform(costs, spend) if costs and spend else {},
        spend_basis=f"{spend.source}; {spend.basis}" if spend else "",
        workloads=_workloads(session, account_id, {f.resource_id: cents(f.monthly_cost_usd) for f in ranked}),
        open_findings=len(ranked),
        findings_words=totals.count_words(),
        monthly_savings_usd=totals.total_usd,
        measured_monthly_savings_usd=totals.measured_usd,
        top_findings=[f for f in ranked if f.counted][:TOP_FINDINGS],
        migrations=[f for f in ranked if f.action == "migrate" and f.counted],
        summary=tuple(figures.executive_summary()),
    )


# --- the drafts --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class DraftContent:
    """One draft as stored: a title, a human-readable body and a machine-readable document."""

    kind: str
    subject_key: str
    title: str
    body: str
    document: dict[str, Any]


@dataclass(frozen=True)
class AccountDrafts:
    figures: AccountFigures
    facts: CompanyFacts
    programs: list[CreditMatch]
    credits: DraftContent
    referral: DraftContent

    @property
    def ace_document(self) -> dict[str, Any]:
        document: dict[str, Any] = self.referral.document["ace_create_opportunity"]
        return document

    @property
    def eligible_credits_usd(self) -> Decimal:
        return sum((m.max_amount_usd or Decimal(0) for m in self.programs if m.eligible), Decimal(0))


def _profile(figures: AccountFigures, facts: CompanyFacts) -> CompanyProfile:
    return CompanyProfile(
        stage=facts.stage,
        institutional_funding=facts.institutional_funding,
        activate_provider_org_id=facts.activate_provider_org_id,
        ai_first=True,  # an account running accelerators; the reviewer confirms
        country=facts.country,
        monthly_spend_usd=figures.monthly_accelerator_spend_usd,
        has_existing_workloads_to_migrate=bool(figures.migrations),
    )


def _money_doc(value: Decimal | None) -> str | None:
    return None if value is None else f"{cents(value)}"


def _figures_doc(figures: AccountFigures) -> dict[str, Any]:
    return {
        "account_id": figures.account_id,
        "company": figures.company,
        "cost_window": {
            "start": figures.window_start.isoformat() if figures.window_start else None,
            "end_exclusive": figures.window_end.isoformat() if figures.window_end else None,
        },
        "accelerator_spend_usd": _money_doc(figures.accelerator_spend_usd),
        "monthly_accelerator_spend_usd": _money_doc(figures.monthly_accelerator_spend_usd),
        "monthly_by_platform_usd": {p: _money_doc(v) for p, v in figures.monthly_by_platform.items()},
        "open_findings": figures.open_findings,
        "monthly_savings_usd": _money_doc(figures.monthly_savings_usd),
        "measured_monthly_savings_usd": _money_doc(figures.measured_monthly_savings_usd),
        "monthly_after_usd": _money_doc(figures.monthly_after_usd),
        "workloads": [
            {
                **asdict(w),
                "monthly_cost_usd": None if w.monthly_cost_usd is None else _money_doc(w.monthly_cost_usd),
            }
            for w in figures.workloads
        ],
        "top_findings": [
            {
                "finding_id": f.finding_id,
                "rule_id": f.rule_id,
                "resource": f.resource_name,
                "monthly_savings_usd": _money_doc(f.monthly_savings_usd),
                "measured": f.measured,
                "next_step": f.next_step,
            }
            for f in figures.top_findings
        ],
    }


def _program_doc(match: CreditMatch) -> dict[str, Any]:
    return {
        "program": match.program,
        "name": match.name,
        "eligible": match.eligible,
        "likelihood": match.likelihood,
        "source_strength": match.source_strength,
        "max_amount_usd": _money_doc(match.max_amount_usd),
        "reason": match.reason,
        "how_to_apply": match.how_to_apply,
        "url": match.url,
        "source": match.source,
        "as_of": match.as_of.isoformat(),
        "amount_is_estimate": match.estimate,
    }


UNKNOWN = "unknown: fill in before this is sent"


def _assumptions(facts: CompanyFacts) -> list[str]:
    funding = {True: "yes", False: "no", None: UNKNOWN}[facts.institutional_funding]
    return [
        f"company stage: {facts.stage or UNKNOWN}",
        f"institutional funding (VC, accelerator or angels): {funding}",
        "Activate Provider Org ID: " + (facts.activate_provider_org_id or "none given"),
        "AI-first company: yes (the account runs AI accelerators)",
        f"country: {facts.country}",
    ]


def _business_problem(figures: AccountFigures) -> str:
    platforms = ", ".join(f"{p} {money(v, 0)}/mo" for p, v in figures.monthly_by_platform.items()) or "no split"
    top = "; ".join(
        f"{f.resource_name}: {f.next_step} ({money(f.monthly_savings_usd, 0)}/mo)" for f in figures.top_findings[:3]
    )
    return (
        f"{figures.company} spends about {money(figures.monthly_accelerator_spend_usd, 0)} a month on AI accelerators "
        f"and compute in AWS ({figures.spend_basis}; accelerators: {platforms}). A Chipwise review found "
        f"{money(figures.monthly_savings_usd)} a month of savings "
        f"across {figures.open_findings} findings"
        + (
            f" ({money(figures.measured_monthly_savings_usd)} measured by benchmarks)"
            if figures.measured_monthly_savings_usd
            else ""
        )
        + (f". Largest: {top}" if top else "")
        + ". The customer needs help moving GPU workloads to Trainium and Inferentia and right-sizing the rest."
    )


def _next_steps(figures: AccountFigures, programs: list[CreditMatch]) -> str:
    eligible = ", ".join(m.name for m in programs if m.eligible)
    return "Review the findings with the customer; benchmark the top migration on trn/inf; " + (
        f"apply for {eligible}." if eligible else "confirm credit eligibility."
    )


def build_account_drafts(figures: AccountFigures, facts: CompanyFacts, *, contact_email: str) -> AccountDrafts:
    """Both drafts from the account's figures (pure: no store, no AWS)."""
    programs = match_programs(_profile(figures, facts))
    subject_key = f"account:{figures.account_id}"
    assumptions = _assumptions(facts)
    context = {"figures": figures, "programs": programs, "assumptions": assumptions, "facts": facts}
    credits = DraftContent(
        kind=CREDITS_KIND,
        subject_key=subject_key,
        title=f"Credits application draft: {figures.who}",
        body=render("drafts/credits_application.md.j2", **context),
        document={
            "kind": CREDITS_KIND,
            "figures": _figures_doc(figures),
            "assumptions": assumptions,
            "programs": [_program_doc(m) for m in programs],
            "submitted": False,
        },
    )
    next_steps = _next_steps(figures, programs)
    ace = opportunity_document(
        company_name=figures.company,
        website=facts.website,
        country_code=facts.country,
        contact_name=facts.contact_name,
        contact_email=contact_email,
        aws_account_id=figures.account_id,
        expected_monthly_spend_usd=figures.monthly_after_usd,
        project_title=f"AI accelerator cost optimisation for {figures.company}",
        business_problem=_business_problem(figures),
        next_steps=next_steps,
        additional_comments=(
            f"Drafted by Chipwise from account {figures.account_id}: current accelerator and compute spend "
            f"{money(figures.monthly_accelerator_spend_usd, 0)}/mo, identified savings "
            f"{money(figures.monthly_savings_usd)}/mo."
        ),
    )
    email_subject = f"Referral: {figures.company}: {money(figures.monthly_savings_usd)}/mo of AI accelerator savings"
    email_body = render(
        "drafts/partner_referral_email.txt.j2", ace=ace, subject=email_subject, next_steps=next_steps, **context
    )
    referral = DraftContent(
        kind=REFERRAL_KIND,
        subject_key=subject_key,
        title=f"Partner referral draft: {figures.who}",
        body=email_body,
        document={
            "kind": REFERRAL_KIND,
            "figures": _figures_doc(figures),
            "email": {"subject": email_subject, "body": email_body},
            "ace_create_opportunity": ace,
            "submitted": False,
        },
    )
    return AccountDrafts(figures=figures, facts=facts, programs=programs, credits=credits, referral=referral)


# --- storing, reviewing, writing ---------------------------------------------------------------------------


def store_draft(
    session: Session, content: DraftContent, *, account_id: str | None, plan_id: str | None = None, now: datetime
) -> DraftRecord:
    """Insert or update the draft of this kind for this subject (the id and created_at are kept)."""
    row = {
        "id": str(uuid.uuid4()),
        "kind": content.kind,
        "subject_key": content.subject_key,
        "account_id": account_id,
        "plan_id": plan_id,
        "title": content.title,
        "body": content.body,
        "document": content.document,
        "created_at": now,
        "updated_at": now,
    }
    return DraftRepository(session).upsert(row)


def fingerprint(*contents: DraftContent) -> str:
    """Changes when a draft's text or document changes, so an unchanged draft is not emailed twice."""
    digest = hashlib.sha256()
    for content in contents:
        digest.update(content.body.encode())
        digest.update(json.dumps(content.document, sort_keys=True, default=str).encode())
    return digest.hexdigest()[:20]


def attachments(drafts: AccountDrafts) -> list[dict[str, str]]:
    """The files a reviewer works from (also what ``chipwise drafts --output`` writes)."""
    return [
        {"filename": "credits-application.md", "content_type": "text/markdown", "content": drafts.credits.body},
        {
            "filename": "credits-application.json",
            "content_type": "application/json",
            "content": json.dumps(drafts.credits.document, indent=2, ensure_ascii=False) + "\n",
        },
        {"filename": "partner-referral-email.txt", "content_type": "text/plain", "content": drafts.referral.body},
        {
            "filename": "ace-create-opportunity.json",
            "content_type": "application/json",
            "content": json.dumps(drafts.ace_document, indent=2, ensure_ascii=False) + "\n",
        },
    ]


def enqueue_review(
    session: Session, drafts: AccountDrafts, *, advisory_email: str, now: datetime
) -> OutboxRecord | None:
    """Email both drafts to the advisory address for review (once per version of the drafts)."""
    context = {"drafts": drafts, "figures": drafts.figures, "generated_at": now}
    key = f"drafts:account:{drafts.figures.account_id}:{fingerprint(drafts.credits, drafts.referral)}"
    return enqueue(
        session,
        channel="email",
        kind="draft",
        recipient=advisory_email,
        dedupe_key=key,
        subject=f"Drafts for review: {drafts.figures.who}",
        payload={
            "html": render("email/drafts_review.html.j2", **context),
            "text": render("email/drafts_review.txt.j2", **context),
            "to": [advisory_email],
            "attachments": attachments(drafts),
        },
        account_id=drafts.figures.account_id,
        now=now,
    )


def write_files(drafts: AccountDrafts, directory: Path) -> list[Path]:
    """Write the review files into ``directory`` (created if needed); returns their paths."""
    directory.mkdir(parents=True, exist_ok=True)
    paths = []
    for item in attachments(drafts):
        path = directory / item["filename"]
        path.write_text(item["content"], encoding="utf-8")
        paths.append(path)
    return paths


@dataclass(frozen=True)
class DraftsResult:
    drafts: AccountDrafts
    stored: list[DraftRecord]
    review: OutboxRecord | None  # None: these exact drafts were already sent for review


def prepare_account_drafts(
    session: Session,
    account_id: str,
    settings: Settings,
    facts: CompanyFacts | None = None,
    *,
    now: datetime | None = None,
) -> DraftsResult:
    """Build both drafts from the store, store them and enqueue the review email. Never submits anything."""
    facts = facts or CompanyFacts()
    when = now or utcnow()
    figures = account_figures(session, account_id, company=facts.company_name, lookback_days=settings.lookback_days)
    contact = facts.contact_email or (
        settings.email_recipients[0] if settings.email_recipients else settings.advisory_email
    )
    drafts = build_account_drafts(figures, facts, contact_email=contact)
    stored = [
        store_draft(session, content, account_id=account_id, now=when) for content in (drafts.credits, drafts.referral)
    ]
    review = enqueue_review(session, drafts, advisory_email=settings.advisory_email, now=when)
    return DraftsResult(drafts=drafts, stored=stored, review=review)
