"""The rules on the demo account, end to end: seeded in the AWS emulator, scanned (inventory, Cost Explorer,
CloudWatch, neuron-monitor reports), judged. Every rule fires on the resources the ground truth names and on no
others; the custom-CUDA work is never recommended for porting; the agent-less Inferentia endpoint is asked for
telemetry, not called idle; the demo stage shows and writes the findings."""

from __future__ import annotations

import importlib
import json
import os
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from rich.console import Console
from sqlalchemy import text

from chipwise.aws import aws_context, base_session
from chipwise.models.findings import FindingDocument
from chipwise.models.scan import ScanDocument
from chipwise.pipeline.neuron_ingest import ingest_prefix
from chipwise.pipeline.scan import run_scan
from chipwise.presentation import exclusion, headline, rank, saving_facts
from chipwise.rules import registry
from chipwise.settings import get_settings
from chipwise.store import get_session_factory
from chipwise.store.session import get_engine, upgrade
from chipwise.store.tables import all_tables
from chipwise_devkit.demo.account import demo_resources, ground_truth
from chipwise_devkit.demo.runner import DemoContext
from chipwise_devkit.demo.seed import seed_demo_account

NOW = datetime(2026, 11, 20, 12, tzinfo=UTC)
REGION = "us-east-1"
PG_ENV = "CHIPWISE_TEST_DATABASE_URL"
BACKENDS = ["sqlite", "postgresql"] if os.environ.get(PG_ENV) else ["sqlite"]
PORTING_RULES = {"gpu_training_portable", "gpu_inference_portable"}


@dataclass(frozen=True)
class Demo:
    document: ScanDocument
    database_url: str

    @property
    def found(self) -> dict[str, list[str]]:
        fired: dict[str, list[str]] = {}
        for finding in self.document.findings:
            fired.setdefault(finding.resource_name, []).append(finding.rule_id)
        return {name: sorted(rules) for name, rules in fired.items()}

    def findings_of(self, name: str) -> list[FindingDocument]:
        return [f for f in self.document.findings if f.resource_name == name]


def _database(request: pytest.FixtureRequest, tmp: Path) -> str:
    if request.param == "sqlite":
        url = f"sqlite:///{tmp / 'demo.db'}"
        upgrade(url)
        return url
    url = str(request.getfixturevalue("_postgres_url"))
    tables = ", ".join(f'"{t.name}"' for t in all_tables().sorted_tables)
    with get_engine(url).begin() as conn:
        conn.execute(text(f"TRUNCATE {tables} RESTART IDENTITY CASCADE"))
    return url


@pytest.fixture(scope="module", params=BACKENDS)
def demo(request: pytest.FixtureRequest, emulator: Any, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Demo]:
    """The demo account seeded, its neuron-monitor reports ingested and the account scanned (once per module)."""
    url = _database(request, tmp_path_factory.mktemp("rules-demo"))
    with pytest.MonkeyPatch.context() as env:
        for key in [k for k in os.environ if k.startswith("CHIPWISE_") and k != PG_ENV]:
            env.delenv(key)
        env.setenv("CHIPWISE_DATABASE_URL", url)
        for key, value in emulator.env().items():
            env.setenv(key, value)
        emulator.reset()
        base_session.cache_clear()
        get_settings.cache_clear()
        seeded = seed_demo_account(emulator, NOW, region=REGION)
        aws = aws_context(REGION)
        factory = get_session_factory(url)
        ingest_prefix(aws, factory, get_settings().artifacts_bucket)
        document = run_scan(aws, factory, account_id=seeded.account_id, region=REGION, now=seeded.now)
        yield Demo(document, url)
        base_session.cache_clear()
        get_settings.cache_clear()


def test_the_scan_ran_the_rules_without_errors(demo: Demo) -> None:
    assert demo.document.status == "succeeded", demo.document.errors
    assert demo.document.findings


@pytest.mark.parametrize("rule_id", registry().ids())
def test_each_rule_has_precision_and_recall_one_on_the_ground_truth(demo: Demo, rule_id: str) -> None:
    # Given the resources the ground truth says this rule must fire on
    expected = {name for name, rules in ground_truth().items() if rule_id in rules}
    # When the scan's findings of the rule are collected
    fired = {name for name, rules in demo.found.items() if rule_id in rules}
    # Then they are exactly those (precision 1.0: nothing else; recall 1.0: nothing missed)
    assert fired == expected, f"{rule_id}: unexpected {sorted(fired - expected)}, missed {sorted(expected - fired)}"


def test_no_resource_gets_a_finding_the_ground_truth_does_not_name(demo: Demo) -> None:
    truth = {name: sorted(rules) for name, rules in ground_truth().items() if rules}
    assert demo.found == truth


def test_custom_cuda_work_is_never_recommended_for_porting(demo: Demo) -> None:
    custom = [r.name for r in demo_resources() if r.tags.get("chipwise:custom-cuda") == "true"]
    assert custom
    for name in custom:
        assert not {f.rule_id for f in demo.findings_of(name)} & PORTING_RULES


def test_an_inferentia_endpoint_without_neuron_telemetry_is_asked_for_it_not_called_idle(demo: Demo) -> None:
    [finding] = demo.findings_of("classifier-inf2-no-telemetry")
    assert finding.rule_id == "neuron_telemetry_missing"
    assert finding.recommendation.action == "enable_telemetry"
    assert "neuroncore_utilization" in finding.signals_missing
    assert [f.rule_id for f in demo.findings_of("inf1-legacy-no-agent")] == ["neuron_telemetry_missing"]


def test_every_finding_has_dollars_evidence_and_a_next_step(demo: Demo) -> None:
    for finding in demo.document.findings:
        assert finding.summary and finding.evidence and finding.recommendation.action
        # a cost no verified price gives (Bedrock model units) is asked for as a quote, never guessed
        assert finding.monthly_cost_usd > 0 or finding.recommendation.excluded_from_totals == "quote_needed"
        assert 0 <= finding.estimated_monthly_savings_usd <= finding.monthly_cost_usd
        if finding.recommendation.action == "migrate":
            assert finding.break_even_months is not None and finding.effort != "none"
            assert finding.recommendation.target_platform in ("inferentia", "trainium", "bedrock")


def test_trainium_under_a_savings_plan_is_lower_confidence(demo: Demo) -> None:
    [covered] = demo.findings_of("trn1-inference-sp")
    [on_demand] = demo.findings_of("trn1-inference-fleet-a")
    assert covered.evidence["commitment_covered"] is True and covered.confidence != "high"
    assert on_demand.evidence["commitment_covered"] is False and on_demand.confidence == "high"


def test_the_demo_stage_shows_and_writes_the_findings_top_savings_first(demo: Demo, tmp_path: Path) -> None:
    # Given the stage's context on the scanned store
    stage = importlib.import_module("chipwise_devkit.demo.stages.30_rules").STAGE
    console = Console(record=True, width=200)
    ctx = DemoContext(out_dir=tmp_path, database_url=demo.database_url, emulator=None, console=console)
    # When the stage runs
    stage.run(ctx)
    # Then the findings are shown and shared top savings first
    shared: list[FindingDocument] = ctx.results["findings"]
    savings = [f.estimated_monthly_savings_usd for f in shared]
    assert savings == sorted(savings, reverse=True) and len(shared) == len(demo.document.findings)
    assert "p5-llama-pretrain-node" not in console.export_text()  # no table before the headline's
    assert "precision and recall 1.0 for every rule" in dict(ctx.summary)["Findings"]
    # and the last stage writes them as JSON and a report with one headline; the ground-truth check is the demo's
    # own (its summary), never the report's
    report_stage = importlib.import_module("chipwise_devkit.demo.stages.70_report").STAGE
    report_stage.run(ctx)
    written = json.loads((tmp_path / "findings.json").read_text())
    # the first table printed is the headline's: its caption is the headline, its title says what it counts
    printed = console.export_text()
    assert "p5-llama-pretrain-node" in printed and headline(shared).sentence()[:20] in printed
    assert "counted findings (" in printed
    ranked = sorted(shared, key=lambda d: rank(saving_facts(d)))  # set-apart savings (a quote, committed) last
    assert [f["finding_id"] for f in written] == [f.finding_id for f in ranked]
    # two committed (a Savings Plan, a Capacity Block), two quotes (trn2, Bedrock PT), five that cannot be judged
    # (the notebook without activity among them: never a quick win)
    apart = {f.finding_id for f in shared if exclusion(f) is not None}
    assert len(apart) == 9 and {f.finding_id for f in ranked[-len(apart) :]} == apart
    report = (tmp_path / "report.md").read_text()
    assert "by 12-month net value (saving × 12 − porting)" in report
    assert "ground truth" not in report.lower() and "precision" not in report and "| 1.00 | 1.00 |" not in report
    assert "| Idle GPU instance or endpoint |" in report and "| gpu_idle |" not in report  # titles, not ids
    assert "| gpu_idle | 1.00 | 1.00 |" in ctx.results["summary_sections"]
    assert dict(ctx.summary)["Headline"].startswith("$")
