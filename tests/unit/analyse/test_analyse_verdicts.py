"""Verdicts from one source (issue 35, item 5): each resource's verdict is its rule outcomes settled by its findings
as the ledger counts them. Waste only with a counted finding (its dollars in the reason); efficient when a benchmark
withdrew the move (what it measured); cannot judge with the fix; set-apart findings "not counted" with why."""

from __future__ import annotations

from datetime import UTC, datetime
from decimal import Decimal
from typing import Any

from chipwise.analyse.verdicts import every_verdict, settle_verdicts
from chipwise.models.findings import FindingDocument, RecommendationDoc
from chipwise.models.scan import ScanResource
from chipwise.models.verdicts import ResourceVerdict, RuleOutcome

NOW = datetime(2026, 11, 27, 2, tzinfo=UTC)
TITLES = {
    "gpu_idle": "Idle GPU instance or endpoint",
    "cannot_judge": "Spend that cannot be judged",
    "trainium_serving_inference": "Trainium serving inference",
}


def title(rule_id: str) -> str:
    return TITLES.get(rule_id, rule_id)


def arn(name: str) -> str:
    return f"arn:aws:ec2:us-east-1:123456789012:instance/i-{name}"


def fired(name: str, rule_id: str) -> ResourceVerdict:
    """The rules' verdict at scan time: a rule fired, so 'waste' until the ledger settles it."""
    return ResourceVerdict(
        resource_id=arn(name),
        name=name,
        kind="ec2_instance",
        platform="nvidia",
        instance_type="g5.xlarge",
        verdict="waste",
        reason=f"1 finding: {title(rule_id)}",
        finding_rules=[rule_id],
        outcomes=[RuleOutcome(rule_id=rule_id, outcome="fired", reason="made a finding")],
    )


def finding(name: str, rule_id: str, saving: str, action: str = "stop", **kw: Any) -> FindingDocument:
    values: dict[str, Any] = {
        "finding_id": f"id-{name}",
        "rule_id": rule_id,
        "account_id": "123456789012",
        "region": "us-east-1",
        "resource_id": arn(name),
        "resource_kind": "ec2_instance",
        "resource_name": name,
        "instance_type": "g5.xlarge",
        "instance_count": 1,
        "monthly_cost_usd": Decimal("1000"),
        "estimated_monthly_savings_usd": Decimal(saving),
        "recommendation": RecommendationDoc(action=action, excluded_from_totals=kw.pop("apart", None)),
        "confidence": "high",
        "effort": "none" if action == "stop" else "days",
        "break_even_months": None,
        "summary": name,
        "evidence": {},
        "status": "open",
        "first_seen": NOW,
        "last_seen": NOW,
    }
    values.update(kw)
    return FindingDocument.model_validate(values)


def test_waste_only_with_a_counted_finding_and_its_dollars_in_the_reason() -> None:
    settled = settle_verdicts([fired("idle", "gpu_idle")], [finding("idle", "gpu_idle", "734.38")], title)
    assert settled[0].verdict == "waste"
    assert settled[0].reason == "Idle GPU instance or endpoint: $734.38 a month (estimated, quick win)"


def test_a_withdrawn_move_is_efficient_with_what_the_benchmark_measured() -> None:
    measured = "no saving: 2 × ml.inf2.48xlarge cost $22,746.80 a month, today $20,802.81"
    withdrawn = finding(
        "llama",
        "trainium_serving_inference",
        "9429.41",
        "migrate",
        status="withdrawn",
        measured_monthly_savings_usd=Decimal(0),
        evidence={"benchmark": {"status": "withdrawn", "reason": measured}},
    )
    settled = settle_verdicts([fired("llama", "trainium_serving_inference")], [withdrawn], title)
    assert settled[0].verdict == "efficient"
    assert settled[0].reason == f"a benchmark withdrew Trainium serving inference: {measured}"


def test_a_cannot_judge_finding_is_cannot_judge_naming_the_fix_not_waste() -> None:
    fix = "a lifecycle configuration that stops the notebook instance when idle (idle shutdown)"
    notebook = finding(
        "nb",
        "cannot_judge",
        "0",
        "schedule",
        evidence={"verdict": "cannot_judge", "reason": "no activity metric for a notebook instance", "fix": fix},
    )
    settled = settle_verdicts([fired("nb", "cannot_judge")], [notebook], title)
    assert settled[0].verdict == "cannot_judge"
    assert settled[0].reason.endswith(f"to judge it: {fix}")


def test_findings_set_apart_are_not_counted_with_why_never_waste() -> None:
    block = finding("block", "gpu_idle", "40179.20", apart="committed")
    settled = settle_verdicts([fired("block", "gpu_idle")], [block], title)
    assert settled[0].verdict == "not_counted"
    assert "$40,179.20 a month not counted: runs on committed capacity" in settled[0].reason


def test_resources_no_finding_keeps_its_rule_verdict_and_every_resource_gets_one() -> None:
    checked = fired("busy", "gpu_idle").model_copy(update={"verdict": "efficient", "reason": "checked"})
    cpu = ScanResource(
        id=arn("cpu"), kind="ec2_instance", name="cpu", instance_type="c6i.large", instance_count=1, platform="cpu"
    )
    every = every_verdict([checked], [cpu])
    assert {v.name: v.verdict for v in every} == {"busy": "efficient", "cpu": "out_of_scope"}
    assert settle_verdicts(every, [], title) == every
