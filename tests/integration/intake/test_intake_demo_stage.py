"""``chipwise demo``'s plan stage: the shipped sample intake becomes plan.json, plan.md and plan.html."""

from __future__ import annotations

import importlib
import io
import json
from pathlib import Path
from typing import Any

from rich.console import Console

from chipwise_devkit.demo.runner import DemoContext, Stage


def test_the_plan_stage_writes_the_sample_plan_and_emails_it(aws: Any, use_db: str, tmp_path: Path) -> None:
    # Given the demo's plan stage, an emulator and a store
    stage: Stage = importlib.import_module("chipwise_devkit.demo.stages.60_plan").STAGE
    ctx = DemoContext(out_dir=tmp_path, database_url=use_db, emulator=aws, console=Console(file=io.StringIO()))
    # When it runs
    stage.run(ctx)
    # Then the plan is written in three forms and summarised, and both emails went out
    document = json.loads((tmp_path / "plan" / "plan.json").read_text())
    assert document["company"] == "Lumen Labs"
    assert {w["recommended_platform"] for w in document["workloads"]} == {"inferentia", "trainium", "bedrock", "gpu"}
    assert "# Credits-and-migration plan: Lumen Labs" in (tmp_path / "plan" / "plan.md").read_text()
    assert "<!doctype html>" in (tmp_path / "plan" / "plan.html").read_text()
    label, text = ctx.summary[-1]
    assert label == "Plan" and "2 emails sent" in text and "a month to save" in text
    assert len(aws.sent_emails()) == 2
