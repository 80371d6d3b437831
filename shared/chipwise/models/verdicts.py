"""One verdict per accelerated resource of a scan, and each rule's outcome on it (``chipwise resources``,
``chipwise findings explain``, the scan document's ``verdicts``)."""

from typing import Literal

from pydantic import BaseModel, ConfigDict

RuleOutcomeKind = Literal["fired", "superseded", "passed", "lacked_data", "not_applicable"]
VerdictKind = Literal["waste", "efficient", "cannot_judge", "not_counted", "out_of_scope"]
MissingInput = Literal["telemetry", "price", "model size", "traffic history"]

OUTCOME_WORDS: dict[str, str] = {
    "fired": "fired",
    "superseded": "fired, superseded by another rule",
    "passed": "checked, passed",
    "lacked_data": "could not judge",
    "not_applicable": "does not apply",
}
VERDICT_WORDS: dict[str, str] = {
    "waste": "waste",
    "efficient": "efficient",
    "cannot_judge": "cannot judge",
    "not_counted": "not counted",
    "out_of_scope": "out of scope",
}


class RuleOutcome(BaseModel):
    """What one rule concluded on one resource: fired, passed (with the evidence), lacked data (and which), or did
    not apply (and why)."""

    model_config = ConfigDict(defer_build=True, extra="forbid", frozen=True)

    rule_id: str
    outcome: RuleOutcomeKind
    reason: str
    missing: MissingInput | None = None


class ResourceVerdict(BaseModel):
    """Exactly one verdict per resource of a scan: ``waste`` (its counted findings, with their dollars),
    ``efficient`` (checked, with the evidence that cleared it, or a benchmark withdrew the move), ``cannot_judge``
    (what would let Chipwise judge), ``not_counted`` (findings set apart from the totals, with why) or
    ``out_of_scope`` (with why: an instance an AWS Batch compute environment launched names the environment it is
    judged on). Settled by :func:`chipwise.analyse.verdicts.settle_verdicts`."""

    model_config = ConfigDict(defer_build=True, extra="forbid", frozen=True)

    resource_id: str  # Chipwise's id of the resource (ScanResource.id: its ARN, #variant/<name> for a variant)
    name: str
    kind: str
    platform: str
    instance_type: str | None
    verdict: VerdictKind
    reason: str
    missing: list[MissingInput] = []
    finding_rules: list[str] = []
    outcomes: list[RuleOutcome] = []
