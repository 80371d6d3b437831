"""Issue 37: retention covers every table that grows with each day's scan; the latest scan of each account and
region, the rules' look-back window, open findings and the audit of applied fixes stay."""

from __future__ import annotations

import sys
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from pathlib import Path

from sqlalchemy import func, select
from sqlalchemy.orm import Session, sessionmaker

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "notify"))
from notify_factories import add_account, add_finding, add_resource

from chipwise.pipeline.retention import prune_store
from chipwise.settings import get_settings
from chipwise.store.tables import CostRecord, Finding, MetricRollup, Recommendation, Scan

NOW = datetime(2026, 11, 20, 6, tzinfo=UTC)
OLD = NOW - timedelta(days=120)
RECENT = NOW - timedelta(days=10)


def _scan(scan_id: str, at: datetime) -> Scan:
    return Scan(
        id=scan_id,
        account_id="123456789012",
        region="us-east-1",
        status="succeeded",
        started_at=at,
        finished_at=at,
        window_start=(at - timedelta(days=14)).date(),
        window_end=at.date(),
    )


def _count(session: Session, model: type) -> int:
    return int(session.scalar(select(func.count()).select_from(model)) or 0)


def test_prune_deletes_what_is_past_its_horizon_and_keeps_the_rest(
    use_db: str, session_factory: sessionmaker[Session]
) -> None:
    with session_factory.begin() as session:
        add_account(session)
        resource = add_resource(session, "busy")
        session.add_all([_scan("old", OLD), _scan("recent", RECENT), _scan("only-old-elsewhere", OLD)])
        session.get(Scan, "only-old-elsewhere").region = "eu-west-1"  # type: ignore[union-attr]
        for at in (OLD, RECENT):
            session.add(MetricRollup(resource_id=resource.id, namespace="AWS/EC2", metric="CPU", hour=at, maximum=1.0))
            session.add(
                CostRecord(
                    account_id="123456789012",
                    day=at.date(),
                    service="ec2",
                    usage_type="BoxUsage:g5.xlarge",
                    unblended_cost=Decimal(1),
                    amortized_cost=Decimal(1),
                    usage_quantity=Decimal(1),
                )
            )
        gone = add_finding(session, "old-fix", status="resolved", resolved_at=OLD, first_seen=OLD)
        kept = add_finding(session, "open-one", first_seen=OLD)
        history = Recommendation(finding_id=gone.id, source="estimate", action="stop", confidence="high")
        history.created_at = OLD
        session.add(history)
        gone_id, kept_id = gone.id, kept.id
    get_settings.cache_clear()
    deleted = prune_store(now=NOW)
    with session_factory() as session:
        # the old scan goes; the recent one and the only scan of another region stay
        assert {s.id for s in session.scalars(select(Scan))} == {"recent", "only-old-elsewhere"}
        assert _count(session, MetricRollup) == 1 and _count(session, CostRecord) == 1
        assert session.get(Finding, gone_id) is None and session.get(Finding, kept_id) is not None
        assert all(r.finding_id != gone_id for r in session.scalars(select(Recommendation)))
    assert deleted["scans"] == 1 and deleted["findings"] == 1 and deleted["metric_rollups"] == 1
    assert prune_store(now=NOW) == {}  # a second run finds nothing more
