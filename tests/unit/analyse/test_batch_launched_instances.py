"""An EC2 instance an AWS Batch compute environment launched is judged on the environment, not on its own.

The environment is tied to its instances the way AWS documents it (DescribeComputeEnvironments names its
``ecsClusterArn``; ECS ListContainerInstances + DescribeContainerInstances give each instance's ``ec2InstanceId``),
and each instance is also listed by DescribeInstances. Every AWS answer below goes through botocore's Stubber, which
checks it against the service's documented output shape; the rows are written by the scan's own repositories and
judged by the rules against the store (SQLite, and PostgreSQL when configured).

The story: a managed EC2 environment ``g5-pool`` (minvCpus 96: two g5.12xlarge held, its queue ran no job in 14 days)
launched two instances, one with an idle GPU, one busy. Day 1 its instances could not be read (ECS refused): the
idle instance got its own "stop it" finding beside the environment's, the same dollars twice in the headline. Day 2
the inventory reads the tie: an apply on the day-1 finding is refused before any AWS call, the rules resolve it, only
the environment's finding stands (its dollars once, to the cent), and the instance's verdict names the environment.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from datetime import timedelta
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
from analyse_factories import NOW, WINDOW_START, add_account, add_coverage, add_rollups, rollup_rows
from sqlalchemy.orm import Session, sessionmaker

from chipwise.analyse.metric_keys import CWAGENT_GPU
from chipwise.analyse.verdicts import settle_verdicts
from chipwise.aws import AwsContext
from chipwise.collect.inventory.sources.batch_compute_environments import collect_batch
from chipwise.collect.inventory.sources.ec2_instances import ec2_resource
from chipwise.errors import InvalidInput
from chipwise.models.findings import FindingDocument
from chipwise.models.records import CollectedResource
from chipwise.models.verdicts import ResourceVerdict
from chipwise.pipeline.apply import apply_finding
from chipwise.pipeline.evaluate import assess_account
from chipwise.pipeline.policy import load_policy
from chipwise.pipeline.scan_document import finish_scan
from chipwise.pipeline.scan_run import ScanRun
from chipwise.presentation import counts_in_totals, headline
from chipwise.rules.policy import Policy, policy_from_mapping
from chipwise.rules.titles import rule_title
from chipwise.store.repositories.accounts import ScanRepository
from chipwise.store.repositories.findings import FindingRepository
from chipwise.store.repositories.inventory import ResourceRepository
from chipwise.store.repositories.remediations import RemediationRepository
from chipwise.store.tables import Finding

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "collect"))
from batch_stubs import ACCOUNT, REGION, Stubs, container_instance, stubbed

POOL = "g5-pool"
POOL_ARN = f"arn:aws:batch:{REGION}:{ACCOUNT}:compute-environment/{POOL}"
QUEUE_ARN = f"arn:aws:batch:{REGION}:{ACCOUNT}:job-queue/g5-queue"
CLUSTER = f"arn:aws:ecs:{REGION}:{ACCOUNT}:cluster/AWSBatch-{POOL}-5b7c3f0e-7a3d-3c1b-9e8b-1f2a3b4c5d6e"
IDLE, BUSY = "i-0aaaaaaaaaaaaaaaa", "i-0bbbbbbbbbbbbbbbb"
HOURS = 14 * 24
G5_12XL = Decimal("5.672")  # g5.12xlarge on demand in us-east-1 (the shipped catalog)
ONE_INSTANCE = Decimal("4140.56")  # 5.672 x 730
HELD = Decimal("8281.12")  # minvCpus 96 / 48 vCPUs = 2 instances: 2 x 5.672 x 730


@pytest.fixture
def stubs() -> Iterator[Stubs]:
    with stubbed() as found:
        yield found


def _environment() -> dict[str, Any]:
    return {
        "computeEnvironmentName": POOL,
        "computeEnvironmentArn": POOL_ARN,
        "type": "MANAGED",
        "state": "ENABLED",
        "status": "VALID",
        "ecsClusterArn": CLUSTER,
        "computeResources": {
            "type": "EC2",
            "minvCpus": 96,
            "maxvCpus": 192,
            "desiredvCpus": 96,
            "instanceTypes": ["g5.12xlarge"],
            "subnets": ["subnet-0a1b2c3d"],
        },
    }


def _collect(stubs: Stubs, *, ecs_answers: bool) -> list[CollectedResource]:
    """The Batch inventory (the environment, its queue's jobs in the window: none, its ECS cluster's instances or
    a refusal) and the two instances as DescribeInstances lists them."""
    queue = {
        "jobQueueName": "g5-queue",
        "jobQueueArn": QUEUE_ARN,
        "state": "ENABLED",
        "priority": 1,
        "computeEnvironmentOrder": [{"order": 1, "computeEnvironment": POOL_ARN}],
    }
    after = str(int(WINDOW_START.timestamp() * 1000))
    stubs.batch.add_response("describe_job_queues", {"jobQueues": [queue]}, {})
    stubs.batch.add_response(
        "list_jobs",
        {"jobSummaryList": []},
        {"jobQueue": QUEUE_ARN, "filters": [{"name": "AFTER_CREATED_AT", "values": [after]}]},
    )
    stubs.batch.add_response("describe_compute_environments", {"computeEnvironments": [_environment()]}, {})
    if ecs_answers:
        listed = [container_instance(1, IDLE, POOL), container_instance(2, BUSY, POOL)]
        arns = [c["containerInstanceArn"] for c in listed]
        stubs.ecs.add_response("list_container_instances", {"containerInstanceArns": arns}, {"cluster": CLUSTER})
        stubs.ecs.add_response(
            "describe_container_instances",
            {"containerInstances": listed, "failures": []},
            {"cluster": CLUSTER, "containerInstances": arns},
        )
    else:
        stubs.ecs.add_client_error(
            "list_container_instances", "AccessDeniedException", "not authorized: ecs:ListContainerInstances"
        )
    instances = [
        {
            "InstanceId": instance_id,
            "InstanceType": "g5.12xlarge",
            "ImageId": "ami-0c1f2e3d4b5a69788",
            "LaunchTime": NOW - timedelta(days=30),
            "State": {"Code": 16, "Name": "running"},
            "Placement": {"AvailabilityZone": f"{REGION}a"},
        }
        for instance_id in (IDLE, BUSY)
    ]
    answer = {"Reservations": [{"ReservationId": "r-0123456789abcdef0", "OwnerId": ACCOUNT, "Instances": instances}]}
    stubs.ec2.add_response("describe_instances", answer, {})
    listed = stubs.aws.client("ec2").describe_instances()["Reservations"][0]["Instances"]
    batch = collect_batch(stubs.aws, ACCOUNT, WINDOW_START).resources
    return [*batch, *(ec2_resource(i, ACCOUNT, REGION) for i in listed)]


def _save(session: Session, found: list[CollectedResource]) -> dict[str, int]:
    """The inventory stored as the scan stores it; the resource ids by instance id (or the environment's name)."""
    ids = ResourceRepository(session).save(ACCOUNT, REGION, found, None, NOW)
    return {r.name: ids[r.key] for r in found}


def _gpu(session: Session, resource_id: int, percent: float) -> None:
    """14 days of hourly GPU utilisation from the CloudWatch agent (the busiest GPU), and its coverage."""
    add_rollups(session, rollup_rows(resource_id, CWAGENT_GPU, [percent] * HOURS))
    add_coverage(session, resource_id, CWAGENT_GPU, True, HOURS)


def _judge(session: Session, policy: Policy | None = None) -> tuple[list[FindingDocument], dict[str, ResourceVerdict]]:
    findings, verdicts = assess_account(
        session, account_id=ACCOUNT, region=REGION, now=NOW, policy=policy or load_policy(), lookback_days=14
    )
    settled = settle_verdicts(verdicts, findings, rule_title)
    return findings, {v.name: v for v in settled}


def _no_aws(account_id: str, region: str) -> AwsContext:
    raise AssertionError(f"no AWS call expected for {account_id} {region}: the store refuses the instance")


def test_an_instance_a_batch_environment_launched_is_judged_on_the_environment_only(
    session_factory: sessionmaker[Session], db_url: str, stubs: Stubs
) -> None:
    # Given day 1: the environment's instances could not be read (ECS refused), both instances with GPU metrics
    with session_factory.begin() as session:
        add_account(session, ACCOUNT)
        ids = _save(session, _collect(stubs, ecs_answers=False))
        _gpu(session, ids[IDLE], 1.0)
        _gpu(session, ids[BUSY], 65.0)
    with session_factory.begin() as session:
        day1, _ = _judge(session)
    # Then without the tie the idle instance has its own "stop it" finding beside the environment's: the same
    # instance-hours counted twice in the headline
    assert sorted((f.rule_id, f.resource_name) for f in day1) == [("capacity_held_idle", POOL), ("gpu_idle", IDLE)]
    assert headline(day1).total_usd == HELD + ONE_INSTANCE == Decimal("12421.68")
    (stale,) = [f.finding_id for f in day1 if f.resource_name == IDLE]

    # When day 2's inventory reads the environment's ECS cluster: both instances are its container instances
    with session_factory.begin() as session:
        _save(session, _collect(stubs, ecs_answers=True))
        assert ResourceRepository(session).batch_launched(ACCOUNT, REGION) == {IDLE: POOL, BUSY: POOL}
    # Then an apply on the day-1 finding is refused from the store before any AWS call (Batch would replace the
    # instance), dry run or not, and the refusal is audited
    dry = apply_finding(stale, actor="alice", source="cli", database_url=db_url, dry_run=True)
    outcome = apply_finding(
        stale, actor="alice", source="cli", database_url=db_url, now=NOW, aws_for=_no_aws, approved=True
    )
    for refused in (dry, outcome):
        assert refused.status == "refused" and refused.calls == []
        assert refused.message.startswith(f"instance {IDLE} was launched by AWS Batch compute environment {POOL}")
    with session_factory() as session:
        events = RemediationRepository(session).for_finding(stale)
        assert [(e.event, e.status, e.actor) for e in events] == [("refusal", "refused", "alice")]

    # When the rules run on day 2
    with session_factory.begin() as session:
        day2, verdicts = _judge(session)
    # Then only the environment's finding stands, its dollars once: 2 held × $5.672 × 730 = $8,281.12
    assert [(f.rule_id, f.resource_name) for f in day2] == [("capacity_held_idle", POOL)]
    assert day2[0].estimated_monthly_savings_usd == (2 * G5_12XL * 730).quantize(Decimal("0.01")) == HELD
    assert headline(day2).total_usd == HELD and headline(day2).counted == 1
    # And the day-1 finding is resolved by the lifecycle (no longer drafted), so apply has nothing to act on
    with session_factory() as session:
        row = session.get(Finding, stale)
        assert row is not None and row.status == "resolved"
    with pytest.raises(InvalidInput, match="resolved"):
        apply_finding(stale, actor="alice", source="cli", database_url=db_url, now=NOW, aws_for=_no_aws)
    # And each instance's verdict says in words that it is part of the environment and judged there; every rule
    # stood aside naming it; the environment is the one with the waste
    for name in (IDLE, BUSY):
        verdict = verdicts[name]
        assert verdict.verdict == "out_of_scope" and verdict.finding_rules == []
        assert verdict.reason.startswith(f"part of AWS Batch compute environment {POOL}, which launched it: judged ")
        assert {o.outcome for o in verdict.outcomes} == {"not_applicable"}
        assert all(POOL in o.reason for o in verdict.outcomes)
    assert verdicts[POOL].verdict == "waste" and verdicts[POOL].finding_rules == ["capacity_held_idle"]


def test_an_environment_whose_instances_are_gone_ties_none(
    session_factory: sessionmaker[Session], stubs: Stubs
) -> None:
    # Given the environment with its instances read, then deleted (a later scan marks it gone)
    with session_factory.begin() as session:
        add_account(session, ACCOUNT)
        _save(session, _collect(stubs, ecs_answers=True))
        repository = ResourceRepository(session)
        assert repository.batch_launched(ACCOUNT, REGION) == {IDLE: POOL, BUSY: POOL}
        repository.mark_gone(ACCOUNT, REGION, ["batch_compute_environment"], [], NOW)
        # Then a gone environment ties no instance (another account or region never did)
        assert repository.batch_launched(ACCOUNT, REGION) == {}
        assert repository.batch_launched("210987654321", REGION) == {}


def test_a_finding_of_a_rule_the_policy_disabled_is_resolved_when_its_instance_is_judged_on_the_environment(
    session_factory: sessionmaker[Session], db_url: str, stubs: Stubs
) -> None:
    # Given day 1 without the tie (ECS refused): the idle instance got its own gpu_idle finding beside the
    # environment's
    with session_factory.begin() as session:
        add_account(session, ACCOUNT)
        ids = _save(session, _collect(stubs, ecs_answers=False))
        _gpu(session, ids[IDLE], 1.0)
        _gpu(session, ids[BUSY], 65.0)
    with session_factory.begin() as session:
        day1, _ = _judge(session)
    (stale,) = [f.finding_id for f in day1 if f.resource_name == IDLE and f.rule_id == "gpu_idle"]

    # When day 2's inventory reads the tie and the policy now disables gpu_idle (the rule that opened the finding is
    # not evaluated: the lifecycle keeps a disabled rule's findings as they are, on any other resource)
    with session_factory.begin() as session:
        _save(session, _collect(stubs, ecs_answers=True))
    policy = policy_from_mapping({"gpu_idle": {"enabled": False}})
    with session_factory.begin() as session:
        day2, verdicts = _judge(session, policy)
    # Then the day-1 finding is resolved all the same: its instance is judged on the environment, whatever the policy
    with session_factory() as session:
        row = session.get(Finding, stale)
        assert row is not None and row.status == "resolved"
    # And the headline counts the instance-hours once, on the environment's finding, to the cent
    assert [(f.rule_id, f.resource_name) for f in day2] == [("capacity_held_idle", POOL)]
    assert headline(day2).total_usd == HELD and headline(day2).counted == 1
    # And the verdicts agree with the headline: the instance is out of scope (judged on its environment), the
    # environment is the one waste, and the waste verdicts' findings are exactly the counted ones
    assert verdicts[IDLE].verdict == "out_of_scope" and verdicts[IDLE].finding_rules == []
    assert verdicts[IDLE].reason.startswith(f"part of AWS Batch compute environment {POOL}")
    waste = {(rule, v.name) for v in verdicts.values() if v.verdict == "waste" for rule in v.finding_rules}
    assert waste == {(f.rule_id, f.resource_name) for f in day2 if counts_in_totals(f)}


def test_a_suppressed_finding_on_an_instance_judged_on_the_environment_is_resolved(
    session_factory: sessionmaker[Session], stubs: Stubs
) -> None:
    # Given day 1's gpu_idle finding on the idle instance, suppressed by a person
    with session_factory.begin() as session:
        add_account(session, ACCOUNT)
        ids = _save(session, _collect(stubs, ecs_answers=False))
        _gpu(session, ids[IDLE], 1.0)
        _gpu(session, ids[BUSY], 65.0)
    with session_factory.begin() as session:
        day1, _ = _judge(session)
        (stale,) = [f.finding_id for f in day1 if f.resource_name == IDLE]
        FindingRepository(session).suppress(stale, until=NOW + timedelta(days=90), reason="pool", now=NOW)
    # When day 2 reads the tie with gpu_idle disabled
    with session_factory.begin() as session:
        _save(session, _collect(stubs, ecs_answers=True))
    with session_factory.begin() as session:
        _judge(session, policy_from_mapping({"gpu_idle": {"enabled": False}}))
    # Then it is resolved too: a suppressed finding reopens when its moment passes, and this one must not
    with session_factory() as session:
        row = session.get(Finding, stale)
        assert row is not None and row.status == "resolved"


def test_a_scan_priced_from_cost_explorer_names_the_environment_each_instance_is_judged_on(
    session_factory: sessionmaker[Session], stubs: Stubs
) -> None:
    # Given the environment's instances read (the tie in the inventory), no bill stored: Cost Explorer prices the scan
    with session_factory.begin() as session:
        add_account(session, ACCOUNT)
        found = _collect(stubs, ecs_answers=True)
        ids = _save(session, found)
        _gpu(session, ids[IDLE], 1.0)
        _gpu(session, ids[BUSY], 65.0)
    run = ScanRun(
        scan_id="5c0a7c1e-0000-4000-8000-000000000001", account_id=ACCOUNT, region=REGION, started_at=NOW, now=NOW,
        metric_start=WINDOW_START, metric_end=NOW, cost_start=WINDOW_START.date(), cost_end=NOW.date(),
        lookback_days=14, resources=found, inventory_ok=1,
    )  # fmt: skip
    with session_factory.begin() as session:
        ScanRepository(session).open(
            run.scan_id, ACCOUNT, REGION, started_at=NOW, window_start=run.cost_start, window_end=run.cost_end
        )
        findings, run.verdicts = assess_account(
            session, account_id=ACCOUNT, region=REGION, now=NOW, lookback_days=14, scan_id=run.scan_id
        )
    # When the scan's document is written
    document = finish_scan(stubs.aws, session_factory, run, findings)
    # Then it is priced from Cost Explorer: no resource carries a cost of its own, so none is billed on another
    assert run.cost_source == "cost_explorer" and document.costs.source == "cost_explorer"
    resources = {r.name: r for r in document.resources}
    assert all(r.cost_usd is None and r.billed_on is None for r in resources.values())
    # And each instance names the environment it is judged on, as the rules read the tie: no finding of its own,
    # its verdict out of scope naming the environment; the environment carries the one finding
    verdicts = {v.name: v for v in document.verdicts}
    for name in (IDLE, BUSY):
        assert resources[name].judged_on == POOL_ARN == resources[POOL].id
        assert verdicts[name].verdict == "out_of_scope" and POOL in verdicts[name].reason
        assert not [f for f in document.findings if f.resource_id == resources[name].id]
    assert resources[POOL].judged_on is None
    assert [(f.rule_id, f.resource_name) for f in document.findings] == [("capacity_held_idle", POOL)]
    # And the stored document says the same (what `chipwise resources` and the report read)
    with session_factory() as session:
        stored = ScanRepository(session).document(run.scan_id)
    assert stored is not None
    assert {r.name: r.judged_on for r in stored.resources} == {POOL: None, IDLE: POOL_ARN, BUSY: POOL_ARN}
