"""Applying a finding's mechanical step on the emulator, per action: a dry run changes nothing; an apply changes
exactly the resource; a rollback restores it; a resource busy since the scan, changed, or protected is refused; a
call failing half-way undoes what was done; bad input is an error that stores nothing. Each event is audited."""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import timedelta
from typing import Any

import pytest
from remediate_factories import (
    ACCOUNT,
    REGION,
    add_finding,
    component,
    component_cpu,
    copies_of,
    endpoint,
    endpoint_cpu,
    endpoint_tags,
    gpu_instance,
    gpu_utilisation,
    idle_instance_finding,
    instance_state,
    invocations,
    variant_count,
)
from sqlalchemy.orm import Session

from chipwise.aws import aws_context
from chipwise.clock import utcnow
from chipwise.errors import InvalidInput, NotFound
from chipwise.pipeline.apply import RemediationOutcome, apply_finding
from chipwise.pipeline.rollback import rollback_finding
from chipwise.store.repositories.remediations import RemediationRepository
from chipwise_devkit.emulator import Emulator

MARK = "chipwise:remediation"


def _url(session: Session) -> str:
    """The test's store (what the session wrote so far committed, so the pipeline's own transactions see it)."""
    session.commit()
    return session.get_bind().url.render_as_string(hide_password=False)


def run(session: Session, finding_id: str, **kw: Any) -> RemediationOutcome:
    url = _url(session)
    try:
        return apply_finding(finding_id, actor="alice", source="cli", database_url=url, now=utcnow(), **kw)
    finally:
        session.expire_all()


def undo(session: Session, finding_id: str) -> RemediationOutcome:
    url = _url(session)
    try:
        return rollback_finding(finding_id, actor="bob", source="cli", database_url=url, now=utcnow())
    finally:
        session.expire_all()


def audit(session: Session, finding_id: str) -> list[tuple[str, str, str]]:
    return [(r.event, r.status, r.actor) for r in RemediationRepository(session).for_finding(finding_id)]


# --- EC2 stop ----------------------------------------------------------------------------------------------------


def test_ec2_dry_run_prints_the_calls_and_changes_nothing(aws: Emulator, session: Session) -> None:
    instance = gpu_instance()
    finding = idle_instance_finding(session, instance)
    outcome = run(session, finding[:8], dry_run=True, approved=True)
    assert outcome.status == "dry_run"
    assert [str(c) for c in outcome.calls] == [
        f"ec2.CreateTags(Resources=['{instance}'], Tags=[{{'Key': '{MARK}', 'Value': '{finding}'}}])",
        f"ec2.StopInstances(InstanceIds=['{instance}'])",
    ]
    assert instance_state(instance) == ("running", {})
    assert audit(session, finding) == []


def test_ec2_without_approval_changes_nothing(aws: Emulator, session: Session) -> None:
    instance = gpu_instance()
    finding = idle_instance_finding(session, instance)
    gpu_utilisation(aws, instance, 0.5)
    assert run(session, finding).status == "unapproved"
    assert instance_state(instance) == ("running", {})
    assert audit(session, finding) == []


def test_ec2_apply_stops_exactly_the_instance_and_rollback_starts_it(aws: Emulator, session: Session) -> None:
    instance, neighbour = gpu_instance(), gpu_instance()
    finding = idle_instance_finding(session, instance)
    gpu_utilisation(aws, instance, 1.5)  # idle still: under gpu_idle's 5 %
    outcome = run(session, finding, approved=True)
    assert outcome.status == "applied"
    assert instance_state(instance) == ("stopped", {MARK: finding})
    assert instance_state(neighbour) == ("running", {})
    with pytest.raises(InvalidInput, match="already applied"):
        run(session, finding, approved=True)
    assert undo(session, finding).status == "rolled_back"
    assert instance_state(instance) == ("running", {})
    assert audit(session, finding) == [("apply", "applied", "alice"), ("rollback", "rolled_back", "bob")]
    applied = RemediationRepository(session).for_finding(finding)[0]
    assert [c["operation"] for c in applied.calls] == ["CreateTags", "StopInstances"]
    assert applied.rolled_back_at is not None and applied.before["state"] == "running"
    with pytest.raises(InvalidInput, match="nothing to roll back"):
        undo(session, finding)


def test_ec2_busy_since_the_scan_is_refused(aws: Emulator, session: Session) -> None:
    instance = gpu_instance()
    finding = idle_instance_finding(session, instance)
    gpu_utilisation(aws, instance, 63.0)
    outcome = run(session, finding, approved=True)
    assert outcome.status == "refused"
    assert "became busy since the scan" in outcome.message and "63.0 %" in outcome.message
    assert instance_state(instance) == ("running", {})
    assert audit(session, finding) == [("refusal", "refused", "alice")]


def test_ec2_busy_before_the_scan_does_not_count(aws: Emulator, session: Session) -> None:
    instance = gpu_instance()
    finding = idle_instance_finding(session, instance)
    gpu_utilisation(aws, instance, 90.0, hours_ago=30)  # the scan saw it and still called it idle
    gpu_utilisation(aws, instance, 0.5)  # and it is idle since
    assert run(session, finding, approved=True).status == "applied"


def test_ec2_changed_since_the_scan_is_refused(aws: Emulator, session: Session) -> None:
    instance = gpu_instance()
    finding = idle_instance_finding(session, instance)
    aws_context(REGION).client("ec2").stop_instances(InstanceIds=[instance])
    outcome = run(session, finding, approved=True)
    assert outcome.status == "refused" and "is stopped (it was running at the scan)" in outcome.message


def test_ec2_protected_is_refused(aws: Emulator, session: Session) -> None:
    instance = gpu_instance(tags={"chipwise:protect": "true"})
    finding = idle_instance_finding(session, instance)
    outcome = run(session, finding, approved=True)
    assert outcome.status == "refused" and "chipwise:protect=true" in outcome.message
    assert instance_state(instance) == ("running", {"chipwise:protect": "true"})


def test_ec2_failure_half_way_undoes_the_mark(aws: Emulator, session: Session) -> None:
    instance = gpu_instance()
    finding = idle_instance_finding(session, instance)
    gpu_utilisation(aws, instance, 0.5)
    aws.inject_fault("ec2", "StopInstances", "UnauthorizedOperation", "not allowed", status=403)
    outcome = run(session, finding, approved=True)
    assert outcome.status == "failed"
    assert "ec2.StopInstances failed (UnauthorizedOperation: not allowed)" in outcome.message
    assert instance_state(instance) == ("running", {})  # the tag made before the failure is gone
    assert audit(session, finding) == [("apply", "failed", "alice")]
    assert RemediationRepository(session).live_apply(finding) is None  # can be tried again


def test_ec2_gone_unknown_and_not_mechanical_are_errors(aws: Emulator, session: Session) -> None:
    instance = gpu_instance()
    finding = idle_instance_finding(session, instance)
    aws_context(REGION).client("ec2").terminate_instances(InstanceIds=[instance])
    with pytest.raises(NotFound, match="no longer exists"):
        run(session, finding, approved=True)
    with pytest.raises(NotFound, match="no finding 'ffffffff'"):
        run(session, "ffffffff", approved=True)
    migrate = add_finding(
        session,
        rule_id="gpu_inference_portable",
        arn=f"arn:aws:ec2:{REGION}:{ACCOUNT}:instance/{gpu_instance()}",
        kind="ec2_instance",
        name="portable",
        instance_type="g5.xlarge",
        count=1,
        recommendation={"action": "migrate", "target_instance_type": "inf2.xlarge", "target_count": 1},
    )
    with pytest.raises(InvalidInput, match="is not mechanical"):
        run(session, migrate, approved=True)
    assert audit(session, finding) == [] and audit(session, migrate) == []


# --- inference component copies to 0 ------------------------------------------------------------------------------


def component_finding(session: Session, endpoint_arn: str, name: str, copies: int = 2) -> str:
    return add_finding(
        session,
        rule_id="gpu_idle",
        arn=f"arn:aws:sagemaker:{REGION}:{ACCOUNT}:inference-component/{name}",  # its own ARN, as AWS gives it
        kind="sagemaker_inference_component",
        name=f"llm-ep/{name}",
        instance_type="ml.g5.12xlarge",
        count=copies,
        recommendation={"action": "delete"},
    )


def test_component_dry_run_apply_and_rollback(aws: Emulator, session: Session) -> None:
    arn = endpoint("llm-ep", count=1, for_components=True)
    component("llm-ep", "chat", copies=2)
    component("llm-ep", "summarise", copies=3)
    finding = component_finding(session, arn, "chat")
    component_cpu(aws, "chat")
    dry = run(session, finding, dry_run=True)
    assert [c.operation for c in dry.calls] == ["AddTags", "UpdateInferenceComponentRuntimeConfig"]
    assert dry.calls[1].params == {"InferenceComponentName": "chat", "DesiredRuntimeConfig": {"CopyCount": 0}}
    assert copies_of("chat") == 2 and endpoint_tags(arn) == {}
    assert run(session, finding, approved=True).status == "applied"
    assert (copies_of("chat"), copies_of("summarise")) == (0, 3)
    assert endpoint_tags(arn) == {MARK: finding}
    assert undo(session, finding).status == "rolled_back"
    assert (copies_of("chat"), copies_of("summarise")) == (2, 3)
    assert endpoint_tags(arn) == {}


def test_component_busy_since_the_scan_is_refused(aws: Emulator, session: Session) -> None:
    arn = endpoint("llm-ep", count=1, for_components=True)
    component("llm-ep", "chat", copies=2)
    finding = component_finding(session, arn, "chat")
    component_cpu(aws, "chat")
    invocations(aws, {"InferenceComponentName": "chat"}, 41)
    outcome = run(session, finding, approved=True)
    assert outcome.status == "refused" and "served 41 requests" in outcome.message
    assert copies_of("chat") == 2


def test_component_changed_protected_and_gone(aws: Emulator, session: Session) -> None:
    arn = endpoint("llm-ep", count=1, for_components=True)
    component("llm-ep", "chat", copies=3)
    changed = component_finding(session, arn, "chat", copies=2)  # the scan saw 2 copies
    outcome = run(session, changed, approved=True)
    assert outcome.status == "refused" and "has 3 copies now (the scan saw 2)" in outcome.message
    gone = component_finding(session, arn, "deleted-one")
    with pytest.raises(NotFound, match="inference component deleted-one no longer exists"):
        run(session, gone, approved=True)
    guarded = endpoint("guarded-ep", count=1, for_components=True, tags={"chipwise:protect": "true"})
    component("guarded-ep", "kept", copies=1)
    protected = component_finding(session, guarded, "kept", copies=1)
    outcome = run(session, protected, approved=True)
    assert outcome.status == "refused" and "endpoint guarded-ep is tagged chipwise:protect=true" in outcome.message
    assert copies_of("kept") == 1


def test_component_failure_half_way_rolls_back(aws: Emulator, session: Session) -> None:
    arn = endpoint("llm-ep", count=1, for_components=True)
    component("llm-ep", "chat", copies=2)
    finding = component_finding(session, arn, "chat")
    component_cpu(aws, "chat")
    aws.inject_fault("sagemaker", "UpdateInferenceComponentRuntimeConfig", "AccessDeniedException", "denied")
    outcome = run(session, finding, approved=True)
    assert outcome.status == "failed" and "AccessDeniedException" in outcome.message
    assert copies_of("chat") == 2 and endpoint_tags(arn) == {}
    assert aws.fault_hits() == {"sagemaker.UpdateInferenceComponentRuntimeConfig": 1}


# --- endpoint variant instance count down -------------------------------------------------------------------------


def variant_finding(session: Session, arn: str, count: int = 4, target: int = 2, peak: float | None = 120) -> str:
    return add_finding(
        session,
        rule_id="inferentia_underutilized",
        arn=arn,
        kind="sagemaker_endpoint",
        name="chat-ep",
        instance_type="ml.inf2.xlarge",
        count=count,
        recommendation={"action": "rightsize", "target_instance_type": "ml.inf2.xlarge", "target_count": target},
        evidence={"peak_requests_per_hour": peak, "variant_name": "AllTraffic"},
    )


def test_variant_dry_run_apply_and_rollback(aws: Emulator, session: Session) -> None:
    arn = endpoint("chat-ep", count=4)
    other = endpoint("other-ep", count=4)
    finding = variant_finding(session, arn)
    endpoint_cpu(aws, "chat-ep")
    invocations(aws, {"EndpointName": "chat-ep", "VariantName": "AllTraffic"}, 110)  # within the scan's peak
    dry = run(session, finding, dry_run=True)
    assert str(dry.calls[1]) == (
        "sagemaker.UpdateEndpointWeightsAndCapacities(EndpointName='chat-ep', "
        "DesiredWeightsAndCapacities=[{'VariantName': 'AllTraffic', 'DesiredInstanceCount': 2}])"
    )
    assert variant_count("chat-ep") == 4
    assert run(session, finding, approved=True).status == "applied"
    assert (variant_count("chat-ep"), variant_count("other-ep")) == (2, 4)
    assert endpoint_tags(arn) == {MARK: finding} and endpoint_tags(other) == {}
    assert undo(session, finding).status == "rolled_back"
    assert variant_count("chat-ep") == 4 and endpoint_tags(arn) == {}


def test_variant_busier_since_the_scan_is_refused(aws: Emulator, session: Session) -> None:
    arn = endpoint("chat-ep", count=4)
    finding = variant_finding(session, arn, peak=120)
    endpoint_cpu(aws, "chat-ep")
    invocations(aws, {"EndpointName": "chat-ep", "VariantName": "AllTraffic"}, 480)
    outcome = run(session, finding, approved=True)
    assert outcome.status == "refused" and "480 requests in an hour" in outcome.message
    assert variant_count("chat-ep") == 4


def test_variant_changed_and_protected_are_refused(aws: Emulator, session: Session) -> None:
    arn = endpoint("chat-ep", count=3)
    assert "runs 3 instances now" in run(session, variant_finding(session, arn), approved=True).message
    guarded = endpoint("guarded-ep", count=4, tags={"chipwise:protect": "TRUE"})
    outcome = run(session, variant_finding(session, guarded), approved=True)
    assert outcome.status == "refused" and "chipwise:protect=true" in outcome.message
    assert variant_count("guarded-ep") == 4


def test_variant_failure_half_way_rolls_back(aws: Emulator, session: Session) -> None:
    arn = endpoint("chat-ep", count=4)
    finding = variant_finding(session, arn)
    endpoint_cpu(aws, "chat-ep")
    aws.inject_fault("sagemaker", "UpdateEndpointWeightsAndCapacities", "ValidationException", "bad capacity")
    outcome = run(session, finding, approved=True)
    assert outcome.status == "failed" and "the calls before it were undone" in outcome.message
    assert variant_count("chat-ep") == 4 and endpoint_tags(arn) == {}


def test_variant_gone_is_an_error(aws: Emulator, session: Session) -> None:
    arn = endpoint("chat-ep", count=4)
    finding = variant_finding(session, arn)
    aws_context(REGION).client("sagemaker").delete_endpoint(EndpointName="chat-ep")
    with pytest.raises(NotFound, match="endpoint chat-ep no longer exists"):
        run(session, finding, approved=True)


def test_a_finding_seen_long_ago_reads_metrics_only_since_its_scan(aws: Emulator, session: Session) -> None:
    instance = gpu_instance()
    scanned = utcnow() - timedelta(hours=5)
    finding = add_finding(
        session,
        rule_id="gpu_idle",
        arn=f"arn:aws:ec2:{REGION}:{ACCOUNT}:instance/{instance}",
        kind="ec2_instance",
        name=instance,
        instance_type="g5.xlarge",
        count=1,
        recommendation={"action": "stop"},
        seen=scanned,
    )
    gpu_utilisation(aws, instance, 20.0, hours_ago=4)  # after the scan
    refused: Callable[[], RemediationOutcome] = lambda: run(session, finding, approved=True)  # noqa: E731
    assert refused().status == "refused"


# --- idle endpoint deleted, its configuration kept ----------------------------------------------------------------


def idle_endpoint_finding(session: Session, arn: str, count: int = 2) -> str:
    return add_finding(
        session,
        rule_id="inferentia_idle",
        arn=arn,
        kind="sagemaker_endpoint",
        name=arn.rsplit("/", 1)[-1],
        instance_type="ml.inf2.xlarge",
        count=count,
        recommendation={"action": "delete"},
    )


def endpoint_names() -> set[str]:
    return {e["EndpointName"] for e in aws_context(REGION).client("sagemaker").list_endpoints()["Endpoints"]}


def test_endpoint_delete_keeps_its_config_and_rollback_recreates_it(aws: Emulator, session: Session) -> None:
    arn = endpoint("idle-ep", count=2, tags={"team": "search"})
    endpoint("busy-ep", count=2)
    finding = idle_endpoint_finding(session, arn)
    endpoint_cpu(aws, "idle-ep")
    dry = run(session, finding, dry_run=True)
    assert [str(c) for c in dry.calls][1] == "sagemaker.DeleteEndpoint(EndpointName='idle-ep')"
    assert endpoint_names() == {"idle-ep", "busy-ep"}
    assert run(session, finding, approved=True).status == "applied"
    assert endpoint_names() == {"busy-ep"}
    applied = RemediationRepository(session).for_finding(finding)[0]
    kept = applied.before["endpoint_config"]
    assert kept["EndpointConfigName"] == "idle-ep-cfg"
    assert kept["ProductionVariants"][0]["InitialInstanceCount"] == 2
    sm = aws_context(REGION).client("sagemaker")
    sm.delete_endpoint_config(EndpointConfigName="idle-ep-cfg")  # someone tidied up meanwhile: the kept copy serves
    assert undo(session, finding).status == "rolled_back"
    assert endpoint_names() == {"idle-ep", "busy-ep"}
    assert sm.describe_endpoint(EndpointName="idle-ep")["EndpointConfigName"] == "idle-ep-cfg"
    assert variant_count("idle-ep") == 2 and endpoint_tags(arn) == {"team": "search"}


def test_endpoint_delete_guards(aws: Emulator, session: Session) -> None:
    busy = endpoint("idle-ep", count=2)
    invocations(aws, {"EndpointName": "idle-ep", "VariantName": "AllTraffic"}, 12)
    endpoint_cpu(aws, "idle-ep")
    outcome = run(session, idle_endpoint_finding(session, busy), approved=True)
    assert outcome.status == "refused" and "served 12 requests" in outcome.message
    guarded = endpoint("guarded-ep", count=2, tags={"chipwise:protect": "true"})
    assert run(session, idle_endpoint_finding(session, guarded), approved=True).status == "refused"
    assert endpoint_names() == {"idle-ep", "guarded-ep"}


def test_endpoint_delete_failure_half_way_rolls_back(aws: Emulator, session: Session) -> None:
    arn = endpoint("idle-ep", count=2)
    finding = idle_endpoint_finding(session, arn)
    endpoint_cpu(aws, "idle-ep")
    aws.inject_fault("sagemaker", "DeleteEndpoint", "AccessDeniedException", "denied")
    outcome = run(session, finding, approved=True)
    assert outcome.status == "failed" and "sagemaker.DeleteEndpoint failed" in outcome.message
    assert endpoint_names() == {"idle-ep"} and endpoint_tags(arn) == {}


# --- off-hours schedule (EventBridge Scheduler) -------------------------------------------------------------------

ROLE = "arn:aws:iam::123456789012:role/chipwise-scheduler"


def office_hours_finding(session: Session, instance: str) -> str:
    return add_finding(
        session,
        rule_id="accelerator_off_hours",
        arn=f"arn:aws:ec2:{REGION}:{ACCOUNT}:instance/{instance}",
        kind="ec2_instance",
        name=instance,
        instance_type="g5.xlarge",
        count=1,
        recommendation={"action": "schedule"},
        evidence={
            "schedule": "Mon–Fri 09:00–19:00; Sat–Sun off (UTC)",
            "off_stretches": "Mon 19:00 → Tue 09:00; Fri 19:00 → Mon 09:00",
        },
    )


def schedules() -> dict[str, Any]:
    client = aws_context(REGION).client("scheduler")
    names = [s["Name"] for s in client.list_schedules()["Schedules"]]
    return {n: client.get_schedule(Name=n) for n in names}


def test_off_hours_schedule_is_created_and_rolled_back(
    aws: Emulator, session: Session, monkeypatch: pytest.MonkeyPatch
) -> None:
    from chipwise.settings import get_settings

    monkeypatch.setenv("CHIPWISE_REMEDIATION_SCHEDULER_ROLE_ARN", ROLE)
    get_settings.cache_clear()
    instance = gpu_instance()
    finding = office_hours_finding(session, instance)
    dry = run(session, finding, dry_run=True)
    assert [c.params.get("ScheduleExpression") for c in dry.calls[1:]] == [
        "cron(0 19 ? * MON *)",
        "cron(0 9 ? * TUE *)",
        "cron(0 19 ? * FRI *)",
        "cron(0 9 ? * MON *)",
    ]
    assert schedules() == {}
    assert run(session, finding, approved=True).status == "applied"
    made = schedules()
    stop = made[f"chipwise-{finding[:8]}-1-stop"]
    assert stop["Target"]["Arn"] == "arn:aws:scheduler:::aws-sdk:ec2:stopInstances"
    assert stop["Target"]["RoleArn"] == ROLE and json.loads(stop["Target"]["Input"]) == {"InstanceIds": [instance]}
    assert len(made) == 4 and instance_state(instance) == ("running", {MARK: finding})  # stopped only at 19:00
    assert undo(session, finding).status == "rolled_back"
    assert schedules() == {} and instance_state(instance) == ("running", {})


def test_off_hours_schedule_needs_the_role_and_undoes_a_half_made_set(
    aws: Emulator, session: Session, monkeypatch: pytest.MonkeyPatch
) -> None:
    from chipwise.settings import get_settings

    instance = gpu_instance()
    finding = office_hours_finding(session, instance)
    with pytest.raises(InvalidInput, match="remediation_scheduler_role_arn"):
        run(session, finding, approved=True)
    monkeypatch.setenv("CHIPWISE_REMEDIATION_SCHEDULER_ROLE_ARN", ROLE)
    get_settings.cache_clear()
    taken = f"chipwise-{finding[:8]}-2-stop"  # someone's schedule holds the third name: CreateSchedule conflicts
    aws_context(REGION).client("scheduler").create_schedule(
        Name=taken,
        ScheduleExpression="rate(1 day)",
        FlexibleTimeWindow={"Mode": "OFF"},
        Target={"Arn": "arn:aws:lambda:us-east-1:123456789012:function:other", "RoleArn": ROLE},
    )
    outcome = run(session, finding, approved=True)
    assert outcome.status == "failed" and "scheduler.CreateSchedule failed" in outcome.message
    assert set(schedules()) == {taken}  # the two it made are deleted, the one it did not make is kept
    assert instance_state(instance) == ("running", {})


def test_with_a_remediation_role_the_finding_s_account_role_is_assumed(
    aws: Emulator, session: Session, monkeypatch: pytest.MonkeyPatch
) -> None:
    from botocore.exceptions import ClientError

    from chipwise.settings import get_settings

    monkeypatch.setenv("CHIPWISE_REMEDIATION_ROLE_NAME", "ChipwiseRemediation")
    monkeypatch.setenv("CHIPWISE_EXTERNAL_ID", "ext-1234567")
    get_settings.cache_clear()
    instance = gpu_instance()
    finding = idle_instance_finding(session, instance)
    gpu_utilisation(aws, instance, 0.5)
    aws.inject_fault("sts", "AssumeRole", "AccessDenied", "not trusted", status=403)
    with pytest.raises(ClientError, match="not trusted"):  # refused by the member account: nothing happens
        run(session, finding, approved=True)
    assert aws.fault_hits() == {"sts.AssumeRole": 1}
    assert instance_state(instance) == ("running", {}) and audit(session, finding) == []
    assert run(session, finding, approved=True).status == "applied"  # assumed: the emulator's role acts
    assert instance_state(instance)[0] == "stopped"


# --- off-hours schedule of an endpoint variant (Application Auto Scaling scheduled actions) -----------------------

VARIANT_ID = "endpoint/chat-ep/variant/AllTraffic"
TARGET = {
    "ServiceNamespace": "sagemaker",
    "ResourceId": VARIANT_ID,
    "ScalableDimension": "sagemaker:variant:DesiredInstanceCount",
}


def office_hours_variant_finding(
    session: Session, arn: str, count: int = 4, stretches: str = "Fri 19:00 → Mon 09:00", variant_arn: bool = True
) -> str:
    """The finding on the variant (the endpoint's ARN with variant ``AllTraffic``), or on the endpoint whose only
    variant it is."""
    return add_finding(
        session,
        rule_id="accelerator_off_hours",
        arn=arn,
        variant="AllTraffic" if variant_arn else "",
        kind="sagemaker_endpoint",
        name="chat-ep/AllTraffic",
        instance_type="ml.inf2.xlarge",
        count=count,
        recommendation={"action": "schedule"},
        evidence={"schedule": "Mon–Fri 09:00–19:00 (UTC)", "off_stretches": stretches},
    )


def scaling() -> tuple[list[dict[str, Any]], dict[str, dict[str, Any]]]:
    """The variant's scalable targets (min, max) and its scheduled actions by name (schedule, timezone, capacity)."""
    client = aws_context(REGION).client("application-autoscaling")
    targets = client.describe_scalable_targets(ServiceNamespace="sagemaker")["ScalableTargets"]
    actions = client.describe_scheduled_actions(ServiceNamespace="sagemaker")["ScheduledActions"]
    return (
        [{"ResourceId": t["ResourceId"], "Min": t["MinCapacity"], "Max": t["MaxCapacity"]} for t in targets],
        {
            a["ScheduledActionName"]: {
                "ResourceId": a["ResourceId"],
                "Schedule": a["Schedule"],
                "Timezone": a.get("Timezone"),
                "Capacity": a.get("ScalableTargetAction"),
            }
            for a in actions
        },
    )


def test_variant_schedule_dry_run_apply_and_rollback_of_a_new_target(aws: Emulator, session: Session) -> None:
    arn = endpoint("chat-ep", count=4)
    endpoint("other-ep", count=4)
    finding = office_hours_variant_finding(session, arn)
    busy = 900.0  # requests since the scan: a schedule does not look at the load (the off hours are scheduled)
    invocations(aws, {"EndpointName": "chat-ep", "VariantName": "AllTraffic"}, busy)
    dry = run(session, finding, dry_run=True)
    assert dry.status == "dry_run"
    off, on = f"chipwise-{finding[:8]}-1-off", f"chipwise-{finding[:8]}-1-on"
    assert [str(c) for c in dry.calls[1:]] == [
        "application-autoscaling.RegisterScalableTarget(ServiceNamespace='sagemaker', "
        f"ResourceId='{VARIANT_ID}', ScalableDimension='sagemaker:variant:DesiredInstanceCount', "
        "MinCapacity=4, MaxCapacity=4)",
        "application-autoscaling.PutScheduledAction(ServiceNamespace='sagemaker', "
        f"ResourceId='{VARIANT_ID}', ScalableDimension='sagemaker:variant:DesiredInstanceCount', "
        f"ScheduledActionName='{off}', Schedule='cron(0 19 ? * FRI *)', Timezone='UTC', "
        "ScalableTargetAction={'MinCapacity': 1, 'MaxCapacity': 1})",
        "application-autoscaling.PutScheduledAction(ServiceNamespace='sagemaker', "
        f"ResourceId='{VARIANT_ID}', ScalableDimension='sagemaker:variant:DesiredInstanceCount', "
        f"ScheduledActionName='{on}', Schedule='cron(0 9 ? * MON *)', Timezone='UTC', "
        "ScalableTargetAction={'MinCapacity': 4, 'MaxCapacity': 4})",
    ]
    assert scaling() == ([], {}) and endpoint_tags(arn) == {} and audit(session, finding) == []
    assert run(session, finding, approved=True).status == "applied"
    assert scaling() == (
        [{"ResourceId": VARIANT_ID, "Min": 4, "Max": 4}],
        {
            off: {
                "ResourceId": VARIANT_ID,
                "Schedule": "cron(0 19 ? * FRI *)",
                "Timezone": "UTC",
                "Capacity": {"MinCapacity": 1, "MaxCapacity": 1},
            },
            on: {
                "ResourceId": VARIANT_ID,
                "Schedule": "cron(0 9 ? * MON *)",
                "Timezone": "UTC",
                "Capacity": {"MinCapacity": 4, "MaxCapacity": 4},
            },
        },
    )
    assert variant_count("chat-ep") == 4 and endpoint_tags(arn) == {MARK: finding}  # scaled only on Friday 19:00
    assert undo(session, finding).status == "rolled_back"
    assert scaling() == ([], {}) and endpoint_tags(arn) == {}  # the target it registered is deregistered
    assert audit(session, finding) == [("apply", "applied", "alice"), ("rollback", "rolled_back", "bob")]


def test_variant_schedule_keeps_a_registered_target_and_restores_it(aws: Emulator, session: Session) -> None:
    arn = endpoint("chat-ep", count=4)
    client = aws_context(REGION).client("application-autoscaling")
    client.register_scalable_target(**TARGET, MinCapacity=2, MaxCapacity=6)  # the team's own auto scaling
    finding = office_hours_variant_finding(session, arn, stretches="Mon 19:00 → Tue 09:00; Fri 19:00 → Mon 09:00")
    outcome = run(session, finding, approved=True)
    assert outcome.status == "applied"
    register = outcome.calls[1].params
    assert (register["MinCapacity"], register["MaxCapacity"]) == (2, 6)  # kept as registered
    targets, actions = scaling()
    assert targets == [{"ResourceId": VARIANT_ID, "Min": 2, "Max": 6}]
    assert {n: (a["Schedule"], a["Capacity"]) for n, a in actions.items()} == {
        f"chipwise-{finding[:8]}-1-off": ("cron(0 19 ? * MON *)", {"MinCapacity": 1, "MaxCapacity": 1}),
        f"chipwise-{finding[:8]}-1-on": ("cron(0 9 ? * TUE *)", {"MinCapacity": 4, "MaxCapacity": 6}),
        f"chipwise-{finding[:8]}-2-off": ("cron(0 19 ? * FRI *)", {"MinCapacity": 1, "MaxCapacity": 1}),
        f"chipwise-{finding[:8]}-2-on": ("cron(0 9 ? * MON *)", {"MinCapacity": 4, "MaxCapacity": 6}),
    }
    stored = RemediationRepository(session).for_finding(finding)[0]
    assert stored.before["scalable_target"] == {"MinCapacity": 2, "MaxCapacity": 6}
    client.register_scalable_target(**TARGET, MinCapacity=3, MaxCapacity=8)  # changed meanwhile: rollback restores
    assert undo(session, finding).status == "rolled_back"
    assert scaling() == ([{"ResourceId": VARIANT_ID, "Min": 2, "Max": 6}], {})


def test_variant_schedule_rollback_after_an_action_was_deleted_by_hand(aws: Emulator, session: Session) -> None:
    arn = endpoint("chat-ep", count=4)
    finding = office_hours_variant_finding(session, arn)
    assert run(session, finding, approved=True).status == "applied"
    client = aws_context(REGION).client("application-autoscaling")
    client.delete_scheduled_action(**TARGET, ScheduledActionName=f"chipwise-{finding[:8]}-1-off")
    assert undo(session, finding).status == "rolled_back"  # the missing action counts as deleted
    assert scaling() == ([], {}) and endpoint_tags(arn) == {}


def test_variant_schedule_failure_half_way_rolls_back(aws: Emulator, session: Session) -> None:
    arn = endpoint("chat-ep", count=4)
    finding = office_hours_variant_finding(session, arn)
    aws.inject_fault("application-autoscaling", "PutScheduledAction", "ValidationException", "bad schedule")
    # the first PutScheduledAction (the off one) fails: the target registered before it is deregistered
    outcome = run(session, finding, approved=True)
    assert outcome.status == "failed" and "application-autoscaling.PutScheduledAction failed" in outcome.message
    assert "the calls before it were undone" in outcome.message
    assert scaling() == ([], {}) and endpoint_tags(arn) == {}
    assert aws.fault_hits() == {"application-autoscaling.PutScheduledAction": 1}


def test_variant_schedule_failure_half_way_restores_a_registered_target(aws: Emulator, session: Session) -> None:
    arn = endpoint("chat-ep", count=4)
    client = aws_context(REGION).client("application-autoscaling")
    client.register_scalable_target(**TARGET, MinCapacity=2, MaxCapacity=6)
    client.put_scheduled_action(
        **TARGET,
        ScheduledActionName="team-nightly",
        Schedule="cron(0 1 * * ? *)",
        ScalableTargetAction={"MinCapacity": 2, "MaxCapacity": 3},
    )
    finding = office_hours_variant_finding(session, arn)
    aws.inject_fault("application-autoscaling", "PutScheduledAction", "ValidationException", "bad schedule")
    outcome = run(session, finding, approved=True)
    assert outcome.status == "failed" and "the calls before it were undone" in outcome.message
    # the target is registered again as it was, not deregistered (which would delete the team's action with it)
    targets, actions = scaling()
    assert targets == [{"ResourceId": VARIANT_ID, "Min": 2, "Max": 6}] and set(actions) == {"team-nightly"}
    assert endpoint_tags(arn) == {}


def test_variant_schedule_protected_changed_or_clashing_is_refused(aws: Emulator, session: Session) -> None:
    guarded = endpoint("guarded-ep", count=4, tags={"chipwise:protect": "true"})
    outcome = run(session, office_hours_variant_finding(session, guarded), approved=True)
    assert outcome.status == "refused" and "chipwise:protect=true" in outcome.message
    assert scaling() == ([], {}) and endpoint_tags(guarded) == {"chipwise:protect": "true"}
    arn = endpoint("chat-ep", count=3)
    outcome = run(session, office_hours_variant_finding(session, arn), approved=True)  # the scan saw 4
    assert outcome.status == "refused" and "runs 3 instances now (the scan saw 4)" in outcome.message
    client = aws_context(REGION).client("application-autoscaling")
    client.register_scalable_target(**TARGET, MinCapacity=1, MaxCapacity=4)
    clash = office_hours_variant_finding(session, arn, count=3, variant_arn=False)
    taken = f"chipwise-{clash[:8]}-1-on"  # a Put of the same name would overwrite it: refused
    client.put_scheduled_action(**TARGET, ScheduledActionName=taken, Schedule="cron(0 1 * * ? *)")
    outcome = run(session, clash, approved=True)
    assert outcome.status == "refused" and f"already has the scheduled action {taken}" in outcome.message
    targets, actions = scaling()
    assert targets == [{"ResourceId": VARIANT_ID, "Min": 1, "Max": 4}] and set(actions) == {taken}
    assert endpoint_tags(arn) == {}


def test_variant_schedule_of_a_single_instance_has_no_step(aws: Emulator, session: Session) -> None:
    arn = endpoint("chat-ep", count=1)
    finding = office_hours_variant_finding(session, arn, count=1)  # scale to zero needs inference components
    with pytest.raises(InvalidInput, match="keeps at least 1"):
        run(session, finding, dry_run=True)
    with pytest.raises(InvalidInput, match="keeps at least 1"):
        run(session, finding, approved=True)
    assert scaling() == ([], {}) and endpoint_tags(arn) == {}
    arn2 = endpoint("two-ep", count=2)
    grown = office_hours_variant_finding(session, arn2, count=2)
    aws_context(REGION).client("sagemaker").update_endpoint_weights_and_capacities(
        EndpointName="two-ep", DesiredWeightsAndCapacities=[{"VariantName": "AllTraffic", "DesiredInstanceCount": 1}]
    )
    outcome = run(session, grown, approved=True)  # down to 1 since the scan: the live re-check refuses
    assert outcome.status == "refused" and "runs 1 instances now" in outcome.message


def test_variant_schedule_without_an_off_stretch_or_endpoint_is_an_error(aws: Emulator, session: Session) -> None:
    arn = endpoint("chat-ep", count=4)
    with pytest.raises(InvalidInput, match="names no off stretch"):
        run(session, office_hours_variant_finding(session, arn, stretches=""), approved=True)
    gone = office_hours_variant_finding(session, arn, variant_arn=False)
    aws_context(REGION).client("sagemaker").delete_endpoint(EndpointName="chat-ep")
    with pytest.raises(NotFound, match="endpoint chat-ep no longer exists"):
        run(session, gone, approved=True)
