"""Realised savings in the store: a resolved finding measured from the stored Cost Explorer days, refined scan by
scan, and summarised per rule (realised against estimated)."""

from __future__ import annotations

import uuid
from datetime import UTC, date, datetime, timedelta
from decimal import Decimal

from sqlalchemy.orm import Session, sessionmaker

from chipwise.pipeline.realised import measure_realised
from chipwise.store.repositories.realised import RealisedSavingRepository
from chipwise.store.tables import Account, CostRecord, Finding, RealisedSaving, Resource

ACCOUNT = "123456789012"
ARN = f"arn:aws:sagemaker:us-east-1:{ACCOUNT}:endpoint/idle-bot"


def _seed(session: Session, *, resolved: datetime, last_seen: datetime) -> str:
    session.add(Account(account_id=ACCOUNT))
    session.flush()
    session.add(
        Resource(
            account_id=ACCOUNT,
            region="us-east-1",
            arn=ARN,
            kind="sagemaker_endpoint",
            name="idle-bot",
            instance_type="ml.inf2.xlarge",
            instance_count=1,
            platform="inferentia",
            state="gone",
        )
    )
    session.flush()
    finding_id = str(uuid.uuid4())
    session.add(
        Finding(
            id=finding_id,
            account_id=ACCOUNT,
            region="us-east-1",
            rule_id="inferentia_idle",
            resource_arn=ARN,
            resource_kind="sagemaker_endpoint",
            resource_name="idle-bot",
            instance_type="ml.inf2.xlarge",
            instance_count=1,
            monthly_cost_usd=Decimal("553.59"),
            estimated_monthly_savings_usd=Decimal("553.59"),
            confidence="high",
            summary="idle",
            status="resolved",
            first_seen=last_seen - timedelta(days=7),
            last_seen=last_seen,
            resolved_at=resolved,
        )
    )
    # Two endpoints of the type 1-9 November ($36.40 a day), one from the 10th on ($18.20), stored to the 20th
    for n in range(20):
        day = date(2026, 11, 1) + timedelta(days=n)
        amount = Decimal("36.40") if day < date(2026, 11, 10) else Decimal("18.20")
        session.add(
            CostRecord(
                account_id=ACCOUNT,
                day=day,
                service="Amazon SageMaker",
                usage_type="Host:ml.inf2.xlarge",
                usage_kind="Host",
                instance_type="ml.inf2.xlarge",
                region="us-east-1",
                unblended_cost=amount,
                amortized_cost=amount,
                usage_quantity=Decimal(48 if day < date(2026, 11, 10) else 24),
            )
        )
    return finding_id


def test_a_deleted_endpoint_realises_its_saving(session_factory: sessionmaker[Session]) -> None:
    # Given an idle endpoint deleted on 10 November: last seen by the scan of the 9th, resolved by the scan of the 11th
    with session_factory.begin() as session:
        finding_id = _seed(
            session, last_seen=datetime(2026, 11, 9, 6, tzinfo=UTC), resolved=datetime(2026, 11, 11, 6, tzinfo=UTC)
        )
    # When the scan of the 12th measures (only the 12th is stored after the change: pending)
    with session_factory.begin() as session:
        assert measure_realised(session, account_id=ACCOUNT, region="us-east-1", now=datetime(2026, 11, 13, tzinfo=UTC))
    with session_factory() as session:
        row = session.get(RealisedSaving, finding_id)
        assert row is not None
        assert (row.status, row.after_days, row.realised_monthly_savings_usd) == ("pending", 1, None)
    # When the scan of the 21st measures again
    with session_factory.begin() as session:
        measure_realised(session, account_id=ACCOUNT, region="us-east-1", now=datetime(2026, 11, 21, 6, tzinfo=UTC))
    # Then before = 1-8 Nov at $36.40, after = 12-20 Nov at $18.20: (36.40 - 18.20) x 730 / 24 = $553.58 a month
    with session_factory() as session:
        row = session.get(RealisedSaving, finding_id)
        assert row is not None
        assert row.status == "measured"
        assert row.cause == "gone"
        assert (row.before_days, row.after_days) == (8, 9)
        assert row.realised_monthly_savings_usd == Decimal("553.58")
        assert row.accuracy == Decimal("1.000")
        (rule,) = RealisedSavingRepository(session).by_rule(ACCOUNT)
        assert (rule.rule_id, rule.measured, rule.pending) == ("inferentia_idle", 1, 0)
        assert rule.realised_monthly_usd == Decimal("553.58")
        assert rule.accuracy == Decimal("1.000")
