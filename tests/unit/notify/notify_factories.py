"""Rows for the notification tests: an account, resources with owner tags, findings, benchmark results, costs.

Imported by the unit tests beside it and (through their conftest) by tests/integration/notify.
"""

from __future__ import annotations

import uuid
from datetime import UTC, date, datetime, timedelta
from decimal import Decimal
from typing import Any

from sqlalchemy.orm import Session

from chipwise.links import console_url
from chipwise.notify.digest import FindingLine
from chipwise.presentation import rule_label
from chipwise.store.tables import Account, CostRecord, Finding, OutboxMessage, Recommendation, Resource

NOW = datetime(2026, 11, 22, 7, 0, tzinfo=UTC)
ACCOUNT = "123456789012"
HOSTILE = "<script>alert(1)</script> <!channel> *bold*"


def line(
    name: str, savings: str, *, rule: str = "gpu_inference_portable", hours_ago: int = 3, **kw: Any
) -> FindingLine:
    """A digest line without the store (for template and Slack tests); ``kw`` overrides any field."""
    values: dict[str, Any] = {
        "finding_id": f"f-{name}",
        "rule_id": rule,
        "rule_label": rule_label(rule),
        "account_id": "123456789012",
        "region": "us-east-1",
        "resource_id": f"arn:aws:sagemaker:us-east-1:123456789012:endpoint/{name}",
        "resource_name": name,
        "resource_kind": "sagemaker_endpoint",
        "instance_type": "ml.g5.2xlarge",
        "instance_count": 4,
        "monthly_cost_usd": Decimal("4406.28"),
        "monthly_savings_usd": Decimal(savings),
        "measured": False,
        "action": "migrate",
        "target": "inf2.xlarge ×2",
        "confidence": "high",
        "effort": "days",
        "summary": "Steady serving on 4 A10G GPUs.",
        "status": "open",
        "first_seen": NOW - timedelta(hours=hours_ago),
        "owners": ("support-ai@example.com",),
        "console_url": console_url(
            f"arn:aws:sagemaker:us-east-1:123456789012:endpoint/{name}", "us-east-1", "sagemaker_endpoint", name
        ),
    }
    values.update(kw)
    return FindingLine(**values)


def add_account(session: Session, account_id: str = ACCOUNT, name: str | None = "Acme AI") -> Account:
    account = Account(account_id=account_id, name=name)
    session.add(account)
    session.flush()
    return account


def arn_for(name: str, account_id: str = ACCOUNT) -> str:
    return f"arn:aws:sagemaker:us-east-1:{account_id}:endpoint/{name}"


def add_resource(
    session: Session,
    name: str,
    *,
    account_id: str = ACCOUNT,
    tags: dict[str, str] | None = None,
    hints: dict[str, Any] | None = None,
    platform: str = "nvidia",
    instance_type: str = "ml.g5.2xlarge",
    count: int = 1,
    kind: str = "sagemaker_endpoint",
    state: str | None = "InService",
) -> Resource:
    resource = Resource(
        account_id=account_id,
        region="us-east-1",
        arn=arn_for(name, account_id),
        kind=kind,
        name=name,
        instance_type=instance_type,
        instance_count=count,
        platform=platform,
        state=state,
        tags=tags or {},
        hints=hints or {},
        details={},
    )
    session.add(resource)
    session.flush()
    return resource


def add_finding(
    session: Session,
    resource_name: str,
    *,
    account_id: str = ACCOUNT,
    rule_id: str = "gpu_inference_portable",
    savings: str = "1200",
    cost: str = "3000",
    measured: str | None = None,
    first_seen: datetime | None = None,
    status: str = "open",
    resolved_at: datetime | None = None,
    action: str = "migrate",
    target_platform: str | None = "inferentia",
    target: str | None = "inf2.xlarge",
    target_count: int | None = 2,
    instance_type: str = "ml.g5.2xlarge",
    count: int = 4,
    summary: str = "Steady Mistral-7B serving on 4 A10G GPUs; inf2 serves it for less.",
) -> Finding:
    seen = first_seen or NOW - timedelta(days=3)
    finding = Finding(
        id=str(uuid.uuid4()),
        account_id=account_id,
        region="us-east-1",
        rule_id=rule_id,
        resource_arn=arn_for(resource_name, account_id),
        resource_kind="sagemaker_endpoint",
        resource_name=resource_name,
        instance_type=instance_type,
        instance_count=count,
        monthly_cost_usd=Decimal(cost),
        estimated_monthly_savings_usd=Decimal(savings),
        measured_monthly_savings_usd=Decimal(measured) if measured is not None else None,
        recommendation={
            "action": action,
            "target_platform": target_platform,
            "target_instance_type": target,
            "target_count": target_count,
        },
        confidence="high",
        signals_used=["invocations"],
        signals_missing=[],
        effort="days",
        break_even_months=0.5,
        summary=summary,
        evidence={},
        status=status,
        first_seen=seen,
        last_seen=NOW - timedelta(hours=2),
        resolved_at=resolved_at,
    )
    session.add(finding)
    session.flush()
    return finding


def add_benchmark(
    session: Session,
    finding: Finding,
    *,
    savings: str | None,
    created_at: datetime,
    withdrawn: bool = False,
    reason: str | None = None,
    target: str = "inf2.xlarge",
) -> Recommendation:
    rec = Recommendation(
        finding_id=finding.id,
        source="benchmark",
        action="migrate",
        target_platform="inferentia",
        target_instance_type=target,
        target_count=2,
        monthly_cost_usd=Decimal("1100"),
        monthly_savings_usd=Decimal(savings) if savings is not None else None,
        confidence="high",
        withdrawn=withdrawn,
        reason=reason,
        created_at=created_at,
    )
    session.add(rec)
    session.flush()
    return rec


def add_costs(
    session: Session, instance_type: str, daily: str, *, days: int, last_day: date, account_id: str = ACCOUNT
) -> Decimal:
    """``days`` days of one instance type's usage ending on ``last_day``; returns the total."""
    service = "Amazon SageMaker" if instance_type.startswith("ml.") else "Amazon Elastic Compute Cloud - Compute"
    for offset in range(days):
        day = last_day - timedelta(days=offset)
        session.add(
            CostRecord(
                account_id=account_id,
                day=day,
                service=service,
                usage_type=f"USE1-Host:{instance_type}",
                usage_kind="Host",
                instance_type=instance_type,
                region="us-east-1",
                unblended_cost=Decimal(daily),
                amortized_cost=Decimal(daily),
                usage_quantity=Decimal(24),
            )
        )
    session.flush()
    return Decimal(daily) * days


def estate(session: Session, now: datetime = NOW) -> dict[str, Finding]:
    """A small account: two owned GPU endpoints with new findings, an older unowned one, one resolved.

    ``now`` is the time of the notify run the test makes (the findings are dated relative to it).
    """
    add_account(session)
    opted_in = {"chipwise:notify": "yes"}  # their owners asked for Chipwise email
    add_resource(session, "chat-mistral-g5", tags={"chipwise:owner": "support-ai@example.com", **opted_in}, count=4)
    add_resource(session, "bert-ner-g6", tags={"owner": "ML Team <nlp@example.com>, not-an-email", **opted_in})
    add_resource(session, "search-idle-inf2", platform="inferentia", instance_type="ml.inf2.xlarge")
    add_resource(session, "old-endpoint", tags={"chipwise:owner": "support-ai@example.com", **opted_in})
    return {
        "big_new": add_finding(
            session, "chat-mistral-g5", savings="2400.50", cost="4406.28", first_seen=now - timedelta(hours=3)
        ),
        "small_new": add_finding(
            session,
            "bert-ner-g6",
            savings="310",
            cost="1300",
            first_seen=now - timedelta(hours=2),
            rule_id="gpu_small_model",
            # a smaller GPU of the same family: no porting, so its $310 counts (a $4,000 port would not pay back
            # within 12 months and be set apart)
            action="rightsize",
            target_platform=None,
            target="ml.g5.xlarge",
            target_count=4,
        ),
        "old": add_finding(
            session,
            "search-idle-inf2",
            rule_id="inferentia_idle",
            savings="554.80",
            cost="554.80",
            action="delete",
            target=None,
            target_platform=None,
            target_count=None,
            instance_type="ml.inf2.xlarge",
            count=1,
            first_seen=now - timedelta(days=3),
        ),
        "resolved": add_finding(
            session,
            "old-endpoint",
            rule_id="inferentia_idle",
            savings="700",
            status="resolved",
            first_seen=now - timedelta(days=3),
            resolved_at=now - timedelta(hours=5),
        ),
    }


def baseline_sent(session: Session, at: datetime, account_id: str = ACCOUNT) -> OutboxMessage:
    """An earlier digest of the account (its baseline) in the outbox: later runs alert new findings."""
    row = OutboxMessage(
        channel="email",
        kind="digest",
        recipient="earlier@example.com",
        dedupe_key=f"digest:{account_id}:{at:%Y-%m-%d}:email:earlier@example.com",
        subject="Chipwise baseline",
        payload={"html": "<p>baseline</p>", "text": "baseline", "to": ["earlier@example.com"]},
        account_id=account_id,
        status="sent",
        created_at=at,
        next_attempt_at=at,
        sent_at=at,
    )
    session.add(row)
    session.flush()
    return row


class RecordingSender:
    """A channel sender for the outbox tests: records what it sends, or fails as scripted."""

    def __init__(self, *failures: Exception) -> None:
        self.sent: list[tuple[int, str, dict[str, Any]]] = []
        self.failures = list(failures)

    def send(self, message: Any) -> str | None:
        if self.failures:
            raise self.failures.pop(0)
        self.sent.append((message.id, message.recipient, dict(message.payload)))
        return f"id-{message.id}"
