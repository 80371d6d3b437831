"""The demo's notify stage: digest files, Slack payloads and drafts written, mail read back from the emulator."""

from __future__ import annotations

import importlib
import json
from pathlib import Path
from typing import Any

from notify_factories import add_costs, estate
from rich.console import Console
from sqlalchemy.orm import Session, sessionmaker

from chipwise.clock import utcnow
from chipwise_devkit.demo.runner import DemoContext, Stage


def test_the_notify_stage_writes_its_artifacts(
    aws: Any, use_db: str, session_factory: sessionmaker[Session], tmp_path: Path
) -> None:
    # Given the demo store after the rules stage (findings, costs)
    now = utcnow()
    with session_factory.begin() as session:
        estate(session, now=now)
        add_costs(session, "ml.g5.2xlarge", "300.00", days=14, last_day=now.date())
    ctx = DemoContext(out_dir=tmp_path, database_url=use_db, emulator=aws, console=Console(quiet=True))
    stage: Stage = importlib.import_module("chipwise_devkit.demo.stages.50_notify").STAGE
    # When the stage runs
    stage.run(ctx)
    # Then the digest, Slack payloads and drafts are in the output folder
    names = {str(p.relative_to(tmp_path)) for p in ctx.artifacts}
    # (the account's first notify run: a baseline digest per channel, no alert)
    assert {"digest.html", "digest.txt", "slack/01-digest.json"} <= names
    assert not any("alert" in name for name in names)
    assert {f"drafts/{n}" for n in ("credits-application.md", "ace-create-opportunity.json")} <= names
    assert 'data-chart="waste-by-rule"' in (tmp_path / "digest.html").read_text()
    assert "Could be saved: $3,265.30 a month" in (tmp_path / "digest.txt").read_text()
    slack = json.loads((tmp_path / "slack" / "01-digest.json").read_text())
    assert slack["text"].startswith("Chipwise digest for Acme AI") and len(slack["blocks"]) <= 50
    assert "$9,125 a month" in (tmp_path / "drafts" / "credits-application.md").read_text()
    # ...the emails really went through SES (the baseline digests: recipient and two opted-in owners; the drafts)
    subjects = [m["subject"] for m in aws.sent_emails()]
    assert len(subjects) == ctx.results["notify"]["emails"] == 4  # 3 digests, 1 drafts review
    labels = dict(ctx.summary)
    assert "4 emails read back from the emulator's SES" in labels["Notifications"]
    assert "nothing submitted" in labels["Drafts"]
