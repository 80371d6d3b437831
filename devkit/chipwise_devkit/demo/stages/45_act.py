"""Stage 4½: act on a quick win, safely. The idle GPU notebook's ``gpu_idle`` finding is applied as
``chipwise findings apply ID`` does it: a dry run (the exact calls, nothing changed), the apply (re-checked
against the instance's state and its metrics since the scan, which its agent kept publishing, then marked and
stopped) and the rollback (started
again, mark removed). Writes ``actions.md`` with the calls and the audit; the instance ends as it began, so the
later stages' figures do not move."""

from __future__ import annotations

from datetime import timedelta

from chipwise.aws import aws_context
from chipwise.catalog import get_catalog
from chipwise.clock import utcnow
from chipwise.pipeline.apply import apply_finding
from chipwise.pipeline.rollback import rollback_finding
from chipwise.store import session_scope
from chipwise.store.repositories.findings import FindingRepository
from chipwise.store.repositories.remediations import RemediationRepository
from chipwise_devkit.demo.runner import DemoContext, Stage

QUICK_WIN = ("gpu_idle", "gpu-notebook-g5-idle")


def run(ctx: DemoContext) -> None:
    with session_scope(ctx.database_url) as session:
        rows = FindingRepository(session).find(account_id=ctx.account_id, rule_ids=[QUICK_WIN[0]])
        (finding,) = [r for r in rows if r.resource_name == QUICK_WIN[1]]
        finding_id = finding.id
    url = ctx.database_url
    _still_idle(ctx, finding.resource_arn.rsplit("/", 1)[-1])
    dry = apply_finding(finding_id, actor="demo", source="cli", database_url=url, dry_run=True)
    applied = apply_finding(finding_id, actor="demo", source="cli", database_url=url, now=utcnow(), approved=True)
    state_after_apply = _state(ctx, finding.resource_arn)
    rolled = rollback_finding(finding_id, actor="demo", source="cli", database_url=url, now=utcnow())
    with session_scope(ctx.database_url) as session:
        audit = RemediationRepository(session).for_finding(finding_id)
        trail = [(a.created_at, a.event, a.status, a.actor, [c["operation"] for c in a.calls], a.result) for a in audit]
    state_after_rollback = _state(ctx, finding.resource_arn)
    lines = [
        f"# Acting on a quick win: {QUICK_WIN[0]} on {QUICK_WIN[1]} ({finding_id[:8]})",
        "",
        f"`chipwise findings apply {finding_id[:8]} --dry-run` would make:",
        "",
        *(f"    {call}" for call in dry.calls),
        "",
        f"`chipwise findings apply {finding_id[:8]} --yes`: {applied.status} (instance {state_after_apply}); "
        f"`chipwise findings rollback {finding_id[:8]}`: {rolled.status} (instance {state_after_rollback}).",
        "",
        "| at (UTC) | event | status | who | calls | result |",
        "| --- | --- | --- | --- | --- | --- |",
        *(
            f"| {at:%Y-%m-%d %H:%M:%S} | {event} | {status} | {who} | {', '.join(calls)} | {result} |"
            for at, event, status, who, calls, result in trail
        ),
    ]
    ctx.write("actions.md", "\n".join(lines) + "\n")
    ctx.results["actions"] = {"applied": applied.status, "rolled_back": rolled.status, "audit": len(trail)}
    ctx.summary.append(
        (
            "Act",
            f"applied and rolled back {QUICK_WIN[0]} on {QUICK_WIN[1]} ({applied.status}, {rolled.status}): "
            "see actions.md",
        )
    )


def _still_idle(ctx: DemoContext, instance_id: str) -> None:
    """The notebook's agent kept publishing after the scan: an idle minute since (an apply acts only on fresh
    evidence: datapoints since the scan, a CPU that is not busy)."""
    from chipwise_devkit.demo.seed import gpu_dimensions
    from chipwise_devkit.emulator import MetricPoint

    facts = get_catalog().get("g5.xlarge")
    gpu = f"NVIDIA {facts.accelerator}" if facts and facts.accelerator else "NVIDIA GPU"
    at = utcnow() - timedelta(minutes=1)
    ctx.emulator.seed_metrics(
        [
            MetricPoint(
                "CWAgent", "nvidia_smi_utilization_gpu", gpu_dimensions(instance_id, 0, gpu), at, 0.3, "Percent"
            ),
            MetricPoint("AWS/EC2", "CPUUtilization", {"InstanceId": instance_id}, at, 2.0, "Percent"),
        ],
        account_id=ctx.account_id,
        region=ctx.region,
    )


def _state(ctx: DemoContext, arn: str) -> str:
    instance_id = arn.rsplit("/", 1)[-1]
    found = aws_context(ctx.region).client("ec2").describe_instances(InstanceIds=[instance_id])
    return str(found["Reservations"][0]["Instances"][0]["State"]["Name"])


STAGE = Stage("Act on a quick win (apply, then roll back)", run)
