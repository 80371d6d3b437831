"""The findings lifecycle in the store: upsert by (rule, resource), first/last seen, auto-resolve, reopen,
suppression until a date, recommendation history, benchmark measurements kept."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from datetime import timedelta
from decimal import Decimal
from typing import Any

import pytest
from rules_factories import NOW
from sqlalchemy import event, func, select
from sqlalchemy.orm import Session, sessionmaker

from chipwise.errors import InvalidInput, NotFound
from chipwise.models.findings import RecommendationDoc
from chipwise.rules.base import FindingDraft
from chipwise.store.repositories.findings import FindingRepository
from chipwise.store.tables import Account, Finding, Recommendation, Resource

ACCOUNT = "123456789012"
RULES = ("gpu_idle", "inferentia_idle")
LATER = NOW + timedelta(days=1)


def draft(
    name: str = "box",
    rule_id: str = "gpu_idle",
    saving: str = "100.00",
    target: str | None = None,
    region: str = "us-east-1",
) -> FindingDraft:
    return FindingDraft(
        rule_id=rule_id,
        account_id=ACCOUNT,
        region=region,
        resource_arn=f"arn:aws:ec2:{region}:{ACCOUNT}:instance/{name}",
        resource_kind="ec2_instance",
        resource_name=name,
        instance_type="g5.xlarge",
        instance_count=1,
        monthly_cost_usd=Decimal("734.38"),
        estimated_monthly_savings_usd=Decimal(saving),
        recommendation=RecommendationDoc(
            action="migrate" if target else "stop",
            target_platform="inferentia" if target else None,
            target_instance_type=target,
            target_count=1 if target else None,
        ),
        confidence="medium",
        summary=f"{name} summary",
        evidence={"gpu_max_pct": 0.5},
    )


@pytest.fixture
def store(session_factory: sessionmaker[Session]) -> sessionmaker[Session]:
    with session_factory.begin() as session:
        session.add(Account(account_id=ACCOUNT))
    return session_factory


def apply(store: sessionmaker[Session], drafts: list[FindingDraft], now: Any = NOW, region: str = "us-east-1") -> Any:
    with store.begin() as session:
        return FindingRepository(session).apply(
            account_id=ACCOUNT, region=region, drafts=drafts, rule_ids=RULES, now=now
        )


def findings(store: sessionmaker[Session]) -> dict[str, Finding]:
    with store() as session:
        return {f.resource_name: f for f in session.scalars(select(Finding))}


def history(store: sessionmaker[Session]) -> list[Recommendation]:
    with store() as session:
        return list(session.scalars(select(Recommendation).order_by(Recommendation.id)))


def test_a_new_finding_is_open_with_its_first_estimate_in_the_history(store: sessionmaker[Session]) -> None:
    # When a draft is applied for the first time
    result = apply(store, [draft(target="inf2.xlarge")])
    # Then an open finding exists, first and last seen now, and one estimate row records its price
    found = findings(store)["box"]
    assert (result.new, found.status, found.first_seen, found.last_seen) == (1, "open", NOW, NOW)
    assert found.recommendation == {
        "action": "migrate",
        "target_platform": "inferentia",
        "target_instance_type": "inf2.xlarge",
        "target_count": 1,
        "excluded_from_totals": None,
        "software_path": None,
    }
    [estimate] = history(store)
    assert (estimate.source, estimate.monthly_savings_usd, estimate.monthly_cost_usd) == (
        "estimate",
        Decimal("100.000000"),
        Decimal("634.380000"),
    )


def test_seeing_it_again_keeps_its_id_and_first_seen_and_records_only_a_new_price(
    store: sessionmaker[Session],
) -> None:
    # Given an open finding
    apply(store, [draft()])
    first = findings(store)["box"]
    # When the same draft comes a day later, then a re-priced one two days later
    apply(store, [draft()], now=LATER)
    again = findings(store)["box"]
    apply(store, [draft(saving="150.00")], now=LATER + timedelta(days=1))
    # Then the identity and first_seen stay, last_seen moves, and the history grows only on the new price
    assert (again.id, again.first_seen, again.last_seen) == (first.id, NOW, LATER)
    assert [h.monthly_savings_usd for h in history(store)] == [Decimal("100.000000"), Decimal("150.000000")]


def test_a_finding_the_rules_no_longer_make_is_resolved_and_reopened_when_it_returns(
    store: sessionmaker[Session],
) -> None:
    # Given findings of an evaluated rule, of a rule not evaluated this time, and in another region
    apply(store, [draft("a"), draft("b"), draft("other", rule_id="spiky_inference_bedrock")])
    apply(store, [draft("west", region="us-west-2")], region="us-west-2")
    # When only "a" is drafted again
    result = apply(store, [draft("a")], now=LATER)
    # Then "b" is resolved; the unevaluated rule's finding and the other region's are untouched
    state = {name: (f.status, f.resolved_at) for name, f in findings(store).items()}
    assert result.resolved == 1
    assert state == {"a": ("open", None), "b": ("resolved", LATER), "other": ("open", None), "west": ("open", None)}
    # When "b" comes back
    reopened = apply(store, [draft("a"), draft("b")], now=LATER + timedelta(days=1))
    # Then it is open again under the same id
    assert reopened.reopened == 1
    assert findings(store)["b"].status == "open" and findings(store)["b"].resolved_at is None


def test_every_finding_on_a_resource_judged_elsewhere_is_resolved_whatever_the_policy(
    store: sessionmaker[Session],
) -> None:
    # Given "pool-node" with findings of an evaluated rule and of a rule the policy no longer enables, and "other"
    # with a finding of that rule too
    spiky = "spiky_inference_bedrock"
    apply(store, [draft("pool-node"), draft("pool-node", rule_id=spiky), draft("other", rule_id=spiky)])
    node = draft("pool-node").resource_key
    # When "pool-node" is judged on another resource (no rule ran on it: no draft)
    with store.begin() as session:
        result = FindingRepository(session).apply(
            account_id=ACCOUNT, region="us-east-1", drafts=[], rule_ids=RULES, now=LATER, judged_elsewhere=[node]
        )
    # Then both of its findings are resolved; the unevaluated rule's finding elsewhere is kept as it is
    with store() as session:
        state = {(f.resource_name, f.rule_id): f.status for f in session.scalars(select(Finding))}
    assert result.resolved == 2
    assert state == {
        ("pool-node", "gpu_idle"): "resolved",
        ("pool-node", spiky): "resolved",
        ("other", spiky): "open",
    }


def test_a_suppressed_finding_stays_hidden_until_its_date_then_reopens(store: sessionmaker[Session]) -> None:
    # Given an open finding suppressed until two days from now
    apply(store, [draft()])
    with store.begin() as session:
        finding_id = findings(store)["box"].id
        FindingRepository(session).suppress(
            finding_id[:8], until=NOW + timedelta(days=2), reason="migration in Q1", now=NOW
        )
    # When the rules run again tomorrow, and again in three days
    apply(store, [draft()], now=LATER)
    tomorrow = findings(store)["box"]
    apply(store, [draft()], now=NOW + timedelta(days=3))
    after = findings(store)["box"]
    # Then it stays suppressed (and updated) until the date, and is open again afterwards
    assert (tomorrow.status, tomorrow.suppress_reason, tomorrow.last_seen) == ("suppressed", "migration in Q1", LATER)
    assert (after.status, after.suppressed_until, after.suppress_reason) == ("open", None, None)


def test_suppression_needs_a_reason_a_future_date_and_a_live_finding(store: sessionmaker[Session]) -> None:
    apply(store, [draft("a"), draft("b")])
    apply(store, [draft("a")], now=LATER)  # b resolved
    ids = {name: f.id for name, f in findings(store).items()}
    with store.begin() as session:
        repository = FindingRepository(session)
        with pytest.raises(InvalidInput, match="reason"):
            repository.suppress(ids["a"], until=LATER, reason="  ", now=NOW)
        with pytest.raises(InvalidInput, match="not in the future"):
            repository.suppress(ids["a"], until=NOW, reason="why", now=NOW)
        with pytest.raises(InvalidInput, match="resolved"):
            repository.suppress(ids["b"], until=LATER, reason="why", now=NOW)
        with pytest.raises(NotFound):
            repository.suppress("ffffffff-0000", until=LATER, reason="why", now=NOW)
        with pytest.raises(NotFound, match="at least 6"):
            repository.get("abc")


def test_a_benchmark_measurement_survives_while_the_target_is_the_same(store: sessionmaker[Session]) -> None:
    # Given a finding a benchmark has measured (measured saving, a note in the evidence, high confidence)
    apply(store, [draft(target="inf2.xlarge")])
    with store.begin() as session:
        finding = session.scalars(select(Finding)).one()
        finding.measured_monthly_savings_usd = Decimal("90")
        finding.evidence = {**finding.evidence, "benchmark": {"run_id": "r1", "status": "measured"}}
        finding.confidence = "high"
    # When the rules make the same recommendation again
    apply(store, [draft(target="inf2.xlarge")], now=LATER)
    kept = findings(store)["box"]
    # Then the measurement stays
    assert (kept.measured_monthly_savings_usd, kept.confidence) == (Decimal("90.000000"), "high")
    assert kept.evidence["benchmark"]["run_id"] == "r1" and kept.evidence["gpu_max_pct"] == 0.5
    # When they recommend another target
    apply(store, [draft(target="inf2.8xlarge")], now=LATER + timedelta(days=1))
    moved = findings(store)["box"]
    # Then the old measurement no longer applies
    assert (moved.measured_monthly_savings_usd, moved.confidence) == (None, "medium")
    assert "benchmark" not in moved.evidence


@contextmanager
def count_statements(session: Session) -> Iterator[list[str]]:
    statements: list[str] = []

    def record(_conn: Any, _cursor: Any, statement: str, *_args: Any) -> None:
        statements.append(statement)

    engine = session.get_bind()
    event.listen(engine, "before_cursor_execute", record)
    try:
        yield statements
    finally:
        event.remove(engine, "before_cursor_execute", record)


def test_applying_many_drafts_takes_as_many_statements_as_applying_a_few(store: sessionmaker[Session]) -> None:
    # Given 10 and then 300 findings to insert, update and resolve
    counts = []
    for n, prefix in ((10, "few"), (300, "many")):
        with store.begin() as session:
            repository = FindingRepository(session)
            with count_statements(session) as statements:
                repository.apply(
                    account_id=ACCOUNT,
                    region=prefix,
                    drafts=[draft(f"{prefix}{i}", region=prefix) for i in range(n)],
                    rule_ids=RULES,
                    now=NOW,
                )
                repository.apply(
                    account_id=ACCOUNT,
                    region=prefix,
                    drafts=[draft(f"{prefix}{i}", region=prefix, saving="5") for i in range(n // 2)],
                    rule_ids=RULES,
                    now=LATER,
                )
            counts.append(len(statements))
    # Then the statement count does not depend on the number of findings
    assert counts[0] == counts[1]
    with store() as session:
        assert session.scalar(select(func.count()).select_from(Finding)) == 310


def test_an_unchanged_finding_gets_only_its_last_seen_written(store: sessionmaker[Session]) -> None:
    # Given two findings, evaluated again a day later: one the same, one re-priced
    with store.begin() as session:
        FindingRepository(session).apply(
            account_id=ACCOUNT, region="us-east-1", drafts=[draft("same"), draft("moved")], rule_ids=RULES, now=NOW
        )
    with store.begin() as session, count_statements(session) as statements:
        result = FindingRepository(session).apply(
            account_id=ACCOUNT,
            region="us-east-1",
            drafts=[draft("same"), draft("moved", saving="250.00")],
            rule_ids=RULES,
            now=LATER,
            scan_id="scan-2",
        )
    updates = [s for s in statements if s.lstrip().upper().startswith("UPDATE")]
    # Then the re-priced one is rewritten, the other gets last_seen and last_scan_id only
    assert result.updated == 2 and result.new == 0
    assert len(updates) == 2
    assert sum("evidence" in s for s in updates) == 1
    assert any("last_seen" in s and "evidence" not in s and "summary" not in s for s in updates)
    found = findings(store)
    for name in ("same", "moved"):
        assert found[name].last_seen.replace(tzinfo=None) == LATER.replace(tzinfo=None)
        assert found[name].last_scan_id == "scan-2"
        assert found[name].first_seen.replace(tzinfo=None) == NOW.replace(tzinfo=None)
    assert found["same"].estimated_monthly_savings_usd == Decimal("100.00")
    assert found["moved"].estimated_monthly_savings_usd == Decimal("250.00")
    assert [h.monthly_savings_usd for h in history(store)] == [Decimal("100.00"), Decimal("100.00"), Decimal("250.00")]


def test_the_lifecycle_reads_the_resolved_findings_of_the_drafted_keys_only(store: sessionmaker[Session]) -> None:
    # Given resolved findings of ten resources, one of them a production variant of an endpoint, and an open one
    variant = draft("endpoint").model_copy(update={"resource_variant": "blue"})
    apply(store, [draft(f"old{i}") for i in range(9)] + [variant, draft("live")])
    apply(store, [draft("live")], now=LATER)
    # When the lifecycle reads what it compares with for drafts of one resolved resource, the variant and a new one
    wanted = {("gpu_idle", d.resource_arn, d.resource_variant or "") for d in (draft("old3"), variant, draft("new"))}
    with store() as session:
        existing = FindingRepository(session)._existing(ACCOUNT, "us-east-1", wanted)
    # Then it holds the open finding and the two resolved ones drafted again, not the other resolved ones
    statuses = {key[1]: item.status for key, item in existing.items()}
    assert statuses == {
        draft("live").resource_arn: "open",
        draft("old3").resource_arn: "resolved",
        variant.resource_key: "resolved",
    }
    # And applying them reopens both under their ids
    result = apply(store, [draft("live"), draft("old3"), variant, draft("new")], now=LATER + timedelta(days=1))
    assert (result.new, result.reopened, result.resolved) == (1, 2, 0)


def inventory(store: sessionmaker[Session], states: dict[str, str]) -> None:
    """The resources ``draft(name)`` names, each in the state the inventory left it (``gone``: a scan read the
    listing of its kind completely and did not find it)."""
    with store.begin() as session:
        for name, state in states.items():
            d = draft(name)
            session.add(
                Resource(
                    account_id=ACCOUNT,
                    region=d.region,
                    arn=d.resource_arn,
                    kind="ec2_instance",
                    name=name,
                    instance_type="g5.xlarge",
                    platform="nvidia",
                    state=state,
                )
            )


def test_a_finding_of_a_rule_not_evaluated_is_resolved_when_its_resource_is_gone(store: sessionmaker[Session]) -> None:
    # Given gpu_idle findings on an instance the inventory marked gone, on a running one, on a stopped one, on one
    # never inventoried, and a suppressed one on another gone instance
    apply(store, [draft(n) for n in ("gone", "running", "stopped", "unlisted", "hushed")])
    inventory(store, {"gone": "gone", "running": "running", "stopped": "stopped", "hushed": "gone"})
    hushed = findings(store)["hushed"].id
    with store.begin() as session:
        FindingRepository(session).suppress(hushed, until=LATER + timedelta(days=30), reason="later", now=NOW)
    # When the rules run again with gpu_idle disabled (not evaluated: it drafts nothing)
    with store.begin() as session:
        result = FindingRepository(session).apply(
            account_id=ACCOUNT, region="us-east-1", drafts=[], rule_ids=("inferentia_idle",), now=LATER
        )
    # Then the findings on the gone instances are resolved, the suppressed one too; the others stay as they were
    found = findings(store)
    assert result.resolved == 2
    assert {n: f.status for n, f in found.items()} == {
        "gone": "resolved",
        "hushed": "resolved",
        "running": "open",
        "stopped": "open",
        "unlisted": "open",
    }
    assert found["gone"].resolved_at is not None
    assert found["gone"].resolved_at.replace(tzinfo=None) == LATER.replace(tzinfo=None)
    assert found["running"].resolved_at is None


def test_a_resource_gone_in_another_region_resolves_nothing_here(store: sessionmaker[Session]) -> None:
    # Given a gpu_idle finding in us-east-1 and one in us-west-2, whose resource is gone in us-west-2 only
    apply(store, [draft("east")])
    apply(store, [draft("west", region="us-west-2")], region="us-west-2")
    with store.begin() as session:
        west = draft("west", region="us-west-2")
        session.add(
            Resource(
                account_id=ACCOUNT,
                region="us-west-2",
                arn=west.resource_arn,
                kind="ec2_instance",
                name="west",
                platform="nvidia",
                state="gone",
            )
        )
    inventory(store, {"east": "running"})
    # When us-east-1 is evaluated with gpu_idle disabled
    with store.begin() as session:
        FindingRepository(session).apply(
            account_id=ACCOUNT, region="us-east-1", drafts=[], rule_ids=("inferentia_idle",), now=LATER
        )
    # Then neither moves: us-west-2's finding is resolved by us-west-2's own evaluation, not by this one
    assert {n: f.status for n, f in findings(store).items()} == {"east": "open", "west": "open"}
    with store.begin() as session:
        FindingRepository(session).apply(
            account_id=ACCOUNT, region="us-west-2", drafts=[], rule_ids=("inferentia_idle",), now=LATER
        )
    assert {n: f.status for n, f in findings(store).items()} == {"east": "open", "west": "resolved"}


def test_a_drafted_finding_on_a_resource_marked_gone_is_not_resolved(store: sessionmaker[Session]) -> None:
    # Given a gpu_idle finding on an instance the inventory marked gone
    apply(store, [draft("back")])
    inventory(store, {"back": "gone"})
    # When the rules draft it again (what the lifecycle is told the rules found wins over the stored state)
    result = apply(store, [draft("back")], now=LATER)
    # Then it stays open
    assert result.resolved == 0 and findings(store)["back"].status == "open"
