"""What every rule is made of: validated metadata, a params model, a pure ``evaluate`` and the draft it returns.

A rule reads one :class:`~chipwise.analyse.profiles.ResourceProfile`, the catalog and a clock (the
:class:`RuleContext`) and returns a :class:`FindingDraft` or None. It never touches the store or AWS; the engine
applies the drafts to the findings table (upsert, first/last seen, auto-resolve).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime
from decimal import Decimal
from typing import Annotated, Any, ClassVar, Generic, Literal, TypeVar, get_args

from pydantic import BaseModel, ConfigDict, Field

from chipwise.analyse.profiles import ResourceProfile
from chipwise.catalog import Assumptions, Catalog, ModelFamilies
from chipwise.economics import break_even_months, cents, usd
from chipwise.models.common import SERVING_KINDS, Action, Confidence, Effort, TargetPlatform, TotalsExclusion
from chipwise.models.evidence import FindingEvidence
from chipwise.models.findings import EvidenceValue as EvidenceValue
from chipwise.models.findings import FindingDraft as FindingDraft
from chipwise.models.findings import RecommendationDoc
from chipwise.presentation import plural

Severity = Literal["low", "medium", "high"]
# A draft's fields copied from the profile (field: the profile's attribute) and from the rule's outcome (same name).
DRAFT_FROM_PROFILE = {
    **{name: name for name in ("account_id", "region", "instance_type", "instance_count")},
    **{"resource_arn": "arn", "resource_variant": "variant", "resource_kind": "kind", "resource_name": "name"},
}
DRAFT_FROM_OUTCOME = ("confidence", "summary", "signals_used", "signals_missing", "effort")
_CONFIDENCE_ORDER: tuple[Confidence, ...] = ("low", "medium", "high")
RULE_ID_PATTERN = r"^[a-z][a-z0-9]*(_[a-z0-9]+)*$"


class RuleMeta(BaseModel):
    """A rule's identity and why it exists. ``id`` must equal the rule's module name (checked at registration).

    A rule module states each once: left out, the id is the module's name and the rationale the rule class's
    docstring (the registry fills them in and validates the whole)."""

    model_config = ConfigDict(defer_build=True, frozen=True, extra="forbid")

    id: str = Field("", pattern=RULE_ID_PATTERN, max_length=64)
    title: str = Field(min_length=3, max_length=120)
    severity: Severity
    rationale: str = Field("", min_length=20, description="Why the pattern costs money, in a sentence or two.")
    applies_to: str = Field(min_length=3, description="Which resources the rule looks at.")
    supersedes: tuple[str, ...] = Field(
        (), description="Rules whose finding on the same resource this one makes moot (idle beats rightsizing)."
    )


# The bounds a threshold of each kind takes, declared once: a utilisation percentage and a share of hours.
Percent = Annotated[float, Field(gt=0, le=100)]
Share = Annotated[float, Field(ge=0, le=1)]


class RuleParams(BaseModel):
    """Thresholds of one rule; a policy file overrides them (``[rules.<rule_id>]``). Unknown keys are rejected."""

    model_config = ConfigDict(defer_build=True, frozen=True, extra="forbid")

    enabled: bool = Field(True, description="Evaluate this rule.")


class SavingParams(RuleParams):
    """Thresholds every rule that reports a saving shares."""

    min_monthly_savings_usd: Decimal = Field(Decimal(20), ge=0, description="Smaller savings are not reported.")


class IdleParams(RuleParams):
    """Thresholds every rule that calls a resource idle over a period shares (the idle rules, cannot_judge)."""

    min_idle_days: float = Field(7, ge=1, le=63, description="Days without work before a resource is idle.")
    min_telemetry_share: Share = Field(
        0.5, description="Share of the idle period that must have accelerator datapoints."
    )

    @property
    def min_idle_hours(self) -> float:
        return self.min_idle_days * 24


P = TypeVar("P", bound=RuleParams)
ENDPOINT_OR_INSTANCE = ("sagemaker_endpoint", "ec2_instance")
IDLE_SUPERSEDES = ("spiky_inference_bedrock", "accelerator_off_hours")


def idle_meta(*, title: str, applies_to: str, supersedes: tuple[str, ...]) -> RuleMeta:
    """The metadata of a rule that finds capacity doing nothing (severity high). Deleting or stopping it makes any
    other finding on the same resource moot: it supersedes the Bedrock move and the off-hours schedule as well as
    ``supersedes`` (its own platform's resizing or porting findings)."""
    return RuleMeta(title=title, severity="high", applies_to=applies_to, supersedes=(*supersedes, *IDLE_SUPERSEDES))


@dataclass(frozen=True)
class RuleContext:
    """Everything a rule may read besides the profile: the clock and the reference data."""

    now: datetime
    catalog: Catalog
    assumptions: Assumptions
    families: ModelFamilies


@dataclass(frozen=True)
class Outcome:
    """The parts of a draft that a rule decides; :meth:`Rule.draft` adds the resource's identity."""

    monthly_cost: Decimal
    saving: Decimal
    action: Action
    confidence: Confidence
    summary: str
    evidence: dict[str, EvidenceValue]
    target_platform: TargetPlatform | None = None
    target_instance_type: str | None = None
    target_count: int | None = None
    signals_used: tuple[str, ...] = ()
    signals_missing: tuple[str, ...] = ()
    effort: Effort = "none"
    one_time_cost: Decimal | None = None
    excluded_from_totals: TotalsExclusion | None = None
    software_path: str | None = None


class Rule(ABC, Generic[P]):
    """A registered rule: class attributes ``meta`` and ``params_model``; ``evaluate`` is pure.

    ``params_model`` is the params class the rule is declared with (``class GpuIdle(Rule[GpuIdleParams])``), so a
    rule names it once; a class may still set it itself."""

    meta: ClassVar[RuleMeta]
    params_model: ClassVar[type[RuleParams]]

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if "params_model" in cls.__dict__:
            return
        for base in cls.__dict__.get("__orig_bases__", ()):
            declared = [a for a in get_args(base) if isinstance(a, type) and issubclass(a, RuleParams)]
            if declared:
                cls.params_model = declared[0]

    def __init__(self, params: P) -> None:
        self.params = params

    @abstractmethod
    def evaluate(self, profile: ResourceProfile, ctx: RuleContext) -> FindingDraft | None:
        """The finding this rule makes on ``profile``, or None."""

    @staticmethod
    def running(profile: ResourceProfile, kinds: tuple[str, ...] = ENDPOINT_OR_INSTANCE) -> bool:
        """Live, instance-backed capacity of one of ``kinds`` (a serverless endpoint has no instance to stop or
        size)."""
        return profile.kind in kinds and profile.live and not profile.serverless

    @staticmethod
    def dedicated(profile: ResourceProfile) -> bool:
        """Running endpoint or instance capacity one workload has to itself (not a variant its inference components
        share: each component is judged on its own), the only capacity a rule resizes, moves or schedules."""
        return Rule.running(profile) and not profile.shares_instances

    def idle(
        self,
        profile: ResourceProfile,
        monthly: Decimal,
        confidence: Confidence,
        said: str,
        evidence: dict[str, EvidenceValue],
        used: tuple[str, ...],
        missing: tuple[str, ...] = (),
    ) -> FindingDraft:
        """The finding on capacity that did nothing for a period (``said``: what it did not do, and how long): delete
        it (a serving kind) or stop it (an instance), saving its whole cost."""
        action: Action = "delete" if profile.kind in SERVING_KINDS else "stop"
        summary = f"{said}: {idle_step(profile, action)} to save {money(monthly)}/month."
        return self.draft(
            profile,
            Outcome(
                monthly, monthly, action, confidence, summary, evidence, signals_used=used, signals_missing=missing
            ),
        )

    def draft(self, profile: ResourceProfile, outcome: Outcome) -> FindingDraft:
        """A draft for ``profile`` (money to the cent; break-even from the one-time cost when there is one)."""
        saving = cents(outcome.saving)
        break_even = None if outcome.one_time_cost is None else break_even_months(outcome.one_time_cost, saving)
        return FindingDraft(
            rule_id=self.meta.id,
            **copied(profile, DRAFT_FROM_PROFILE),
            **copied(outcome, DRAFT_FROM_OUTCOME),
            monthly_cost_usd=cents(outcome.monthly_cost),
            estimated_monthly_savings_usd=saving,
            recommendation=RecommendationDoc.model_validate(outcome, from_attributes=True),
            break_even_months=break_even,
            evidence=FindingEvidence.from_rule(outcome.evidence),
        )


def copied(source: object, fields: Mapping[str, str] | Iterable[str]) -> dict[str, Any]:
    """The keyword arguments that copy ``source``'s attributes into a record: ``{field: source.<attribute>}`` for
    each ``field: attribute`` of a mapping, or each name of an iterable (the same name on both sides). One mapping
    instead of a keyword list spelling out every ``field=source.field``."""
    pairs = fields.items() if isinstance(fields, Mapping) else ((name, name) for name in fields)
    return {field: getattr(source, attribute) for field, attribute in pairs}


def lower(confidence: Confidence, steps: int = 1) -> Confidence:
    """One (or ``steps``) confidence level down, never below low."""
    return _CONFIDENCE_ORDER[max(0, _CONFIDENCE_ORDER.index(confidence) - steps)]


def money(amount: Decimal | None) -> str:
    """$1,234.56 for summaries."""
    return "$?" if amount is None else usd(amount)


def rounded(value: float | Decimal | None, places: int = 2) -> float | None:
    """An evidence number (evidence is JSON: floats rounded for reading, money stays exact in the finding)."""
    return None if value is None else round(float(value), places)


def cost_evidence(profile: ResourceProfile) -> dict[str, EvidenceValue]:
    """How the resource's cost was priced: the hourly rate, where it came from, any commitment discount."""
    cost = profile.cost
    return {
        "hourly_rate_usd": rounded(cost.hourly_rate, 6),
        "rate_source": cost.rate_source,
        "catalog_rate_usd": rounded(cost.catalog_rate, 6),
        "commitment_discount": rounded(cost.commitment_discount, 4),
        # an inference component's count is its copies (its instances are its variant's)
        "copies" if profile.component_name else "instance_count": profile.instance_count,
        "run_hours": rounded(profile.run_hours, 1),
        "window_days": rounded(profile.window_hours / 24, 1),
        **identity_evidence(profile),
    }


def capacity(profile: ResourceProfile) -> str:
    """What the resource runs on, for summaries: "2 × ml.g5.12xlarge"; an inference component's copies and the
    instances they reserve; a variant shared by components, the instances no component reserves."""
    whole = f"{profile.instance_count} × {profile.instance_type}"
    billed = profile.billed_count
    if profile.component_name:
        reserved = "an unknown share" if billed is None else plural(billed, "instance")
        copies = f"{profile.instance_count} cop{'y' if profile.instance_count == 1 else 'ies'}"
        return f"{copies} on {profile.instance_type}, {reserved} reserved"
    if profile.billed_instances is not None and billed is not None:
        return f"{whole}, {billed.normalize():f} not reserved by its inference components"
    return whole


def idle_step(profile: ResourceProfile, action: str) -> str:
    """What to do with an idle resource, in words: an inference component is deleted (or scaled to zero copies)
    and frees its share when the endpoint scales in; a variant shared by inference components is scaled down to
    what they reserve; a variant of a multi-variant endpoint is removed from the endpoint (a new endpoint config
    without it), not deleted with the endpoint."""
    if profile.component_name and profile.endpoint_name:
        return (
            f"delete inference component {profile.component_name} (or set its copy count to 0) and let endpoint "
            f"{profile.endpoint_name} release the instances it frees (managed instance scaling, or a lower instance "
            f"count); {whole_instances_note(profile)}"
        )
    if profile.kind == "sagemaker_endpoint" and profile.billed_instances is not None:
        return (
            "lower the instance count (or managed instance scaling's minimum) to what its inference components reserve"
        )
    if profile.variant_name and profile.endpoint_name:
        return f"remove variant {profile.variant_name} from endpoint {profile.endpoint_name} (a new endpoint config)"
    return f"{action} it"


def whole_instances_note(profile: ResourceProfile) -> str:
    """When an inference component's saving becomes cash: the endpoint bills whole instances, so the share the
    component reserves is saved only when the endpoint runs on fewer of them (a fraction frees nothing by itself)."""
    billed = profile.billed_count
    endpoint = profile.endpoint_name or "its endpoint"
    note = f"the saving is realised when {endpoint} releases whole instances"
    if billed is not None and billed != billed.to_integral_value():
        note += (
            f" (it reserves {plural(billed, 'instance')}: the fraction is cash only once the other components' "
            "copies fit on fewer instances)"
        )
    return note


def identity_evidence(profile: ResourceProfile) -> dict[str, EvidenceValue]:
    """Which variant, model and sources a finding rests on (only the facts that are known)."""
    hints = profile.hints
    sources = profile.signals.sources
    found: dict[str, EvidenceValue] = {
        "variant_name": profile.variant_name,
        "endpoint_name": profile.endpoint_name if profile.variant_name or profile.component_name else None,
        "inference_component": profile.component_name,
        "billed_instances": rounded(profile.billed_instances, 4) if profile.billed_instances is not None else None,
        "saving_realised": whole_instances_note(profile) if profile.component_name else None,
        "cost_basis": profile.cost_basis,
        "model_id_basis": hints.sources.get("model_id"),
        "model_family_basis": hints.sources.get("model_family"),
        "jumpstart_model_id": hints.jumpstart_model_id,
        "signal_sources": "; ".join(f"{k}={v}" for k, v in sorted(sources.items())) or None,
    }
    return {k: v for k, v in found.items() if v is not None}
