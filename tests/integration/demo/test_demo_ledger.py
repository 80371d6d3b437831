"""The demo's ledger, end to end through `chipwise demo`: every measurement inside its plausible range, the CSV's
counted rows sum to the headline, the idle p4d ranks first, the HTML report and every surface show the same figures."""

from __future__ import annotations

import csv
import io
import json
import re
import sqlite3
import subprocess
import sys
from decimal import Decimal
from html import unescape as html_unescape
from pathlib import Path
from typing import Any

import pytest

from chipwise.economics import usd
from chipwise.models.findings import FindingDocument
from chipwise.presentation import Ledger, ledger

CHIPWISE = Path(sys.executable).with_name("chipwise")

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def demo(demo_artifacts: Path) -> Path:
    return demo_artifacts


def test_every_demo_measurement_is_inside_its_plausible_range_but_the_one_held_for_review(demo: Path) -> None:
    with sqlite3.connect(demo / "chipwise-demo.db") as db:
        rows = db.execute(
            "select f.resource_name, r.target_instance_type, json_extract(r.measured, '$.verdict'), "
            "json_extract(r.measured, '$.measured_saving_fraction'), json_extract(r.measured, '$.plausible_low'), "
            "json_extract(r.measured, '$.plausible_high'), json_extract(r.measured, '$.rate_basis') "
            "from benchmark_runs r join findings f on f.id = r.finding_id where r.measured is not null"
        ).fetchall()
    assert len(rows) >= 8
    ranged, held = 0, []
    for name, target, verdict, fraction, low, high, basis in rows:
        if verdict in ("confirmed", "withdrawn"):
            assert basis in ("account", "catalog"), target  # never a fallback rate
        if fraction is not None and low is not None:
            ranged += 1
            inside = Decimal(low) <= Decimal(str(fraction)) <= Decimal(high)
            assert inside == (verdict != "needs_review"), target
        if verdict == "needs_review":
            held.append(name)
    # both training runs and the GPU → Inferentia run with observed traffic were held to a range (the g6 box's run
    # is inconclusive: no observed traffic to size its target against, so it has no measured saving to range)
    assert ranged >= 3
    # the demo shows the gate working once: the fine-tune's implausible run is held for review, out of the totals
    assert held == ["llama3-8b-finetune"]
    rows_out = {r["resource_name"]: r for r in _rows(_cli(demo, "findings", "--json"))}
    assert rows_out["llama3-8b-finetune"]["counted"] is False
    assert rows_out["llama3-8b-finetune"]["excluded_reason"] == "measurement needs review"


def test_training_is_measured_per_workload_at_the_recommended_count_on_native_pytorch(demo: Path) -> None:
    with sqlite3.connect(demo / "chipwise-demo.db") as db:
        rows = db.execute(
            "select f.resource_name, json_extract(f.recommendation, '$.target_count'), "
            "json_extract(r.measured, '$.target_count'), json_extract(r.measured, '$.cost_per_million_usd'), "
            "json_extract(r.parameters, '$.runner') "
            "from benchmark_runs r join findings f on f.id = r.finding_id "
            "where r.role = 'target' and r.measured is not null and f.rule_id = 'gpu_training_portable'"
        ).fetchall()
    assert {name for name, *_ in rows} == {"llama3-8b-finetune", "bert-large-pretrain"}
    for name, recommended, measured_count, _, runner in rows:
        assert (measured_count, runner) == (recommended, "torchneuron"), name
    assert len({per_million for *_, per_million, _ in rows}) == 2  # an 8B fine-tune and BERT pretraining differ


def _csv(demo: Path) -> list[dict[str, str]]:
    env = {
        "PATH": "/usr/bin:/bin",
        "HOME": str(demo.parent),
        "CHIPWISE_DATABASE_URL": f"sqlite:///{demo}/chipwise-demo.db",
    }
    result = subprocess.run(
        [str(CHIPWISE), "findings", "--format", "csv"], capture_output=True, text=True, env=env, check=True, timeout=120
    )
    return list(csv.DictReader(io.StringIO(result.stdout)))


@pytest.fixture(scope="module")
def figures(demo: Path) -> Ledger:
    found = [FindingDocument.model_validate(d) for d in json.loads((demo / "findings.json").read_text())]
    return ledger(found)


def test_the_csv_counted_rows_sum_to_the_headline_to_the_cent(demo: Path, figures: Ledger) -> None:
    rows = _csv(demo)
    counted = [r for r in rows if r["counted"] == "yes"]
    assert sum((Decimal(r["saving_usd"]) for r in counted), Decimal(0)) == figures.headline.total_usd
    assert len(counted) == figures.headline.counted
    # every row not counted says why, in words, and shows no action or confidence it no longer has
    for r in rows:
        assert r["group"] in ("quick win", "project", "blocked") and r["basis"] in ("measured", "estimated")
        if r["counted"] == "no":
            assert r["excluded_reason"] and "_" not in r["excluded_reason"], r
            assert (r["action"], r["target"], r["confidence"]) == ("", "", ""), r


def test_the_idle_p4d_ranks_first(demo: Path, figures: Ledger) -> None:
    assert _csv(demo)[0]["resource_name"] == "p4d-research-idle"
    assert figures.rows[0].document.resource_name == "p4d-research-idle"
    assert figures.rows[0].group == "quick_win"


def test_the_html_report_totals_counts_and_latest_trend_point_equal_the_headline(demo: Path, figures: Ledger) -> None:
    (page,) = demo.glob("chipwise-report-*.html")
    html = page.read_text()
    total = usd(figures.headline.total_usd)
    assert f'data-figure="total">{total}<' in html
    assert f"a month, from {figures.headline.count_words()}" in html
    points = re.findall(r'data-trend-savings="([^"]+)" data-trend-counted="(\d+)"', html)
    assert len(points) == 3
    assert (Decimal(points[-1][0]), int(points[-1][1])) == (figures.headline.total_usd, figures.headline.counted)


def test_the_executive_summary_adds_up_on_every_surface(demo: Path, figures: Ledger) -> None:
    quick, projects = usd(figures.quick_wins_usd), usd(figures.projects_usd)
    assert figures.quick_wins_usd + figures.projects_usd == figures.headline.total_usd
    blocked = f"Blocked: {usd(figures.blocked_usd)} a month, not counted: "
    surfaces = ["summary.md", "report.md", "digest.txt", "digest.html", "drafts/credits-application.md"]
    surfaces += ["drafts/partner-referral-email.txt", next(p.name for p in demo.glob("chipwise-report-*.html"))]
    surfaces += [str(p.relative_to(demo)) for p in (demo / "slack").glob("*digest*.json")]
    for name in surfaces:
        text = html_unescape((demo / name).read_text())
        assert f"Quick wins: {quick} a month" in text, name
        assert f"Projects: {projects} a month" in text, name
        assert f"Addressable: {usd(figures.total_usd)} a month" in text, name
        assert blocked in text and "needs a price quote" in text, name


def _rows(text: str) -> list[dict[str, Any]]:
    """``--json`` output: one JSON array, or JSON lines (one object a line)."""
    stripped = text.strip()
    if stripped.startswith("["):
        return list(json.loads(stripped))
    return [json.loads(line) for line in stripped.splitlines() if line.strip()]


def _cli(demo: Path, *args: str) -> str:
    env = {
        "PATH": "/usr/bin:/bin",
        "HOME": str(demo.parent),
        "CHIPWISE_DATABASE_URL": f"sqlite:///{demo}/chipwise-demo.db",
    }
    result = subprocess.run(
        [str(CHIPWISE), *args], capture_output=True, text=True, env={**env, "COLUMNS": "200"}, check=True, timeout=120
    )
    return result.stdout


def test_every_accelerated_resource_has_exactly_one_verdict(demo: Path) -> None:
    verdicts = [json.loads(line) for line in _cli(demo, "resources", "--json").splitlines()]  # JSON lines
    with sqlite3.connect(demo / "chipwise-demo.db") as db:
        (document,) = db.execute("select document from scans order by window_end desc limit 1").fetchone()
    resources = json.loads(document)["resources"]
    assert sorted(v["resource_id"] for v in verdicts) == sorted(r["id"] for r in resources)  # one each, no more
    assert {v["verdict"] for v in verdicts} <= {"waste", "efficient", "cannot_judge", "not_counted", "out_of_scope"}
    by_name = {v["name"]: v for v in verdicts}
    # a resource with findings is waste, naming them; CPU is out of scope, saying why
    assert by_name["p4d-research-idle"]["verdict"] == "waste"
    assert by_name["p4d-research-idle"]["finding_rules"] == ["gpu_idle"]
    assert (
        by_name["cpu-batch-ce"]["verdict"] == "out_of_scope"
        and "not an AI accelerator" in by_name["cpu-batch-ce"]["reason"]
    )
    # every verdict says why; cannot_judge names the missing input or what would let Chipwise judge
    for v in verdicts:
        assert v["reason"], v["name"]
        if v["verdict"] == "cannot_judge":
            assert v["missing"] or "to judge it:" in v["reason"], v["name"]


def test_resources_has_no_waste_without_a_counted_finding_and_quotes_its_dollars(demo: Path) -> None:
    verdicts = {v["name"]: v for v in _rows(_cli(demo, "resources", "--json"))}
    rows = _rows(_cli(demo, "findings", "--status", "all", "--json"))
    counted = {r["resource_id"]: r for r in rows if r["counted"]}
    for v in verdicts.values():
        assert (v["verdict"] == "waste") == (v["resource_id"] in counted), v["name"]
        if v["verdict"] == "waste":
            assert f"${Decimal(counted[v['resource_id']]['saving_usd']):,.2f} a month" in v["reason"], v["name"]
    # the benchmark withdrew the llama-70b move: efficient, with what it measured
    llama = verdicts["llama-70b-trn1-serving"]
    assert (
        llama["verdict"] == "efficient"
        and "a benchmark withdrew Trainium serving inference: no saving" in llama["reason"]
    )
    # a notebook without an idle-shutdown lifecycle configuration: cannot judge, that configuration named as the fix
    notebook = verdicts["research-notebook-g5"]
    assert notebook["verdict"] == "cannot_judge" and "lifecycle configuration" in notebook["reason"]
    # no percentage above 100 (SageMaker sums GPUUtilization over the GPUs: shown per GPU)
    explained = _cli(demo, "findings", "explain", "shared-llm-g5")
    assert "per GPU" in explained and not re.search(r"\b(1[0-9]{2}|[2-9][0-9]{2}) %", explained)
    assert "Idle GPU instance or endpoint" in explained  # rules by their titles
    # the HTML report shows each finding's resource verdict from the same source
    words = {"waste": "waste", "efficient": "efficient", "cannot_judge": "cannot judge", "not_counted": "not counted"}
    (page,) = demo.glob("chipwise-report-*.html")
    html = html_unescape(page.read_text())
    for name in ("p4d-research-idle", "llama-70b-trn1-serving", "research-notebook-g5"):
        v = verdicts[name]
        assert f"Resource: {words[v['verdict']]}: {v['reason']}" in html, name


def test_explain_names_why_each_rule_did_not_fire_on_a_resource_without_findings(demo: Path) -> None:
    verdict = json.loads(_cli(demo, "findings", "explain", "chat-llama3-8b-inf2", "--json"))
    assert verdict["verdict"] == "efficient" and not verdict["finding_rules"]
    rules = json.loads(_cli(demo, "rules", "--json"))
    assert {o["rule_id"] for o in verdict["outcomes"]} == {r["id"] for r in rules}
    for outcome in verdict["outcomes"]:
        assert outcome["outcome"] in ("passed", "lacked_data", "not_applicable"), outcome
        assert outcome["reason"], outcome
    gpu_idle = next(o for o in verdict["outcomes"] if o["rule_id"] == "gpu_idle")
    assert gpu_idle["outcome"] == "not_applicable" and "inferentia" in gpu_idle["reason"]
    table = _cli(demo, "findings", "explain", "chat-llama3-8b-inf2")
    assert "does not apply" in table and "checked, passed" in table


def test_the_report_shows_each_rules_prediction_error(demo: Path) -> None:
    (page,) = demo.glob("chipwise-report-*.html")
    html = page.read_text()
    section = html[html.index('id="prediction-error"') : html.index('id="findings"')]
    assert "GPU training portable" in section and "-26.5 %" in section  # 2,315.12 measured vs 3,148.57 estimated
    assert "realised" in section and "Idle Inferentia endpoint or instance" in section


def test_the_csv_carries_each_resources_verdict_from_the_source_resources_reads(demo: Path) -> None:
    verdicts = {v["resource_id"]: v for v in _rows(_cli(demo, "resources", "--json"))}
    words = {"waste": "waste", "efficient": "efficient", "cannot_judge": "cannot judge", "not_counted": "not counted"}
    rows = _csv(demo)
    assert rows
    for row in rows:
        v = verdicts[row["resource_id"]]
        assert (row["resource_verdict"], row["resource_verdict_reason"]) == (words[v["verdict"]], v["reason"]), v
    assert all(r["resource_verdict"] == "waste" for r in rows if r["counted"] == "yes")


def test_a_serving_measurement_is_priced_from_what_it_measured_on_the_recommended_target(demo: Path) -> None:
    with sqlite3.connect(demo / "chipwise-demo.db") as db:
        rows = db.execute(
            "select f.resource_name, f.rule_id, json_extract(f.recommendation, '$.target_instance_type'), "
            "r.target_instance_type, r.job_queue, json_extract(r.measured, '$.verdict'), "
            "json_extract(r.measured, '$.monthly_savings_usd'), json_extract(r.measured, '$.prediction_error'), "
            "json_extract(r.measured, '$.estimated_monthly_savings_usd'), f.estimated_monthly_savings_usd "
            "from benchmark_runs r join findings f on f.id = r.finding_id "
            "where r.role = 'target' and json_extract(r.measured, '$.verdict') is not null"
        ).fetchall()
    assert len(rows) == 8
    differs = []
    for name, rule, recommended, target, queue, verdict, saving, error, estimated, estimate in rows:
        # the run ran the recommended target on its family's queue (never another family's)
        family = target.removeprefix("ml.").split(".")[0]
        assert (target, queue) == (recommended, f"chipwise-bench-{family}"), name
        assert Decimal(str(estimated)) == Decimal(str(estimate)), name  # the estimate recorded beside it
        if verdict == "confirmed" and rule != "gpu_training_portable":
            measured = Decimal(str(saving))
            expected = (Decimal(str(estimate)) - measured) / measured
            assert Decimal(str(error)) == expected.quantize(Decimal("0.0001")), name
            if measured != Decimal(str(estimate)):
                differs.append(name)
    # the demo's simulator models the workload on the target (not the rules' ratios): a serving move can come out
    # differently from its estimate (chat-mistral-g5 needs more inf2.xlarge than the 2.0 × ratio assumed)
    assert "chat-mistral-g5" in differs
    text = (demo / "benchmarks.md").read_text()
    assert "| chat-mistral-g5 |" in text and "+0.0 %" not in text.split("| chat-mistral-g5 |")[1].split("\n")[0]


def test_the_bill_lacks_only_the_deliberate_resources_each_with_its_likely_reason(demo: Path) -> None:
    scan = json.loads((demo / "scan.json").read_text())
    missing = {m["name"]: m for m in scan["costs"]["not_in_bill"]}
    # a real bill has a line for the notebook, the Studio app, the unused reservation and the warm pool's instance
    for billed in ("research-notebook-g5", "d-demo/vision-lab/default", "g6e-reservation-unused"):
        assert billed not in missing, billed
    assert not [m for m in missing.values() if m["kind"] == "ec2_instance"]
    # the deliberate ones, each with its likeliest reason first
    assert missing["p5-capacity-block"]["reasons"][0].startswith("a Capacity Block is paid up front")
    assert missing["hyperpod-pretrain"]["reasons"][0].startswith("launched after the export's last day")
    assert set(missing) == {"p5-capacity-block", "hyperpod-pretrain"}


def test_the_warm_pool_is_priced_from_its_instance_s_bill_lines_and_counted_once(demo: Path) -> None:
    scan = json.loads((demo / "scan.json").read_text())
    resources = {r["name"]: r for r in scan["resources"]}
    pool = resources["trn1-batch-warm-pool"]
    # the instance the warm pool launched (its ECS cluster's container instance) is billed on the environment
    (instance,) = [r for r in scan["resources"] if r.get("billed_on") == pool["id"]]
    assert instance["kind"] == "ec2_instance" and instance["instance_type"] == "trn1.32xlarge"
    assert instance["cost_usd"] is None
    # and judged on it: the same tie as the rules read (in a bill-priced scan billed_on and judged_on agree)
    assert instance["judged_on"] == pool["id"] and pool["judged_on"] is None
    assert [r["name"] for r in scan["resources"] if r.get("judged_on")] == [instance["name"]]
    # and it is judged there: no finding of its own, its verdict names the environment
    assert not [f for f in scan["findings"] if f["resource_id"] == instance["id"]]
    (verdict,) = [v for v in scan["verdicts"] if v["resource_id"] == instance["id"]]
    assert verdict["verdict"] == "out_of_scope"
    assert verdict["reason"].startswith("part of AWS Batch compute environment trn1-batch-warm-pool, which launched it")
    # the environment carries its instance's BoxUsage lines: 14 days x 24 h at trn1.32xlarge's $21.50 on demand
    assert Decimal(pool["cost_usd"]) == Decimal("7224.00") and Decimal(pool["usage_hours"]) == 336
    assert Decimal(pool["effective_hourly_rate_usd"]) == Decimal("21.5") and pool["pricing"] == ["on_demand"]
    # each line once: the resources' costs never add up to more than what the bill attributes over the window (the
    # rest: lines of resources the scan no longer lists, such as the retired endpoint); counted twice, the
    # instance's $7,224.00 would take them past it
    priced = sum((Decimal(r["cost_usd"]) for r in scan["resources"] if r["cost_usd"] is not None), Decimal(0))
    apart = sum((Decimal(n["usd"]) for n in scan["costs"]["not_attributed"]), Decimal(0))
    attributed = Decimal(scan["costs"]["total_usd"]) - apart
    assert priced <= attributed < priced + Decimal("7224.00")
    # and its finding is priced from the bill and counted in "% of spend"
    (finding,) = [f for f in scan["findings"] if f["resource_id"] == pool["id"]]
    assert finding["evidence"]["rate_source"] == "bill"
    assert Decimal(finding["estimated_monthly_savings_usd"]) == Decimal("15695.00")  # $21.50 x 730 h
    summary = (demo / "summary.md").read_text()
    assert "Addressable: $78,099.59 a month, 30.8 % of spend (quick wins + projects) ·" in summary
    assert "of it on resources the bill lacks" not in summary


def test_every_surface_words_its_counts_the_same(demo: Path, figures: Ledger) -> None:
    words = figures.headline.count_words()  # "18 counted findings (29 open, 11 not counted)"
    assert "counted findings (" in words and " open, " in words
    surfaces = ["summary.md", "digest.txt", "digest.html", "drafts/credits-application.md"]
    surfaces += ["drafts/partner-referral-email.txt", next(p.name for p in demo.glob("chipwise-report-*.html"))]
    surfaces += [str(p.relative_to(demo)) for p in (demo / "slack").glob("*digest*.json")]
    for name in surfaces:
        assert words in html_unescape((demo / name).read_text()), name
