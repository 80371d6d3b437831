"""The ledger: one set of figures per scan. Quick wins + projects = the headline; blocked apart with why; spend =
attributed + not attributed; ranked by 12-month net value. Figures computed by hand."""

from __future__ import annotations

from datetime import UTC, datetime
from decimal import Decimal
from typing import Any

from chipwise.models.findings import FindingDocument, RecommendationDoc
from chipwise.models.scan import ScanCostKind, ScanCosts
from chipwise.models.steps import mechanical_step
from chipwise.presentation import ledger, ledger_fields, ledger_row, owner_label, rank, saving_facts

NOW = datetime(2026, 11, 27, 2, tzinfo=UTC)


def doc(name: str, saving: str, action: str = "stop", **kw: Any) -> FindingDocument:
    recommendation = RecommendationDoc(
        action=kw.pop("action_", action),
        target_instance_type=kw.pop("target", None),
        excluded_from_totals=kw.pop("apart", None),
    )
    values: dict[str, Any] = {
        "finding_id": f"id-{name}",
        "rule_id": "gpu_idle" if action in ("stop", "delete") else "gpu_inference_portable",
        "account_id": "123456789012",
        "region": "us-east-1",
        "resource_id": f"arn:aws:ec2:us-east-1:123456789012:instance/i-{name}",
        "resource_kind": "ec2_instance",
        "resource_name": name,
        "instance_type": "p4d.24xlarge",
        "instance_count": 1,
        "monthly_cost_usd": Decimal("20000"),
        "estimated_monthly_savings_usd": Decimal(saving),
        "recommendation": recommendation,
        "confidence": "high",
        "effort": "none" if action in ("stop", "delete", "schedule", "rightsize") else "days",
        "break_even_months": None,
        "summary": name,
        "evidence": {},
        "status": "open",
        "first_seen": NOW,
        "last_seen": NOW,
    }
    values.update(kw)
    return FindingDocument.model_validate(values)


DOCS = [
    doc("migrate-small", "746.06", "migrate", measured_monthly_savings_usd=Decimal("746.06")),
    doc("idle-p4d", "16029.08", "stop"),
    doc("migrate-big", "6218.68", "migrate", effort="weeks"),
    doc("quote", "16071.68", "migrate", apart="quote_needed"),
    doc("no-telemetry", "0", "enable_telemetry"),
    doc(
        "reviewed",
        "1717.40",
        "migrate",
        evidence={"benchmark": {"status": "needs_review", "reason": "97.18 % cheaper is outside 5-75 %"}},
    ),
    doc("gone", "2000", "migrate", status="withdrawn", measured_monthly_savings_usd=Decimal(0)),
]
COSTS = ScanCosts(
    total_usd=Decimal("1007.27"),
    by_instance_type={"p4d.24xlarge": Decimal("1000.00")},
    kinds=[
        ScanCostKind(
            kind="storage", treatment="ignored", usd=Decimal("7.27"), usage_types=1, reason="not instance hours"
        )
    ],
)


def test_quick_wins_plus_projects_is_the_headline_and_blocked_says_why() -> None:
    figures = ledger(DOCS, COSTS, window_hours=336)
    # quick win: the idle p4d $16,029.08; projects: 746.06 (measured) + 6,218.68 = $6,964.74
    assert (figures.quick_wins_usd, figures.projects_usd) == (Decimal("16029.08"), Decimal("6964.74"))
    assert figures.total_usd == figures.headline.total_usd == Decimal("22993.82")
    # porting: days = 1 engineer-week × $4,000, weeks = 4 × $4,000: $20,000; payback 20,000 ÷ 6,964.74 = 2.9 months
    assert (figures.porting_usd, figures.payback_months) == (Decimal("20000.00"), Decimal("2.9"))
    # blocked: the quote, the review, the unjudged and the withdrawn, each with its reason
    assert figures.blocked_usd == Decimal("17789.08")  # 16,071.68 + 1,717.40 + 0 + 0
    assert [why for why, _, _ in figures.blocked_reasons()] == [
        "needs a price quote",
        "measurement needs review",
        "cannot judge (an input is missing)",
        "withdrawn by measurement",
    ]
    assert figures.headline.counted == 3 and figures.headline.needs_review == 1 and figures.headline.cannot_judge == 1


def test_spend_is_attributed_plus_not_attributed_with_the_source_named() -> None:
    spend = ledger(DOCS, COSTS, window_hours=336).spend
    assert spend is not None
    assert (spend.source, spend.window_usd, spend.attributed_usd, spend.unattributed_usd) == (
        "Cost Explorer",
        Decimal("1007.27"),
        Decimal("1000.00"),
        Decimal("7.27"),
    )
    assert spend.monthly_usd == Decimal("2188.41")  # 1,007.27 × 730 ÷ 336
    assert spend.unattributed_reasons == ("storage: not instance hours",)


def test_the_executive_summary_has_five_lines_adding_up_to_the_headline() -> None:
    lines = ledger(DOCS, COSTS, window_hours=336).executive_summary()
    assert len(lines) == 5
    assert lines[0].startswith("Accelerator and compute spend: $2,188.41 a month (Cost Explorer;")
    assert lines[1].startswith("Addressable: $22,993.82 a month")
    assert lines[2].startswith("Quick wins: $16,029.08 a month from 1 finding")
    assert lines[3] == (
        "Projects: $6,964.74 a month from 2 findings a person carries out (migrations, changes `findings apply` does "
        "not make), porting $20,000.00 one-time, payback 2.9 months"
    )
    assert lines[4].startswith("Blocked: $17,789.08 a month, not counted: needs a price quote (1, $16,071.68)")


def test_ranked_by_twelve_month_net_value_a_quick_win_above_a_project_worth_less() -> None:
    figures = ledger(DOCS)
    names = [r.document.resource_name for r in figures.rows]
    # 16,029.08 × 12 = 192,348.96; 6,218.68 × 12 − 16,000 = 58,624.16; 746.06 × 12 − 4,000 = 4,952.72
    assert names[:3] == ["idle-p4d", "migrate-big", "migrate-small"]
    assert [r.net_value_12m_usd for r in figures.rows[:3]] == [
        Decimal("192348.96"),
        Decimal("58624.16"),
        Decimal("4952.72"),
    ]
    assert all(not r.counted for r in figures.rows[3:])


def test_measured_before_estimated_at_equal_value() -> None:
    estimated = saving_facts(doc("e", "1000", "stop"))
    measured = saving_facts(doc("m", "900", "stop", measured_monthly_savings_usd=Decimal("1000")))
    assert sorted([estimated, measured], key=rank) == [measured, estimated]


def test_rows_not_counted_show_no_action_and_say_why_in_words() -> None:
    rows = {r.document.resource_name: r for r in ledger(DOCS).rows}
    reviewed = ledger_fields(rows["reviewed"], owner_label({"owner": "ana@example.com", "team": "ml"}))
    assert reviewed["counted"] is False and not rows["reviewed"].actionable
    assert (reviewed["group"], reviewed["excluded_reason"], reviewed["owner"]) == (
        "blocked",
        "measurement needs review",
        "ana@example.com / ml",
    )
    assert rows["gone"].verdict == "withdrawn by measurement" and not rows["gone"].actionable
    big = ledger_fields(rows["migrate-big"])
    assert (big["counted"], big["group"], big["basis"], big["net_value_12m_usd"], big["payback_months"]) == (
        True,
        "project",
        "estimated",
        "58624.16",
        "2.6",  # 16,000 ÷ 6,218.68
    )


# --- what counts (issue 35, item 4) --------------------------------------------------------------------------------


def test_a_cannot_judge_finding_is_never_a_quick_win_whatever_its_action() -> None:
    # a notebook without activity: rule cannot_judge with action "schedule" and $0 (the demo's research notebook)
    notebook = doc(
        "notebook",
        "0",
        "schedule",
        rule_id="cannot_judge",
        resource_kind="sagemaker_notebook_instance",
        evidence={"verdict": "cannot_judge", "reason": "no activity metric", "fix": "idle-shutdown lifecycle config"},
    )
    row = ledger_row(notebook)
    assert (row.counted, row.group, row.verdict) == (False, "blocked", "cannot judge (an input is missing)")
    assert ledger([notebook]).headline.cannot_judge == 1


def test_a_move_worth_less_than_its_porting_in_12_months_is_not_counted() -> None:
    # weeks of porting: 4 × $4,000 = $16,000; 12 × $1,052.32 = $12,627.84: net −$3,372.16
    bert = doc("bert", "1431.17", "migrate", effort="weeks", measured_monthly_savings_usd=Decimal("1052.32"))
    row = ledger_row(bert)
    assert (row.counted, row.verdict) == (False, "not worth it within 12 months")
    figures = ledger([bert, doc("idle", "100", "stop")])
    assert figures.total_usd == Decimal("100.00")
    assert figures.headline.not_worth_it == 1
    assert "1 not worth it within 12 months" in figures.headline.sentence()


def test_blocked_rows_carry_no_net_value_payback_or_next_step() -> None:
    quote = doc("quote", "16071.68", "migrate", apart="quote_needed")
    fields = ledger_fields(ledger_row(quote))
    assert (fields["net_value_12m_usd"], fields["payback_months"], fields["break_even_months"]) == (None, None, None)
    assert fields["next_step"] is None and ledger_fields(ledger_row(doc("idle", "10")))["next_step"] == "Stop"
    assert not ledger_row(quote).actionable


def test_blocked_rows_sort_by_saving_not_by_a_net_value_they_do_not_have() -> None:
    small = doc("committed-small", "152.79", "migrate", apart="committed")
    block = doc("capacity-block", "40179.20", "rightsize", apart="committed", effort="none")
    idle = doc("idle", "10", "stop")
    names = [r.document.resource_name for r in ledger([small, block, idle]).rows]
    assert names == ["idle", "capacity-block", "committed-small"]


def test_a_quick_win_is_a_step_apply_makes_else_a_project() -> None:
    stop = doc("idle", "500", "stop")  # gpu_idle on an EC2 instance: apply stops it
    # a rightsize to another type on an instance: no mechanical step (a person moves it), no porting
    rightsize = doc("underused", "3631.19", "rightsize", rule_id="inferentia_underutilized", target="inf2.xlarge")
    # an idle variant of a multi-variant endpoint: apply refuses to delete one variant
    variant = doc(
        "variant",
        "800",
        "delete",
        resource_kind="sagemaker_endpoint",
        resource_id="arn:aws:sagemaker:us-east-1:123456789012:endpoint/e#variant/v2",
        variant="v2",
    )
    groups = {r.document.resource_name: r.group for r in ledger([stop, rightsize, variant]).rows}
    assert groups == {"idle": "quick_win", "underused": "project", "variant": "project"}
    assert ledger_row(rightsize).one_time_cost_usd == 0 and ledger_row(rightsize).payback_months is None
    whole = variant.model_copy(update={"variant": None, "resource_id": "arn:aws:sagemaker:us-east-1:1:endpoint/e"})
    assert ledger_row(whole).group == "quick_win"
    assert (
        mechanical_step(
            rule_id="gpu_idle",
            resource_kind="sagemaker_endpoint",
            variant="v2",
            instance_type="ml.g5.xlarge",
            instance_count=1,
            recommendation={"action": "delete"},
        )
        is None
    )


def test_one_payback_figure_rounded_up_in_every_field() -> None:
    # days: $4,000 ÷ $6,218.68 = 0.643 months: rounded up 0.7 (never 0.6)
    fleet = doc("fleet", "6218.68", "migrate")
    row = ledger_row(fleet)
    fields = ledger_fields(row)
    assert row.payback_months == Decimal("0.7")
    assert (fields["payback_months"], fields["break_even_months"]) == ("0.7", 0.7)
    assert ledger([fleet]).payback_months == Decimal("0.7")
