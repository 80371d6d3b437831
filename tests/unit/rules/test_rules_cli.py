"""`chipwise findings` (list, --json, --min-savings, --status, show, suppress, evaluate) and `chipwise rules`."""

from __future__ import annotations

import json
from datetime import timedelta
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import select
from sqlalchemy.orm import Session, sessionmaker

from chipwise.cli import main
from chipwise.cli.findings import parse_until
from chipwise.clock import utcnow
from chipwise.errors import InvalidInput
from chipwise.models.findings import RecommendationDoc
from chipwise.rules.base import FindingDraft
from chipwise.store.repositories.findings import FindingRepository
from chipwise.store.tables import Account, Finding

ACCOUNT = "123456789012"


def _draft(name: str, rule_id: str, saving: str, target: str | None = None) -> FindingDraft:
    return FindingDraft(
        rule_id=rule_id,
        account_id=ACCOUNT,
        region="us-east-1",
        resource_arn=f"arn:aws:ec2:us-east-1:{ACCOUNT}:instance/{name}",
        resource_kind="ec2_instance",
        resource_name=name,
        instance_type="p4d.24xlarge",
        instance_count=1,
        monthly_cost_usd=Decimal("16029.08"),
        estimated_monthly_savings_usd=Decimal(saving),
        recommendation=RecommendationDoc(
            action="migrate" if target else "stop",
            target_platform="trainium" if target else None,
            target_instance_type=target,
            target_count=1 if target else None,
        ),
        confidence="high",
        effort="days" if target else "none",
        break_even_months=0.3 if target else None,
        summary=f"{name}: do something",
        evidence={"gpu_max_pct": 0.5},
    )


@pytest.fixture
def findings(use_db: str, session_factory: sessionmaker[Session]) -> dict[str, str]:
    """Three open findings (savings 16,029.08 / 6,000 / 40); returns name -> finding id."""
    with session_factory.begin() as session:
        session.add(Account(account_id=ACCOUNT))
        session.flush()
        FindingRepository(session).apply(
            account_id=ACCOUNT,
            region="us-east-1",
            rule_ids=["gpu_idle", "gpu_training_portable"],
            now=utcnow(),
            drafts=[
                _draft("idle", "gpu_idle", "16029.08"),
                _draft("train", "gpu_training_portable", "6000", "trn1.32xlarge"),
                _draft("small", "gpu_idle", "40"),
            ],
        )
    with session_factory() as session:
        return {f.resource_name: f.id for f in session.scalars(select(Finding))}


def _json(capsys: pytest.CaptureFixture[str]) -> Any:
    return json.loads(capsys.readouterr().out)


def _lines(capsys: pytest.CaptureFixture[str]) -> list[Any]:
    """JSON lines (``findings --json``): one document per line."""
    return [json.loads(line) for line in capsys.readouterr().out.splitlines() if line.strip()]


def test_findings_json_lists_open_findings_top_savings_first(
    findings: dict[str, str], capsys: pytest.CaptureFixture[str]
) -> None:
    # When `chipwise findings --json` and `--min-savings 1000` run
    assert main(["findings", "--json"]) == 0
    listed = _lines(capsys)
    assert main(["findings", "--json", "--min-savings", "1000"]) == 0
    big = _lines(capsys)
    # Then the documents follow the contract, largest saving first, and the filter drops the small one
    assert [d["resource_name"] for d in listed] == ["idle", "train", "small"]
    assert listed[0]["estimated_monthly_savings_usd"] == "16029.08"
    assert listed[1]["recommendation"] == {
        "action": "migrate",
        "target_platform": "trainium",
        "target_instance_type": "trn1.32xlarge",
        "target_count": 1,
        "excluded_from_totals": None,
        "software_path": None,
    }
    assert [d["resource_name"] for d in big] == ["idle", "train"]


def test_findings_table_shows_the_savings(findings: dict[str, str], capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["findings"]) == 0
    out = capsys.readouterr().out
    assert (
        "16,029.08" in out
        and "3 open findings" in out
        and "savings: $22,069.08 a month: $0.00 measured, $22,069.08 estimated" in out
    )


def test_suppress_hides_a_finding_until_a_date(findings: dict[str, str], capsys: pytest.CaptureFixture[str]) -> None:
    # When the idle finding is suppressed by an id prefix
    until = (utcnow() + timedelta(days=30)).date().isoformat()
    assert main(["findings", "suppress", findings["idle"][:8], "--until", until, "--reason", "kept for a demo"]) == 0
    assert "suppressed Idle GPU instance or endpoint on idle through " in capsys.readouterr().out
    # Then the open list no longer has it and --status suppressed does
    assert main(["findings", "--json"]) == 0
    assert [d["resource_name"] for d in _lines(capsys)] == ["train", "small"]
    assert main(["findings", "--json", "--status", "suppressed"]) == 0
    assert [d["status"] for d in _lines(capsys)] == ["suppressed"]


def test_suppress_rejects_a_past_date_or_an_unknown_id(
    findings: dict[str, str], capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["findings", "suppress", findings["idle"], "--until", "2020-01-01", "--reason", "x"]) == 1
    assert "not in the future" in capsys.readouterr().err
    assert main(["findings", "suppress", "ffffffffffff", "--until", "2999-01-01", "--reason", "x"]) == 1
    assert "no finding" in capsys.readouterr().err


def test_show_prints_the_evidence_and_the_history(findings: dict[str, str], capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["findings", "show", findings["train"], "--json"]) == 0
    shown = _json(capsys)
    assert shown["evidence"] == {"gpu_max_pct": 0.5}
    assert [h["source"] for h in shown["history"]] == ["estimate"]
    assert shown["history"][0]["monthly_savings_usd"] == "6000.00"


def test_an_unknown_status_is_one_line(findings: dict[str, str], capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["findings", "--status", "closed"]) == 1
    assert "--status must be one of" in capsys.readouterr().err


def test_until_is_a_whole_day_or_a_zoned_time() -> None:
    assert parse_until("2026-12-31").isoformat() == "2027-01-01T00:00:00+00:00"
    assert parse_until("2026-12-31T10:00:00+02:00").isoformat() == "2026-12-31T08:00:00+00:00"
    with pytest.raises(InvalidInput, match="time zone"):
        parse_until("2026-12-31T10:00:00")
    with pytest.raises(InvalidInput):
        parse_until("next week")


def test_rules_lists_the_registry_with_thresholds_and_policy_overrides(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Given a policy file lowering the GPU idle threshold
    policy = tmp_path / "policy.toml"
    policy.write_text("[rules.gpu_idle]\nmax_gpu_utilization_pct = 2.5\n")
    # When `chipwise rules --json --config` runs
    assert main(["rules", "--json", "--config", str(policy)]) == 0
    described = {r["id"]: r for r in _json(capsys)}
    # Then every rule is there with its thresholds, and the override is marked
    assert len(described) == 11
    gpu_idle = described["gpu_idle"]
    assert gpu_idle["params"]["max_gpu_utilization_pct"] == 2.5 and gpu_idle["defaults"]["max_gpu_utilization_pct"] == 5
    assert gpu_idle["overridden"] == ["max_gpu_utilization_pct"]
    assert gpu_idle["descriptions"]["min_idle_days"]
    # ...and the table form names them
    assert main(["rules"]) == 0
    assert "inferentia_underutilized" in capsys.readouterr().out


def test_a_bad_policy_file_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    policy = tmp_path / "policy.toml"
    policy.write_text("[rules.gpu_idle]\nmax_gpu_util = 2.5\n")
    assert main(["rules", "--config", str(policy)]) == 1
    err = capsys.readouterr().err
    assert "rules.gpu_idle.max_gpu_util: unknown threshold" in err and "Traceback" not in err


def test_evaluate_reruns_the_rules_on_the_store(findings: dict[str, str], capsys: pytest.CaptureFixture[str]) -> None:
    # Given findings whose resources are no longer in the store's inventory
    # When the rules are evaluated again from the store
    assert main(["findings", "evaluate", "--account", ACCOUNT, "--json"]) == 0
    # Then nothing holds any more: the findings are resolved
    assert _json(capsys) == []
    assert main(["findings", "--json", "--status", "resolved"]) == 0
    assert len(_lines(capsys)) == 3
