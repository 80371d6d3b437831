"""A finding of a rule the policy disables, on a resource that is gone: resolved when the listing of its kind was read
completely and no longer holds it, kept while that listing fails (AccessDenied: unknown is not gone).

The account is the scans' seeded one in the emulator, scanned by :func:`run_scan` (SQLite, and PostgreSQL when
configured). Its look-back is too short for ``gpu_idle`` to fire, so the day-1 findings on the GPU instance and the
GPU endpoint are written by the findings lifecycle itself, as an earlier evaluation would have left them; then the
policy disables ``gpu_idle``, the instance is terminated, the endpoint deleted, and the scans that follow read them.
"""

from __future__ import annotations

from decimal import Decimal

import boto3
import pytest
from scan_account_fixture import ACCOUNT, LOOKBACK_DAYS, NOW, REGION, Seeded, seed_account
from sqlalchemy import select

from chipwise.aws import aws_context
from chipwise.models.findings import RecommendationDoc
from chipwise.models.scan import ScanDocument
from chipwise.pipeline.scan import run_scan
from chipwise.presentation import headline
from chipwise.rules.base import FindingDraft
from chipwise.settings import get_settings
from chipwise.store import get_session_factory
from chipwise.store.repositories.findings import FindingRepository
from chipwise.store.tables import Finding, Resource
from chipwise_devkit.emulator import Emulator

SAVING = Decimal("1000.00")


def _scan(url: str) -> ScanDocument:
    return run_scan(aws_context(REGION), get_session_factory(url), region=REGION, now=NOW, lookback_days=LOOKBACK_DAYS)


def _day_one(url: str, names: tuple[str, ...]) -> None:
    """An open ``gpu_idle`` finding on each stored resource of ``names`` (as an earlier evaluation left it)."""
    with get_session_factory(url).begin() as session:
        rows = session.scalars(select(Resource).where(Resource.name.in_(names), Resource.state != "gone")).all()
        drafts = [
            FindingDraft(
                rule_id="gpu_idle",
                account_id=ACCOUNT,
                region=REGION,
                resource_arn=r.arn,
                resource_variant=r.variant,
                resource_kind=r.kind,
                resource_name=r.name,
                instance_type=r.instance_type,
                instance_count=r.instance_count,
                monthly_cost_usd=SAVING,
                estimated_monthly_savings_usd=SAVING,
                recommendation=RecommendationDoc(action="stop"),
                confidence="medium",
                summary=f"{r.name} idle",
            )
            for r in rows
        ]
        assert sorted(d.resource_name for d in drafts) == sorted(names)
        FindingRepository(session).apply(account_id=ACCOUNT, region=REGION, drafts=drafts, rule_ids=(), now=NOW)


def _statuses(url: str) -> dict[str, str]:
    with get_session_factory(url)() as session:
        return {
            f.resource_name: f.status for f in session.scalars(select(Finding).where(Finding.rule_id == "gpu_idle"))
        }


def _gone(seeded: Seeded) -> None:
    """gpu-box terminated, vision-g5 deleted."""
    boto3.client("ec2", region_name=REGION).terminate_instances(InstanceIds=[seeded.instance_ids["gpu-box"]])
    boto3.client("sagemaker", region_name=REGION).delete_endpoint(EndpointName="vision-g5")


@pytest.fixture
def gpu_idle_disabled(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CHIPWISE_RULES__GPU_IDLE__ENABLED", "false")
    get_settings.cache_clear()


def test_a_disabled_rules_finding_on_a_gone_resource_is_resolved_once_its_listing_is_read(
    aws: Emulator, db_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Given a scanned account with day-1 gpu_idle findings on the GPU instance and the GPU endpoint
    seeded = seed_account(aws)
    _scan(db_url)
    _day_one(db_url, ("gpu-box", "vision-g5"))
    # When the policy disables gpu_idle, both resources are deleted, and the endpoints' listing is refused
    monkeypatch.setenv("CHIPWISE_RULES__GPU_IDLE__ENABLED", "false")
    get_settings.cache_clear()
    _gone(seeded)
    aws.inject_fault("sagemaker", "ListEndpoints", "AccessDeniedException", "not authorized")
    partial = _scan(db_url)
    # Then the instance's finding is resolved (EC2 was listed completely: the instance is gone), the endpoint's stays
    # open (its listing failed: the endpoint is unknown, not gone), and the headline counts the endpoint's alone
    assert {e.source: e.code for e in partial.errors} == {"inventory.sagemaker_endpoints": "AccessDeniedException"}
    assert _statuses(db_url) == {"gpu-box": "resolved", "vision-g5": "open"}
    assert [(f.rule_id, f.resource_name) for f in partial.findings if f.rule_id == "gpu_idle"] == [
        ("gpu_idle", "vision-g5")
    ]
    assert headline(partial.findings).total_usd == SAVING
    # And the instance has no verdict: it is gone, and no open finding names it
    assert "gpu-box" not in {v.name for v in partial.verdicts}
    # When the next scan reads the endpoints' listing completely
    complete = _scan(db_url)
    # Then the endpoint's finding is resolved too, and nothing is counted for either
    assert complete.status == "succeeded" and complete.errors == []
    assert _statuses(db_url) == {"gpu-box": "resolved", "vision-g5": "resolved"}
    assert [f for f in complete.findings if f.rule_id == "gpu_idle"] == []
    assert headline(complete.findings).total_usd == 0


def test_a_disabled_rules_finding_on_a_live_resource_stays_open(
    aws: Emulator, db_url: str, gpu_idle_disabled: None
) -> None:
    # Given a scanned account with a day-1 gpu_idle finding on the GPU instance, and gpu_idle disabled since
    seed_account(aws)
    _scan(db_url)
    _day_one(db_url, ("gpu-box",))
    # When it is scanned again, the instance still running
    document = _scan(db_url)
    # Then the finding is kept as it was (a rule not evaluated keeps its findings on a resource that exists)
    assert _statuses(db_url) == {"gpu-box": "open"}
    assert [f.resource_name for f in document.findings if f.rule_id == "gpu_idle"] == ["gpu-box"]
