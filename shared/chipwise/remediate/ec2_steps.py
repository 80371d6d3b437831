"""The EC2 instance steps: an idle instance stopped (or, in a group, its group lowered by one: see
:mod:`chipwise.remediate.node_groups`), and an office-hours instance given EventBridge Scheduler stop/start
schedules."""

from __future__ import annotations

import json
import re
from datetime import datetime
from typing import Any

from chipwise.aws import AwsContext
from chipwise.collect.inventory.sources.ec2_instances import ec2_resource
from chipwise.collect.metric_specs import CWAGENT_GPU, EC2_CPU, EKS_GPU, EKS_NEURONCORE, NEURON_CORE
from chipwise.collect.metrics import discover_series, plan_targets
from chipwise.errors import InvalidInput, NotFound
from chipwise.remediate.api_calls import (
    ApiCall,
    FindingFacts,
    GuardRefusal,
    RemediationPlan,
    ec2_mark,
)
from chipwise.remediate.guards import (
    BUSY_CPU_PCT,
    fresh,
    hourly_since,
    maximum,
    peak,
    read_again,
    refuse_protected,
    tags_of,
)
from chipwise.remediate.node_groups import instance_group, plan_group_down
from chipwise.rules.builtin.gpu_idle import GpuIdleParams
from chipwise.rules.builtin.inferentia_idle import InferentiaIdleParams
from chipwise.settings import get_settings

EC2_STOP, EC2_SCHEDULE = "ec2_stop", "ec2_schedule"
ACCELERATOR_SPECS = (CWAGENT_GPU, NEURON_CORE, EKS_NEURONCORE, EKS_GPU)
_STRETCH = re.compile(r"(Mon|Tue|Wed|Thu|Fri|Sat|Sun) (\d\d):00 → (Mon|Tue|Wed|Thu|Fri|Sat|Sun) (\d\d):00")


def instance_id_of(finding: FindingFacts) -> str:
    return finding.resource_arn.rsplit("/", 1)[-1]


def read_instance(aws: AwsContext, finding: FindingFacts) -> dict[str, Any]:
    """The finding's instance read again; ``NotFound`` when it is gone (terminated too); refused when protected or
    of another type than the scan saw."""
    instance_id = instance_id_of(finding)
    ec2 = aws.client("ec2")
    reservations = read_again(
        f"instance {instance_id}", lambda: ec2.describe_instances(InstanceIds=[instance_id]).get("Reservations", [])
    )
    instances = [i for r in reservations for i in r.get("Instances", [])]
    if not instances or (instances[0].get("State") or {}).get("Name") in {"terminated", "shutting-down"}:
        raise NotFound(f"instance {instance_id} no longer exists")
    instance: dict[str, Any] = dict(instances[0])
    refuse_protected(tags_of(instance.get("Tags")), f"instance {instance_id}")
    if finding.instance_type and instance.get("InstanceType") != finding.instance_type:
        raise GuardRefusal(
            f"instance {instance_id} is now a {instance.get('InstanceType')} (the scan saw a {finding.instance_type})"
        )
    return instance


def plan_ec2_stop(aws: AwsContext, finding: FindingFacts, now: datetime) -> RemediationPlan:
    """Stop an idle instance: still running, its accelerator metric fresh and idle since the scan, its CPU not busy.
    An instance in a group lowers the group instead."""
    instance = read_instance(aws, finding)
    instance_id = instance_id_of(finding)
    state = str((instance.get("State") or {}).get("Name"))
    if state != "running":
        raise GuardRefusal(f"instance {instance_id} is {state} (it was running at the scan): nothing to stop")
    _check_still_idle(aws, finding, instance, now)
    before = {"instance_id": instance_id, "state": state, "instance_type": instance.get("InstanceType")}
    group = instance_group(tags_of(instance.get("Tags")))
    if group is not None:
        return plan_group_down(aws, finding, group, instance_id, before)
    calls, undo = ec2_stop_calls(instance_id, finding.finding_id)
    return RemediationPlan(EC2_STOP, f"instance {instance_id}", calls, undo, before)


def ec2_stop_calls(instance_id: str, finding_id: str) -> tuple[list[ApiCall], list[ApiCall]]:
    mark, unmark = ec2_mark(instance_id, finding_id)
    return (
        [mark, ApiCall("ec2", "StopInstances", {"InstanceIds": [instance_id]})],
        [unmark, ApiCall("ec2", "StartInstances", {"InstanceIds": [instance_id]})],
    )


def _check_still_idle(aws: AwsContext, finding: FindingFacts, instance: dict[str, Any], now: datetime) -> None:
    """Fresh accelerator datapoints since the scan, all under the rule's idle threshold, and a CPU that is not busy
    (a busy CPU contradicts "idle")."""
    instance_id = instance_id_of(finding)
    resource = ec2_resource(instance, finding.resource_arn.split(":")[4], aws.region)
    targets = plan_targets([resource], discover_series(aws, [resource]))
    accelerator = [t for t in targets if t.spec in ACCELERATOR_SPECS and t.series]
    what = "GPU utilisation" if finding.rule_id == "gpu_idle" else "NeuronCore utilisation"
    rows = fresh(aws, accelerator, finding.last_seen, now, resource=f"instance {instance_id}", what=what)
    limit = (
        GpuIdleParams().max_gpu_utilization_pct
        if finding.rule_id == "gpu_idle"
        else InferentiaIdleParams().max_neuroncore_utilization_pct
    )
    busiest = peak(rows, maximum)
    if busiest is not None and busiest >= limit:
        raise GuardRefusal(
            f"instance {instance_id} became busy since the scan: accelerator utilisation peaked at {busiest:.1f} % "
            f"(idle means under {limit:g} %)"
        )
    cpu_rows = hourly_since(aws, [t for t in targets if t.spec is EC2_CPU], finding.last_seen, now)
    cpu = peak(cpu_rows, maximum)
    if cpu is not None and cpu >= BUSY_CPU_PCT:
        raise GuardRefusal(
            f"instance {instance_id}'s CPU peaked at {cpu:.1f} % since the scan while its accelerator was idle: it is "
            f"working (at or above {BUSY_CPU_PCT:g} % contradicts idle), Chipwise does not stop it"
        )


def off_hours_crons(stretches: str) -> list[tuple[str, str]]:
    """The finding's off stretches (``Mon 19:00 → Tue 09:00; …``, UTC) as (stop, start) EventBridge Scheduler cron
    expressions: ``cron(0 19 ? * MON *)``, ``cron(0 9 ? * TUE *)``."""
    found = _STRETCH.findall(stretches)
    return [
        (f"cron(0 {int(stop_hour)} ? * {stop_day.upper()} *)", f"cron(0 {int(start_hour)} ? * {start_day.upper()} *)")
        for stop_day, stop_hour, start_day, start_hour in found
    ]


def plan_ec2_schedule(aws: AwsContext, finding: FindingFacts) -> RemediationPlan:
    """An instance that works office hours: one EventBridge Scheduler schedule stops it at the start of each off
    stretch, another starts it at the end (UTC, as the finding's pattern was read). Rollback deletes them. An
    instance in a group is refused (its group would replace it at every stop)."""
    instance = read_instance(aws, finding)
    instance_id = instance_id_of(finding)
    group = instance_group(tags_of(instance.get("Tags")))
    if group is not None:
        raise GuardRefusal(
            f"instance {instance_id} is in {group.kind.replace('_', ' ')} {group.name}: a scheduled stop would be "
            "replaced; schedule the group's size instead (a person sets that up)"
        )
    calls, undo = ec2_schedule_calls(finding, instance_id)
    return RemediationPlan(
        EC2_SCHEDULE,
        f"instance {instance_id}",
        calls,
        undo,
        {"instance_id": instance_id, "schedule": finding.evidence.get("schedule"), "crons": _crons(finding)},
    )


def _crons(finding: FindingFacts) -> list[tuple[str, str]]:
    crons = off_hours_crons(str(finding.evidence.get("off_stretches") or ""))
    if not crons:
        raise InvalidInput(f"finding {finding.finding_id[:8]} names no off stretch to schedule")
    return crons


def ec2_schedule_calls(finding: FindingFacts, instance_id: str) -> tuple[list[ApiCall], list[ApiCall]]:
    """The mark and a stop and a start schedule per off stretch, and their undo (from the finding alone)."""
    role = get_settings().remediation_scheduler_role_arn
    if not role:
        raise InvalidInput("an off-hours schedule needs remediation_scheduler_role_arn (the role Scheduler assumes)")
    payload = json.dumps({"InstanceIds": [instance_id]})
    mark, unmark = ec2_mark(instance_id, finding.finding_id)
    calls, undo = [mark], [unmark]
    for index, (stop, start) in enumerate(_crons(finding), 1):
        for verb, cron in (("stop", stop), ("start", start)):
            name = f"chipwise-{finding.finding_id[:8]}-{index}-{verb}"
            calls.append(
                ApiCall(
                    "scheduler",
                    "CreateSchedule",
                    {
                        "Name": name,
                        "ScheduleExpression": cron,
                        "ScheduleExpressionTimezone": "UTC",
                        "FlexibleTimeWindow": {"Mode": "OFF"},
                        "Description": f"Chipwise off-hours {verb} of {instance_id} (finding {finding.finding_id})",
                        "Target": {
                            "Arn": f"arn:aws:scheduler:::aws-sdk:ec2:{verb}Instances",
                            "RoleArn": role,
                            "Input": payload,
                        },
                    },
                )
            )
            undo.append(ApiCall("scheduler", "DeleteSchedule", {"Name": name}))
    return calls, undo
