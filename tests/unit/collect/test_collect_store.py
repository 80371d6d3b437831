"""The collectors' repositories on SQLite and PostgreSQL: resources by ARN, costs and effective rates, metric
rollups and coverage, neuron rollups merged from parts (idempotent per source)."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta
from decimal import Decimal

from sqlalchemy import func, select
from sqlalchemy.orm import Session, sessionmaker

from chipwise.models.neuron import INSTANCE_RUNTIME_TAG, NeuronHourPart
from chipwise.models.records import CollectedResource, HourlyRollup, SeriesCoverage
from chipwise.models.records import CostLine as Cost
from chipwise.models.resources import WorkloadHints, parse_details
from chipwise.store.repositories.accounts import AccountRepository
from chipwise.store.repositories.inventory import GONE, ResourceRepository
from chipwise.store.repositories.neuron import NeuronRepository
from chipwise.store.repositories.usage import UsageRepository
from chipwise.store.tables import MetricRollup, NeuronRollup, Resource

ACCOUNT = "123456789012"
NOW = datetime(2026, 11, 20, 12, tzinfo=UTC)
H = datetime(2026, 11, 20, 10, tzinfo=UTC)


def _resource(arn: str, kind: str = "ec2_instance", name: str = "box", variant: str | None = None) -> CollectedResource:
    return CollectedResource(
        arn=arn,
        variant=variant,
        parent_arn=arn if variant else None,
        kind=kind,
        name=name,
        instance_type="inf2.xlarge",
        instance_count=1,  # type: ignore[arg-type]
        platform="inferentia",
        state="running",
        unknown_instance_type=False,
        hints=WorkloadHints(model_family="llama"),
        details=parse_details(kind, {"instance_id": arn.rsplit("/", 1)[-1]}),
    )


def _cost(day: int, usage_type: str, instance_type: str | None, unblended: str, amortized: str, hours: str) -> Cost:
    return Cost(
        day=date(2026, 11, day),
        service="Amazon SageMaker",
        usage_type=usage_type,
        usage_kind="Host",
        instance_type=instance_type,
        region="us-east-1",
        unblended_cost=Decimal(unblended),
        amortized_cost=Decimal(amortized),
        usage_quantity=Decimal(hours),
        estimated=False,
    )


def test_resources_are_upserted_by_arn_and_vanished_ones_marked_gone(session: Session) -> None:
    # Given two instances saved by a first scan
    AccountRepository(session).ensure(ACCOUNT)
    repo = ResourceRepository(session)
    a, b = "arn:aws:ec2:us-east-1:123456789012:instance/i-a", "arn:aws:ec2:us-east-1:123456789012:instance/i-b"
    first = repo.save(ACCOUNT, "us-east-1", [_resource(a), _resource(b)], "scan-1", NOW)
    # When a second scan finds only one of them, renamed
    second = repo.save(ACCOUNT, "us-east-1", [_resource(a, name="renamed")], "scan-2", NOW + timedelta(days=1))
    gone = repo.mark_gone(ACCOUNT, "us-east-1", ["ec2_instance"], [a], NOW + timedelta(days=1))
    # Then ids are stable, the row is updated (first_seen kept) and the other one is gone
    assert first == second and gone == 1
    kept = repo.by_key(a)
    assert kept is not None and kept.name == "renamed" and kept.last_scan_id == "scan-2"
    assert kept.first_seen == NOW and kept.last_seen == NOW + timedelta(days=1)
    assert [r.arn for r in repo.list(ACCOUNT)] == [a]
    assert {r.state for r in repo.list(ACCOUNT, include_gone=True)} == {"running", GONE}
    assert repo.by_instance_id("i-a") == kept
    assert session.scalar(select(func.count()).select_from(Resource)) == 2


def test_training_jobs_never_go(session: Session) -> None:
    AccountRepository(session).ensure(ACCOUNT)
    repo = ResourceRepository(session)
    repo.save(ACCOUNT, "us-east-1", [_resource("arn:job", kind="sagemaker_training_job")], "s", NOW)
    assert repo.mark_gone(ACCOUNT, "us-east-1", ["sagemaker_training_job"], [], NOW) == 0


def test_costs_to_the_cent_and_effective_rates(session: Session) -> None:
    # Given two days of an inf2 endpoint partly covered by a Savings Plan, and a volume
    AccountRepository(session).ensure(ACCOUNT)
    records = [
        _cost(1, "USE1-Host:ml.inf2.xlarge", "ml.inf2.xlarge", "23.7600001", "17.1072", "24"),
        _cost(2, "USE1-Host:ml.inf2.xlarge", "ml.inf2.xlarge", "23.7600001", "23.76", "24"),
        _cost(2, "USE1-Host:VolumeUsage.gp2", None, "0.52", "0.52", "3.7"),
    ]
    UsageRepository(session).save_cost_records(ACCOUNT, records, NOW)
    UsageRepository(session).save_cost_records(ACCOUNT, records, NOW)  # fetching again changes nothing
    # Then totals are exact Decimals and the rate is amortized cost per hour
    total, by_type = UsageRepository(session).cost_totals(ACCOUNT, date(2026, 11, 1), date(2026, 11, 3))
    assert total == Decimal("48.040000")
    assert by_type == {"ml.inf2.xlarge": Decimal("47.520000")}
    assert UsageRepository(session).effective_hourly_rates(ACCOUNT, date(2026, 11, 1), date(2026, 11, 3)) == {
        "ml.inf2.xlarge": Decimal("0.851400")
    }
    assert UsageRepository(session).effective_hourly_rates(ACCOUNT, date(2026, 11, 2), date(2026, 11, 3)) == {
        "ml.inf2.xlarge": Decimal("0.990000")
    }
    assert UsageRepository(session).stored_cost_days(ACCOUNT, date(2026, 11, 1), date(2026, 11, 30)) == {
        date(2026, 11, 1),
        date(2026, 11, 2),
    }


def test_rollups_and_coverage_are_idempotent(session: Session) -> None:
    AccountRepository(session).ensure(ACCOUNT)
    ids = ResourceRepository(session).save(ACCOUNT, "us-east-1", [_resource("arn:r")], "s", NOW)
    rows = [
        HourlyRollup("arn:r", "AWS/EC2", "CPUUtilization", H + timedelta(hours=i), 10.0 + i, 20.0, None, 60.0)
        for i in range(2)
    ]
    coverage = [
        SeriesCoverage("arn:r", "AWS/EC2", "CPUUtilization", True, 2),
        SeriesCoverage("arn:r", "CWAgent", "x", False, 0),
    ]
    for _ in range(2):
        UsageRepository(session).save_rollups(rows, ids)
        UsageRepository(session).save_coverage(coverage, ids, (H, NOW), NOW)
    stored = UsageRepository(session).rollups_for(ids["arn:r"], "AWS/EC2", "CPUUtilization", H, NOW)
    assert [(r.hour, r.average, r.maximum, r.sample_count) for r in stored] == [
        (H, 10.0, 20.0, 60.0),
        (H + timedelta(hours=1), 11.0, 20.0, 60.0),
    ]
    assert session.scalar(select(func.count()).select_from(MetricRollup)) == 2
    found = UsageRepository(session).coverage_for(ids["arn:r"])
    assert found[("CWAgent", "x")].exists is False and found[("AWS/EC2", "CPUUtilization")].hours_with_data == 2


def _part(reports: int, util_sum: float, executions: int, **extra: object) -> NeuronHourPart:
    return NeuronHourPart(
        "i-0123456789abcdef0",
        INSTANCE_RUNTIME_TAG,
        H,
        "inf2.xlarge",
        reports=reports,
        util_sum=util_sum,
        util_n=reports,
        util_max=extra.get("util_max", 50.0),
        cores_in_use=2,
        executions_completed=executions,  # type: ignore[arg-type]
    )


def test_neuron_parts_of_one_hour_merge_and_a_source_ingested_twice_counts_once(
    session_factory: sessionmaker[Session],
) -> None:
    # Given an hour reported by two objects
    with session_factory.begin() as session:
        repo = NeuronRepository(session)
        repo.merge(ACCOUNT, "s3://b/neuron/a.jsonl.gz", [_part(2, 60.0, 10)])
        repo.merge(ACCOUNT, "s3://b/neuron/b.jsonl.gz", [_part(1, 90.0, 5, util_max=95.0)])
        # When the first object is ingested again
        repo.merge(ACCOUNT, "s3://b/neuron/a.jsonl.gz", [_part(2, 60.0, 10)])
    # Then the hour holds both objects, once each
    with session_factory.begin() as session:
        [row] = session.scalars(select(NeuronRollup)).all()
        assert (row.reports, row.executions_completed, row.neuroncore_utilization_max) == (3, 15, 95.0)
        assert row.neuroncore_utilization_avg == 50.0
        assert row.parts is not None and sorted(row.parts) == ["s3://b/neuron/a.jsonl.gz", "s3://b/neuron/b.jsonl.gz"]
        hours = NeuronRepository(session).hours_by_instance(ACCOUNT, ["i-0123456789abcdef0", "i-x"], H, NOW)
        assert hours == {"i-0123456789abcdef0": 1}


def test_variants_of_an_endpoint_not_described_this_scan_are_kept(session: Session) -> None:
    # Given the two variants of an A/B endpoint stored by a first scan
    AccountRepository(session).ensure(ACCOUNT)
    repo = ResourceRepository(session)
    endpoint = "arn:aws:sagemaker:us-east-1:123456789012:endpoint/chat-ab"
    resources = [
        _resource(endpoint, kind="sagemaker_endpoint", variant="main"),
        _resource(endpoint, kind="sagemaker_endpoint", variant="canary"),
    ]
    ids = repo.save(ACCOUNT, "us-east-1", resources, "scan-1", NOW)
    # (each is stored under the endpoint's ARN, the variant in its own column, with a key of its own)
    main, canary = f"{endpoint}#variant/main", f"{endpoint}#variant/canary"
    assert sorted(ids) == [canary, main]
    assert sorted((r.arn, r.variant, r.key) for r in repo.list(ACCOUNT)) == [
        (endpoint, "canary", canary),
        (endpoint, "main", main),
    ]
    later = NOW + timedelta(days=1)
    # When the next scan lists the endpoint but cannot describe it (throttled), Then its variants are not gone
    assert repo.mark_gone(ACCOUNT, "us-east-1", ["sagemaker_endpoint"], [endpoint], later, [endpoint]) == 0
    # When a scan describes it and finds only the main variant (the canary was removed), Then the canary is gone
    assert repo.mark_gone(ACCOUNT, "us-east-1", ["sagemaker_endpoint"], [main], later) == 1
    assert [r.key for r in repo.list(ACCOUNT)] == [main]
