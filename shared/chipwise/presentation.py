"""How a finding reads, in one place: the rule's name, the current capacity, the next step and the saving
to show. The CLI, the demo report, the digest, alerts, Slack and the drafts all word findings with these."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from decimal import Decimal
from urllib.parse import quote

from chipwise.economics import cents, round_money, usd
from chipwise.models.common import SERVING_KINDS
from chipwise.models.evidence import FindingEvidence
from chipwise.models.findings import FindingDocument, RecommendationDoc

_ACRONYMS = {"gpu": "GPU", "cpu": "CPU", "ec2": "EC2", "eks": "EKS", "sagemaker": "SageMaker"}
_VERBS = {"enable_telemetry": "Enable telemetry"}


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


def next_step(document: FindingDocument) -> str:
    """A finding's next step in a few words."""
    return next_step_words(document.recommendation.action, target_label(document.recommendation))


def best_saving(document: FindingDocument) -> Decimal:
    """The measured saving when a benchmark replaced the estimate (0 when it withdrew the recommendation)."""
    measured = document.measured_monthly_savings_usd
    return document.estimated_monthly_savings_usd if measured is None else measured


def benchmark_verdict(document: FindingDocument) -> str | None:
    """The latest benchmark's status on the finding ("confirmed", "withdrawn", ...), if one ran."""
    benchmark = FindingEvidence.read(document.evidence).benchmark
    status = (benchmark or {}).get("status")
    return str(status) if status else None


NEEDS_REVIEW = "needs_review"


def exclusion(document: FindingDocument) -> str | None:
    """Why a finding's saving is not counted, or None: the rule's (a price quote, committed hours), or a benchmark
    whose result failed the plausibility gate (``needs_review``: out of the totals until someone checks it)."""
    if document.recommendation.excluded_from_totals is not None:
        return document.recommendation.excluded_from_totals
    return NEEDS_REVIEW if benchmark_verdict(document) == NEEDS_REVIEW else None


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

    @property
    def total_usd(self) -> Decimal:
        return self.measured_usd + self.estimated_usd

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


def saving_facts(document: FindingDocument) -> SavingFacts:
    return SavingFacts(
        status=document.status,
        excluded_from_totals=exclusion(document),
        measured=document.measured_monthly_savings_usd is not None,
        saving_usd=best_saving(document),
    )


def rank(facts: SavingFacts) -> tuple[int, int, Decimal]:
    """The order every list of findings follows: counted savings before the ones set apart (a quote, committed
    hours, withdrawn or closed), measured savings before estimates (a ratio-based estimate ranks below any
    measurement), then the largest saving first. Use it as a sort key, with a stable tie-break after it."""
    apart = facts.status != "open" or facts.excluded_from_totals is not None
    return (apart, not facts.measured and not apart, -facts.saving_usd)


def ranked(documents: Iterable[FindingDocument]) -> list[FindingDocument]:
    """Findings in :func:`rank` order (stable: equal ranks keep the order they came in)."""
    return sorted(documents, key=lambda d: rank(saving_facts(d)))


def counts_in_totals(document: FindingDocument) -> bool:
    """An open finding whose saving is a real monthly saving (not a quote to ask for, nor committed hours)."""
    return document.status == "open" and exclusion(document) is None


def headline(items: Iterable[FindingDocument | SavingFacts]) -> Headline:
    """Totals over findings, after the last stage that can change them (benchmarks): open findings only."""
    measured = estimated = Decimal(0)
    counted = n_measured = quote = committed = withdrawn = review = 0
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
        counted += 1
        if facts.measured:
            n_measured += 1
            measured += facts.saving_usd
        else:
            estimated += facts.saving_usd
    return Headline(cents(measured), cents(estimated), counted, n_measured, quote, committed, withdrawn, review)


def hours_label(hours: Decimal) -> str:
    """Usage hours as people read them: ``4 h``, ``1.5 h``, ``1,234 h`` (to a tenth, no trailing zero)."""
    text = f"{round_money(hours, 1):,.1f}"
    return f"{text.removesuffix('.0')} h"


# --- links and commands every message carries ---------------------------------------------------------------

SHORT_ID = 8  # characters of a finding id the lists show (and every command accepts)


def short_id(finding_id: str) -> str:
    return finding_id[:SHORT_ID]


def console_url(resource_arn: str, region: str, resource_kind: str) -> str:
    """The AWS console page of a resource: its own page for the kinds Chipwise collects, otherwise the
    console's ARN redirect (``/go/view?arn=``)."""
    name = resource_arn.rsplit("/", 1)[-1]
    if resource_kind in SERVING_KINDS:  # ...:endpoint/<endpoint>/variant/<v> or /inference-component/<c>
        name = resource_arn.split(":endpoint/", 1)[-1].split("/", 1)[0]
    base = f"https://{region}.console.aws.amazon.com"
    if resource_kind == "ec2_instance":
        return f"{base}/ec2/home?region={region}#InstanceDetails:instanceId={quote(name, safe='')}"
    if resource_kind in SERVING_KINDS:  # an inference component is listed on its endpoint's page
        return f"{base}/sagemaker/home?region={region}#/endpoints/{quote(name, safe='')}"
    if resource_kind == "sagemaker_training_job":
        return f"{base}/sagemaker/home?region={region}#/jobs/{quote(name, safe='')}"
    if resource_kind == "batch_compute_environment":
        return f"{base}/batch/home?region={region}#compute-environments/detail/{quote(resource_arn, safe='')}"
    return f"https://console.aws.amazon.com/go/view?arn={quote(resource_arn, safe='')}"


def suppress_command(finding_id: str) -> str:
    """The command that hides a finding (the user fills in the date and the reason)."""
    return f'chipwise findings suppress {short_id(finding_id)} --until YYYY-MM-DD --reason "…"'
