"""The demo's artifacts, end to end through `chipwise demo`: one headline to the cent on every surface, withdrawn
findings withdrawn everywhere, and customer-facing documents that cite public sources only."""

from __future__ import annotations

import json
import re
import sys
from decimal import Decimal
from pathlib import Path

import pytest

from chipwise.economics import usd
from chipwise.models.findings import FindingDocument
from chipwise.presentation import Headline, headline

CHIPWISE = Path(sys.executable).with_name("chipwise")
NOT_PUBLIC = re.compile(
    r"/work/|/home/|/tmp/|\bseeds/|shared/reference|\brecalled\b|\bunverified\b"
    # the handbook's files ("aws.md section 6", "reference/credits.md") and "the seed documents"
    r"|(?<![\w/.-])(?:reference/)?(?:aws|domain|billing|neuron-software|credits|peers|style-models|DESIGN)\.md\b"
    r"|seed documents?",
    re.IGNORECASE,
)
# What a customer, AWS or a partner reads: the plan page and email, the drafts, the digest, alerts and Slack.
CUSTOMER_FACING = ("plan", "drafts", "email", "slack", "digest.html", "digest.txt")

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def demo(demo_artifacts: Path) -> Path:
    return demo_artifacts


@pytest.fixture(scope="module")
def findings(demo: Path) -> list[FindingDocument]:
    return [FindingDocument.model_validate(d) for d in json.loads((demo / "findings.json").read_text())]


@pytest.fixture(scope="module")
def totals(findings: list[FindingDocument]) -> Headline:
    return headline(findings)


def test_every_surface_shows_the_same_total_to_the_cent(demo: Path, totals: Headline) -> None:
    total = usd(totals.total_usd)
    assert totals.total_usd > 0 and totals.measured_usd > 0 and totals.estimated_usd > 0
    surfaces = [
        "summary.md",
        "report.md",
        "digest.txt",
        "digest.html",
        "drafts/credits-application.md",
        "drafts/partner-referral-email.txt",
    ]
    surfaces += [str(p.relative_to(demo)) for p in (demo / "slack").glob("*digest*.json")]
    assert len(surfaces) > 6  # a Slack digest was written
    for surface in surfaces:
        assert total in (demo / surface).read_text(encoding="utf-8"), surface
    # and the measured part is given apart from the estimated part
    assert usd(totals.measured_usd) in (demo / "report.md").read_text(encoding="utf-8")
    assert usd(totals.measured_usd) in (demo / "digest.txt").read_text(encoding="utf-8")


def test_a_withdrawn_finding_is_withdrawn_everywhere(demo: Path, findings: list[FindingDocument]) -> None:
    withdrawn = [f for f in findings if f.status == "withdrawn"]
    assert withdrawn, "the demo's benchmark withdraws one recommendation"
    for finding in withdrawn:
        assert finding.summary.startswith("Withdrawn by measurement")
        assert finding.measured_monthly_savings_usd == 0
        row = next(
            line for line in (demo / "report.md").read_text().splitlines() if f"| {finding.resource_name} |" in line
        )
        assert "withdrawn by measurement" in row
        for alert in [*(demo / "slack").glob("*alert*.json"), *(demo / "email").glob("alert-*.txt")]:
            assert finding.resource_name not in alert.read_text(encoding="utf-8"), alert.name


def test_findings_out_of_the_totals_say_why(findings: list[FindingDocument], totals: Headline) -> None:
    quote = [f for f in findings if f.recommendation.excluded_from_totals == "quote_needed"]
    committed = [f for f in findings if f.recommendation.excluded_from_totals == "committed"]
    # the idle Bedrock provisioned throughput is priced from its bill ($60.50 an hour): committed until its term ends
    assert (len(quote), len(committed)) == (totals.quote_needed, totals.committed) == (1, 3)
    assert all("quote" in f.summary for f in quote)
    (savings_plan,) = [f for f in committed if f.rule_id != "capacity_held_idle"]
    (throughput,) = [f for f in committed if f.resource_kind == "bedrock_provisioned_throughput"]
    assert throughput.estimated_monthly_savings_usd == Decimal("44165.00")  # $60.50 × 730
    assert "Its bill: $60.50 an hour" in throughput.summary
    (block,) = [f for f in committed if f.rule_id == "capacity_held_idle" and f is not throughput]
    assert "does not cut the bill while the commitment runs" in savings_plan.summary
    assert "Capacity Block's fee is paid up front" in block.summary and "committed until" in block.summary
    # every migration names the Neuron software it assumes
    for finding in findings:
        if finding.recommendation.action == "migrate" and finding.recommendation.target_platform != "bedrock":
            assert finding.recommendation.software_path, finding.resource_name


def test_customer_facing_documents_cite_public_sources_only(demo: Path) -> None:
    files = [
        p for name in CUSTOMER_FACING for p in ([demo / name] if (demo / name).is_file() else (demo / name).rglob("*"))
    ]
    documents = [p for p in files if p.is_file()]
    assert len(documents) > 10  # plan, drafts, digest and its emails, Slack (a first run sends no alert)
    for document in documents:
        text = document.read_text(encoding="utf-8")
        found = NOT_PUBLIC.search(text)
        assert found is None, f"{document.relative_to(demo)}: {found.group(0) if found else ''}"


def test_the_office_hours_endpoint_gets_a_schedule(findings: list[FindingDocument]) -> None:
    # The legal team's assistant works weekdays 09:00-19:00 UTC: off 118 hours a week on a schedule
    (found,) = [f for f in findings if f.resource_name == "contracts-qa-inf2-office"]
    assert found.rule_id == "accelerator_off_hours"
    assert found.recommendation.action == "schedule"
    assert found.evidence["off_hours_per_week"] == 118
    assert found.evidence["schedule"] == "Mon–Fri 09:00–19:00; Sat–Sun off (UTC)"
    # saving = 118 h x 730 / 168 x the endpoint's hourly rate (its monthly cost / 730), net of the cold starts
    # it states (5 scale-ups a week, each started early)
    rate = found.monthly_cost_usd / 730
    cold = Decimal(str(found.evidence["cold_start_monthly_usd"]))
    assert cold > 0
    assert abs(found.estimated_monthly_savings_usd - (rate * 118 * 730 / 168 - cold)) < Decimal("0.01")


def test_the_endpoint_retired_between_daily_scans_realised_its_saving(demo: Path) -> None:
    # An idle ml.inf2.xlarge endpoint deleted between the earlier daily scans: its finding resolved, and today's
    # scan compares its usage type's daily cost before and after: one instance-day less, 24 h x rate x 730 / 24
    report = (demo / "report.md").read_text()
    row = next(line for line in report.splitlines() if line.startswith("| translate-inf2-retired |"))
    cells = [c.strip() for c in row.strip("|").split("|")]
    assert cells[1:3] == ["Idle Inferentia endpoint or instance", "gone"]
    assert cells[3] == cells[4]  # realised = estimated ($722.70 a month: the catalog price x 730)
    assert cells[5] == "100%"
    assert "Realised to date:" in (demo / "digest.txt").read_text()


def test_the_reports_do_not_grade_themselves_with_the_demos_ground_truth(demo: Path) -> None:
    # The findings report and the HTML report are what a customer reads: no self-grading against the demo's own
    # answer key; that check stays in the demo's summary
    for name in ["report.md", *(p.name for p in demo.glob("chipwise-report-*.html"))]:
        text = (demo / name).read_text(encoding="utf-8")
        assert "ground truth" not in text.lower() and "precision and recall" not in text.lower(), name
    summary = (demo / "summary.md").read_text(encoding="utf-8")
    assert "against its ground truth" in summary and "| gpu_idle | 1.00 | 1.00 |" in summary


def test_the_demo_documents_name_rules_by_their_titles(demo: Path) -> None:
    report = (demo / "report.md").read_text(encoding="utf-8")
    assert "| GPU training portable to Trainium |" in report and "| gpu_training_portable |" not in report
    assert "top: Idle GPU instance or endpoint on p4d-research-idle" in (demo / "summary.md").read_text()
    assert "| gpu_training_portable |" not in (demo / "benchmarks.md").read_text(encoding="utf-8")


def test_the_demo_applies_a_quick_win_and_rolls_it_back(demo: Path) -> None:
    actions = (demo / "actions.md").read_text()
    assert "# Acting on a quick win: gpu_idle on gpu-notebook-g5-idle" in actions
    assert "ec2.StopInstances(InstanceIds=['i-" in actions
    assert ": applied (instance stopped);" in actions and ": rolled_back (instance running)." in actions
    rows = [line for line in actions.splitlines() if line.startswith("| 20")]
    assert [row.split(" | ")[1:3] for row in rows] == [["apply", "applied"], ["rollback", "rolled_back"]]
    (report,) = demo.glob("chipwise-report-*.html")
    html = report.read_text()
    assert "Actions and alert precision, last 30 days" in html
    assert "apply ec2_stop" in html and "rollback ec2_stop" in html and "ec2.StartInstances, ec2.DeleteTags" in html
    assert "Alert precision: no alert was sent in the last 30 days." in html  # the demo's first run sends no alert
