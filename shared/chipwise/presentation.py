"""How a finding reads, in one place: the rule's name, the current capacity, the next step and the saving
to show. The CLI, the demo report, the digest, alerts, Slack and the drafts all word findings with these."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from decimal import Decimal
from typing import Any, cast

from chipwise.economics import break_even_months, cents, round_money, usd
from chipwise.models.common import Effort
from chipwise.models.findings import FindingDocument, RecommendationDoc
from chipwise.models.scan import ScanCosts
from chipwise.models.steps import mechanical_step
from chipwise.spend import Spend, signed, spend_of

_ACRONYMS = {"gpu": "GPU", "cpu": "CPU", "ec2": "EC2", "eks": "EKS", "sagemaker": "SageMaker"}
_VERBS = {"enable_telemetry": "Enable telemetry"}


def plural(count: int | Decimal, singular: str, plural_form: str | None = None) -> str:
    """A count with its noun: ``1 finding``, ``3 findings``, ``1 fix``/``2 fixes`` (give the irregular form), and
    ``0.5 instances`` (only exactly one is singular)."""
    number = f"{count.normalize():f}" if isinstance(count, Decimal) else f"{count:,}"
    return f"{number} {singular if count == 1 else plural_form or singular + 's'}"


def rule_label(rule_id: str) -> str:
    """A readable name for a rule id: ``gpu_inference_portable`` → "GPU inference portable"."""
    words = [_ACRONYMS.get(w, w) for w in rule_id.split("_") if w]
    if not words:
        return rule_id
    first = words[0] if words[0] in _ACRONYMS.values() else words[0].capitalize()
    return " ".join([first, *words[1:]])


def current_capacity(instance_type: str | None, instance_count: int, resource_kind: str) -> str:
    """The current capacity, e.g. "ml.g5.2xlarge ×4" (the resource kind when there is no instance type)."""
    kind = instance_type or resource_kind.replace("_", " ")
    if resource_kind == "sagemaker_inference_component":  # its count is its copies, not instances of its own
        return f"{kind}, {instance_count} cop{'y' if instance_count == 1 else 'ies'}"
    return f"{kind} ×{instance_count}" if instance_count > 1 else kind


def target_label(recommendation: RecommendationDoc) -> str | None:
    """Where the recommendation goes: "inf2.xlarge ×2", "Amazon Bedrock", a platform, or None."""
    if recommendation.target_instance_type:
        count = recommendation.target_count or 1
        target = recommendation.target_instance_type
        return f"{target} ×{count}" if count > 1 else target
    if recommendation.target_platform == "bedrock":
        return "Amazon Bedrock"
    return recommendation.target_platform


def next_step_words(action: str, target: str | None) -> str:
    """The recommendation in a few words: "Migrate → inf2.xlarge ×2", "Delete"."""
    verb = _VERBS.get(action, action.replace("_", " ").capitalize())
    return f"{verb} → {target}" if target else verb


def action_words(action: str) -> str:
    """An action in words: ``enable_telemetry`` → "enable telemetry"."""
    return _VERBS.get(action, action.replace("_", " ")).lower()


def next_step(document: FindingDocument) -> str:
    """A finding's next step in a few words."""
    return next_step_words(document.recommendation.action, target_label(document.recommendation))


def best_saving(document: FindingDocument) -> Decimal:
    """The measured saving when a benchmark replaced the estimate (0 when it withdrew the recommendation)."""
    measured = document.measured_monthly_savings_usd
    return document.estimated_monthly_savings_usd if measured is None else measured


def benchmark_verdict(document: FindingDocument) -> str | None:
    """The latest benchmark's status on the finding ("confirmed", "withdrawn", ...), if one ran."""
    return benchmark_status(document.evidence)


def benchmark_status(evidence: Mapping[str, Any] | None) -> str | None:
    """:func:`benchmark_verdict` of a finding's stored evidence. Read as
    :meth:`FindingEvidence.read <chipwise.models.evidence.FindingEvidence.read>` keeps it (a mapping, else nothing)
    without validating the rest of the evidence: every total and ranking asks this of every finding."""
    benchmark = (evidence or {}).get("benchmark")
    status = benchmark.get("status") if isinstance(benchmark, dict) else None
    return str(status) if status else None


@dataclass(frozen=True, slots=True)
class CountingFacts:
    """What decides whether a finding counts and why not (:func:`exclusion_of`): a document's fields, or the same
    columns of a stored finding read without making a document (``chipwise resources`` counts an organisation's)."""

    status: str
    excluded_from_totals: str | None  # the recommendation's
    action: str  # the recommendation's
    effort: str
    evidence: Mapping[str, Any]
    estimated_monthly_savings_usd: Decimal
    measured_monthly_savings_usd: Decimal | None

    @classmethod
    def of(cls, document: FindingDocument) -> CountingFacts:
        return cls(
            status=document.status,
            excluded_from_totals=document.recommendation.excluded_from_totals,
            action=document.recommendation.action,
            effort=document.effort,
            evidence=document.evidence,
            estimated_monthly_savings_usd=document.estimated_monthly_savings_usd,
            measured_monthly_savings_usd=document.measured_monthly_savings_usd,
        )

    @property
    def best_saving(self) -> Decimal:
        measured = self.measured_monthly_savings_usd
        return self.estimated_monthly_savings_usd if measured is None else measured


NEEDS_REVIEW = "needs_review"
CANNOT_JUDGE = "cannot_judge"
# The finding's next step when a rule could not judge the resource (the input it needs is missing).
_CANNOT_JUDGE_ACTIONS = frozenset({"enable_telemetry"})


NOT_WORTH_IT = "not_worth_it"


def exclusion(document: FindingDocument) -> str | None:
    """Why a finding's saving is not counted, or None: the rule's (a price quote, committed hours), a benchmark
    whose result failed the plausibility gate (``needs_review``: out of the totals until someone checks it), a
    finding that only says what is missing to judge the resource (``cannot_judge``: its action asks for the
    input, or its evidence says ``verdict: cannot_judge``, e.g. a notebook that publishes no activity), or a move
    whose 12-month net value (saving × 12 − porting) is negative (``not_worth_it``)."""
    return exclusion_of(CountingFacts.of(document))


def exclusion_of(facts: CountingFacts) -> str | None:
    """:func:`exclusion` of a finding's facts."""
    if facts.excluded_from_totals is not None:
        return facts.excluded_from_totals
    if benchmark_status(facts.evidence) == NEEDS_REVIEW:
        return NEEDS_REVIEW
    if facts.action in _CANNOT_JUDGE_ACTIONS or cannot_judge(facts.evidence):
        return CANNOT_JUDGE
    if facts.best_saving * MONTHS_OF_VALUE < one_time_cost(facts.action, facts.effort):
        return NOT_WORTH_IT
    return None


def is_counted(status: str, excluded: str | None) -> bool:
    """A finding counted in the totals: open, its saving not set apart (:func:`exclusion`)."""
    return status == "open" and excluded is None


def cannot_judge(evidence: Mapping[str, Any]) -> bool:
    """A finding that says Chipwise cannot judge its resource (rule ``cannot_judge``'s evidence)."""
    return evidence.get("verdict") == CANNOT_JUDGE


# Why a row is not counted, in words (CSV, JSON, tables, the executive summary).
EXCLUSION_WORDS = {
    "quote_needed": "needs a price quote",
    "committed": "runs on committed capacity",
    NEEDS_REVIEW: "measurement needs review",
    CANNOT_JUDGE: "cannot judge (an input is missing)",
    "withdrawn": "withdrawn by measurement",
    NOT_WORTH_IT: "not worth it within 12 months",
    "closed": "not open",
}


@dataclass(frozen=True)
class Headline:
    """The one set of totals every surface shows (CLI, demo summary and report, findings.json, digest, Slack,
    drafts): measured savings (a benchmark confirmed them) apart from estimated ones (to investigate); findings
    whose saving cannot be counted (no usable target price, or committed hours) and withdrawn ones apart."""

    measured_usd: Decimal
    estimated_usd: Decimal
    counted: int
    measured: int
    quote_needed: int
    committed: int
    withdrawn: int
    needs_review: int = 0
    cannot_judge: int = 0
    not_worth_it: int = 0

    @property
    def total_usd(self) -> Decimal:
        return self.measured_usd + self.estimated_usd

    @property
    def open_count(self) -> int:
        """Open findings: the counted and the ones set apart (a withdrawn finding is not open)."""
        set_apart = self.quote_needed + self.committed + self.needs_review + self.cannot_judge + self.not_worth_it
        return self.counted + set_apart

    def count_words(self) -> str:
        """What each count counts, the same on every surface: "19 counted findings (30 open, 11 not counted)"."""
        apart = self.open_count - self.counted
        return f"{plural(self.counted, 'counted finding')} ({self.open_count} open, {apart} not counted)"

    def sentence(self) -> str:
        """ "$63,065.68 a month: $19,922.22 measured, $43,143.46 estimated (to investigate)" and what is left out."""
        text = f"{usd(self.total_usd)} a month: {usd(self.measured_usd)} measured, {usd(self.estimated_usd)} estimated"
        apart = [
            f"{n} {label}"
            for n, label in (
                (self.quote_needed, "needs a price quote" if self.quote_needed == 1 else "need a price quote"),
                (self.committed, "on committed hours"),
                (
                    self.needs_review,
                    "measurement needs review" if self.needs_review == 1 else "measurements need review",
                ),
                (self.cannot_judge, "cannot be judged yet"),
                (self.not_worth_it, "not worth it within 12 months"),
                (self.withdrawn, "withdrawn by measurement"),
            )
            if n
        ]
        return text + (f" ({', '.join(apart)}: not counted)" if apart else "")


@dataclass(frozen=True)
class SavingFacts:
    """What the totals need of one finding (a document, or a digest line built from one)."""

    status: str
    excluded_from_totals: str | None
    measured: bool
    saving_usd: Decimal  # the measured saving where a benchmark ran, else the estimate
    one_time_cost_usd: Decimal = Decimal(0)  # porting, for a migration (a project); 0 for a quick win

    @property
    def net_value_12m_usd(self) -> Decimal:
        """What the move is worth over twelve months: saving × 12 − the one-time cost."""
        return cents(self.saving_usd * MONTHS_OF_VALUE - self.one_time_cost_usd)


MONTHS_OF_VALUE = 12
# Moves with no porting (stop, delete, schedule, scale within the family): no one-time cost. A quick win is
# narrower: such a move `findings apply` can make (:func:`applicable`).
QUICK_WIN_ACTIONS = frozenset({"stop", "delete", "schedule", "rightsize"})


def one_time_cost(action: str, effort: str) -> Decimal:
    """The one-time cost of a move: porting (engineer-weeks for the effort × the loaded weekly cost, both in
    assumptions.json) for a migration; nothing for a quick win."""
    if action in QUICK_WIN_ACTIONS or action in _CANNOT_JUDGE_ACTIONS:
        return Decimal(0)
    from chipwise.catalog import get_assumptions  # the economics file: only a migration's cost reads it

    return get_assumptions().porting_cost_usd(cast(Effort, effort))


def saving_facts(document: FindingDocument) -> SavingFacts:
    return SavingFacts(
        status=document.status,
        excluded_from_totals=exclusion(document),
        measured=document.measured_monthly_savings_usd is not None,
        saving_usd=best_saving(document),
        one_time_cost_usd=one_time_cost(document.recommendation.action, document.effort),
    )


def rank(facts: SavingFacts) -> tuple[bool, Decimal, bool]:
    """The order every list of findings follows: counted savings before the ones set apart (a quote, committed
    hours, a measurement to review, withdrawn or closed), then by 12-month net value (saving × 12 − porting), the
    largest first, measured before estimated at equal value. A quick win (no porting) is therefore never below a
    project worth less. Rows set apart carry no net value: they follow by monthly saving. Use it as a sort key,
    with a stable tie-break after it."""
    apart = facts.status != "open" or facts.excluded_from_totals is not None
    return (apart, -(facts.saving_usd if apart else facts.net_value_12m_usd), not facts.measured)


def ranked(documents: Iterable[FindingDocument]) -> list[FindingDocument]:
    """Findings in :func:`rank` order (stable: equal ranks keep the order they came in)."""
    return sorted(documents, key=lambda d: rank(saving_facts(d)))


def counts_in_totals(document: FindingDocument) -> bool:
    """An open finding whose saving is a real monthly saving (not a quote to ask for, nor committed hours)."""
    return is_counted(document.status, exclusion(document))


def headline(items: Iterable[FindingDocument | SavingFacts]) -> Headline:
    """Totals over findings, after the last stage that can change them (benchmarks): open findings only."""
    measured = estimated = Decimal(0)
    counted = n_measured = quote = committed = withdrawn = review = unjudged = unworthy = 0
    for item in items:
        facts = item if isinstance(item, SavingFacts) else saving_facts(item)
        if facts.status == "withdrawn":
            withdrawn += 1
            continue
        if facts.status != "open":
            continue
        if facts.excluded_from_totals == "quote_needed":
            quote += 1
            continue
        if facts.excluded_from_totals == "committed":
            committed += 1
            continue
        if facts.excluded_from_totals == NEEDS_REVIEW:
            review += 1
            continue
        if facts.excluded_from_totals == CANNOT_JUDGE:
            unjudged += 1
            continue
        if facts.excluded_from_totals == NOT_WORTH_IT:
            unworthy += 1
            continue
        counted += 1
        if facts.measured:
            n_measured += 1
            measured += facts.saving_usd
        else:
            estimated += facts.saving_usd
    return Headline(
        cents(measured), cents(estimated), counted, n_measured, quote, committed, withdrawn, review, unjudged, unworthy
    )


def hours_label(hours: Decimal) -> str:
    """Usage hours as people read them: ``4 h``, ``1.5 h``, ``1,234 h`` (to a tenth, no trailing zero)."""
    text = f"{round_money(hours, 1):,.1f}"
    return f"{text.removesuffix('.0')} h"


# --- the ledger: every dollar of a scan accounted for, one set of figures for every surface -------------------------

Group = str  # "quick_win" | "project" | "blocked"
GROUP_WORDS = {"quick_win": "quick win", "project": "project", "blocked": "blocked"}


@dataclass(frozen=True)
class LedgerRow:
    """One finding as the ledger counts it: its group, whether it counts, on what basis, and what it is worth."""

    document: FindingDocument
    group: Group
    counted: bool
    basis: str  # "measured" | "estimated"
    saving_usd: Decimal  # monthly: the measured saving where a benchmark ran, else the estimate
    one_time_cost_usd: Decimal
    net_value_12m_usd: Decimal
    payback_months: Decimal | None  # a project's porting ÷ its monthly saving, rounded up to a tenth
    excluded_reason: str | None  # in words, None when counted
    exclusion: str | None  # why the saving is set apart (:func:`exclusion`'s key), None when it is not

    @property
    def group_words(self) -> str:
        return GROUP_WORDS[self.group]

    @property
    def verdict(self) -> str:
        """What is true of the row, in words: what it may still show as a next step depends on it."""
        if self.document.status == "withdrawn":
            return "withdrawn by measurement"
        if self.counted:
            return "measured saving" if self.basis == "measured" else "estimated saving"
        return self.excluded_reason or "not counted"

    @property
    def actionable(self) -> bool:
        """A counted row has a next step, a confidence and (a project) a break-even; a withdrawn, needs-review,
        unpriced or unjudged row does not: it shows why instead."""
        return self.counted


@dataclass(frozen=True)
class Ledger:
    """Per scan: spend (source named) = attributed + unattributed; waste = quick wins + projects + blocked; the
    headline = quick wins + projects. Every surface takes its figures from :func:`ledger`."""

    rows: tuple[LedgerRow, ...]  # in :func:`rank` order
    headline: Headline
    spend: Spend | None

    def _sum(self, group: Group) -> Decimal:
        return cents(sum((r.saving_usd for r in self.rows if r.group == group), Decimal(0)))

    @property
    def quick_wins_usd(self) -> Decimal:
        return self._sum("quick_win")

    @property
    def projects_usd(self) -> Decimal:
        return self._sum("project")

    @property
    def blocked_usd(self) -> Decimal:
        return cents(sum((max(r.saving_usd, Decimal(0)) for r in self.rows if r.group == "blocked"), Decimal(0)))

    @property
    def total_usd(self) -> Decimal:
        """The headline: quick wins + projects (equals ``headline.total_usd`` to the cent)."""
        return self.quick_wins_usd + self.projects_usd

    @property
    def porting_usd(self) -> Decimal:
        return cents(sum((r.one_time_cost_usd for r in self.rows if r.group == "project"), Decimal(0)))

    @property
    def payback_months(self) -> Decimal | None:
        """All projects together: their porting ÷ their monthly saving, rounded up to a tenth of a month."""
        return _payback(self.porting_usd, self.projects_usd)

    def count(self, group: Group) -> int:
        return sum(1 for r in self.rows if r.group == group)

    def blocked_reasons(self) -> list[tuple[str, int, Decimal]]:
        """(why, findings, $ a month) for the blocked rows, the largest first."""
        by: dict[str, tuple[int, Decimal]] = {}
        for r in self.rows:
            if r.group == "blocked":
                n, total = by.get(r.verdict, (0, Decimal(0)))
                by[r.verdict] = (n + 1, total + max(r.saving_usd, Decimal(0)))
        return sorted(((why, n, cents(t)) for why, (n, t) in by.items()), key=lambda x: (-x[2], x[0]))

    @property
    def outside_bill_usd(self) -> Decimal:
        """Counted savings on resources the bill lacks (priced at list): in the headline, not in "% of spend"."""
        missing = {m.resource_id for m in self.spend.not_in_bill} if self.spend is not None else set()
        return cents(
            sum((r.saving_usd for r in self.rows if r.counted and r.document.resource_id in missing), Decimal(0))
        )

    @property
    def addressable_percent(self) -> Decimal | None:
        """The headline's part on resources the bill contains, as a share of the monthly spend (what the bill lacks
        is priced at list and kept out of the share)."""
        if self.spend is None or self.spend.monthly_usd <= 0:
            return None
        return round_money((self.total_usd - self.outside_bill_usd) * 100 / self.spend.monthly_usd, 1)

    def executive_summary(self) -> list[str]:
        """Five lines: spend, % addressable, quick wins, projects, blocked (with why)."""
        spend = "Accelerator and compute spend: unknown (no cost data for this scan)"
        if self.spend is not None:
            s = self.spend
            why = f" ({'; '.join(s.unattributed_reasons)})" if s.unattributed_reasons else ""
            spend = (
                f"Accelerator and compute spend: {usd(s.monthly_usd)} a month ({s.source}; {s.basis}) = "
                f"{usd(s.monthly_attributed_usd)} attributed to resources {signed(s.monthly_unattributed_usd)} not "
                f"attributed{why}"
            )
            if s.not_in_bill:
                spend += (
                    f"; not in the bill: {len(s.not_in_bill)} running resource{'' if len(s.not_in_bill) == 1 else 's'}"
                    f" ({usd(s.not_in_bill_monthly_usd)} a month at list, not in spend: see the reconciliation)"
                )
        share = self.addressable_percent
        outside = self.outside_bill_usd
        lacking = (
            f"; {usd(outside)} of it on resources the bill lacks (priced at list, out of the %)" if outside else ""
        )
        addressable = (
            f"Addressable: {usd(self.total_usd)} a month, {share} % of spend (quick wins + projects){lacking}"
            if share is not None
            else f"Addressable: {usd(self.total_usd)} a month (quick wins + projects)"
        )
        quick = (
            f"Quick wins: {usd(self.quick_wins_usd)} a month from {plural(self.count('quick_win'), 'finding')}: stop, "
            "delete, schedule or scale, no porting, this week"
        )
        payback = f", payback {self.payback_months} months" if self.payback_months is not None else ""
        projects = (
            f"Projects: {usd(self.projects_usd)} a month from {plural(self.count('project'), 'finding')} a person "
            f"carries out (migrations, changes `findings apply` does not make), porting {usd(self.porting_usd)} "
            f"one-time{payback}"
        )
        reasons = "; ".join(f"{why} ({n}, {usd(total)})" for why, n, total in self.blocked_reasons()) or "none"
        blocked = f"Blocked: {usd(self.blocked_usd)} a month, not counted: {reasons}"
        return [spend, addressable, quick, projects, blocked]


def _payback(one_time: Decimal, monthly: Decimal) -> Decimal | None:
    """Months of saving that pay back a one-time cost, rounded up to a tenth (None: no one-time cost or saving)."""
    months = break_even_months(one_time, monthly) if one_time > 0 else None
    return None if months is None else Decimal(str(months))


def applicable(document: FindingDocument) -> bool:
    """Whether `chipwise findings apply` has a step for the finding (:func:`chipwise.models.steps.mechanical_step`,
    whose arguments are the finding's fields of the same names)."""
    return (
        mechanical_step(
            rule_id=document.rule_id,
            resource_kind=document.resource_kind,
            variant=document.variant,
            instance_type=document.instance_type,
            instance_count=document.instance_count,
            # the model's own field values (str, int or None: what its JSON dump holds), without a dump per row
            recommendation=vars(document.recommendation),
        )
        is not None
    )


def ledger_row(document: FindingDocument, facts: SavingFacts | None = None) -> LedgerRow:
    """One finding as the ledger counts it: a quick win is a counted step `findings apply` can make; any other
    counted finding is a project (a person carries it out); the rest are blocked, with why. ``facts``: the
    document's :func:`saving_facts`, when the caller has them already."""
    facts = saving_facts(document) if facts is None else facts
    counted = is_counted(document.status, facts.excluded_from_totals)
    group: Group = "blocked" if not counted else ("quick_win" if applicable(document) else "project")
    if document.status == "withdrawn":
        reason: str | None = EXCLUSION_WORDS["withdrawn"]
    elif document.status != "open":
        reason = EXCLUSION_WORDS["closed"]
    else:
        reason = EXCLUSION_WORDS.get(facts.excluded_from_totals or "", facts.excluded_from_totals)
    payback = _payback(facts.one_time_cost_usd, facts.saving_usd) if group == "project" else None
    return LedgerRow(
        document=document,
        group=group,
        counted=counted,
        basis="measured" if facts.measured else "estimated",
        saving_usd=facts.saving_usd,
        one_time_cost_usd=facts.one_time_cost_usd if group == "project" else Decimal(0),
        net_value_12m_usd=facts.net_value_12m_usd,
        payback_months=payback,
        excluded_reason=None if counted else reason,
        exclusion=facts.excluded_from_totals,
    )


def ledger(documents: Iterable[FindingDocument], costs: ScanCosts | None = None, window_hours: int = 0) -> Ledger:
    """The one set of figures for a scan: its findings (after the benchmarks) grouped, ranked and totalled, and
    the scan window's spend reconciled. The headline equals quick wins + projects to the cent."""
    facts = sorted(((d, saving_facts(d)) for d in documents), key=lambda pair: rank(pair[1]))  # each read once
    rows = tuple(ledger_row(d, f) for d, f in facts)
    return Ledger(rows=rows, headline=headline(f for _, f in facts), spend=spend_of(costs, window_hours))


OWNER_TAGS = ("chipwise:owner", "owner", "Owner", "OWNER")
TEAM_TAGS = ("chipwise:team", "team", "Team", "TEAM")


def owner_label(tags: dict[str, str] | None) -> str:
    """Owner and team from a resource's tags: "ana@example.com / ml-platform", one of them, or ""."""
    tags = tags or {}
    owner = next((tags[k] for k in OWNER_TAGS if tags.get(k)), "")
    team = next((tags[k] for k in TEAM_TAGS if tags.get(k)), "")
    return " / ".join(v for v in (owner, team) if v)


def ledger_money(row: LedgerRow) -> tuple[str, str | None, str, str | None]:
    """The ledger's money columns of one row as plain numbers (CSV, JSON): the saving, the net value over 12 months
    (None for a row not counted: it shows why instead), the one-time cost and the payback in months (None without
    one; the one payback figure is the ledger's)."""
    return (
        f"{row.saving_usd:.2f}",
        f"{row.net_value_12m_usd:.2f}" if row.counted else None,
        f"{row.one_time_cost_usd:.2f}",
        None if row.payback_months is None else f"{row.payback_months}",
    )


def ledger_fields(row: LedgerRow, owner: str = "") -> dict[str, str | float | bool | None]:
    """The ledger's columns of one row (JSON; the CSV writes the same words and :func:`ledger_money`): every enum
    in words, money as plain numbers."""
    saving, net_value, one_time, payback = ledger_money(row)
    return {
        "counted": row.counted,
        "basis": row.basis,
        "group": row.group_words,
        "excluded_reason": row.excluded_reason,
        "verdict": row.verdict,
        "owner": owner,
        "saving_usd": saving,
        "one_time_cost_usd": one_time,
        "net_value_12m_usd": net_value,
        "payback_months": payback,
        "break_even_months": None if row.payback_months is None else float(row.payback_months),
        "next_step": next_step(row.document) if row.actionable else None,
    }
