"""Apply and roll back a finding's mechanical step, with its guards and its audit.

``apply_held`` re-reads the resource and its metrics (:func:`plan_step`), and only then, if approved (``--yes``
or a Slack approval), makes the calls in order. A call that fails undoes the calls already made (in reverse) and the
apply is stored as failed. Every apply, refusal and rollback is stored with who, when, the calls and the result; an
unapproved apply changes and stores nothing but a refusal. Both run on a finding their caller holds (one apply or
rollback of a finding at a time: :mod:`chipwise.pipeline.apply` takes and releases it).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime

from botocore.exceptions import BotoCoreError, ClientError

from chipwise.aws import AssumeRole, AwsContext, aws_context
from chipwise.errors import InvalidInput
from chipwise.models.resources import resource_key
from chipwise.remediate.api_calls import ApiCall, FindingFacts, GuardRefusal, RemediationPlan, call
from chipwise.remediate.preview import preview
from chipwise.remediate.sagemaker_steps import restore_kept_config
from chipwise.remediate.steps import mechanical_action, plan_step
from chipwise.settings import get_settings
from chipwise.store import Session
from chipwise.store.repositories.findings import FindingRecord, FindingRepository
from chipwise.store.repositories.inventory import ResourceRepository
from chipwise.store.repositories.remediations import (
    APPLIED,
    APPLY,
    FAILED,
    REFUSAL,
    REFUSED,
    ROLLBACK,
    ROLLED_BACK,
    RemediationEvent,
    RemediationRepository,
)

DRY_RUN, UNAPPROVED = "dry_run", "unapproved"
AwsFactory = Callable[[str, str], AwsContext]  # (account id, region) -> clients


def remediation_context(account_id: str, region: str) -> AwsContext:
    """The clients that act on ``account_id``: with ``remediation_role_name`` set, that account's opt-in remediation
    role (iac/remediation-role.yaml, with the ExternalId); otherwise the current credentials."""
    settings = get_settings()
    if not settings.remediation_role_name:
        return aws_context(region)
    arn = f"arn:aws:iam::{account_id}:role/{settings.remediation_role_name}"
    return aws_context(region, AssumeRole(arn, settings.external_id, session_name="chipwise-remediation"))


@dataclass
class RemediationOutcome:
    """What an apply (or rollback) did: ``status`` is dry_run, unapproved, applied, refused, failed or rolled_back;
    ``message`` says why for refused and failed (both stored: the caller commits, then reports the failure)."""

    status: str
    finding_id: str
    resource: str
    calls: list[ApiCall] = field(default_factory=list)
    undo: list[ApiCall] = field(default_factory=list)
    message: str = ""

    @property
    def ok(self) -> bool:
        return self.status not in {REFUSED, FAILED}


def facts(finding: FindingRecord) -> FindingFacts:
    return FindingFacts(
        finding_id=finding.id,
        rule_id=finding.rule_id,
        resource_arn=finding.resource_arn,
        resource_variant=finding.resource_variant or None,
        resource_kind=finding.resource_kind,
        instance_type=finding.instance_type,
        instance_count=finding.instance_count,
        recommendation=dict(finding.recommendation or {}),
        evidence=dict(finding.evidence or {}),
        last_seen=finding.last_seen,
    )


def check_appliable(session: Session, finding_id: str) -> FindingRecord:
    """The finding, when it can be applied now: open (or suppressed) and with no apply in force."""
    finding = FindingRepository(session).get(finding_id)
    short = finding.id[:8]
    if RemediationRepository(session).live_apply(finding.id) is not None:
        raise InvalidInput(f"finding {short} is already applied: `chipwise findings rollback {short}` undoes it")
    if finding.status not in {"open", "suppressed"}:
        raise InvalidInput(f"finding {short} is {finding.status}: only an open finding is applied")
    return finding


def refuse_batch_launched(session: Session, finding: FindingRecord) -> None:
    """Refuses an instance an AWS Batch compute environment launched (as the latest scan read its ECS cluster): Batch
    would launch a replacement, and the environment is what is judged and changed (its minimum vCPUs, its queues)."""
    if finding.resource_kind != "ec2_instance":
        return
    instance_id = finding.resource_arn.rsplit("/", 1)[-1]
    launched = ResourceRepository(session).batch_launched(finding.account_id, finding.region)
    environment = launched.get(instance_id.lower())
    if environment is not None:
        raise GuardRefusal(
            f"instance {instance_id} was launched by AWS Batch compute environment {environment}: Batch would launch "
            "a replacement, so Chipwise does not stop or schedule it; the environment is judged and changed instead "
            "(its minimum vCPUs, its job queues: see its finding)"
        )


def preview_finding(session: Session, finding_id: str) -> RemediationOutcome:
    """A dry run from the store alone (no AWS call): the calls as the scan saw the resource; refused for an
    instance a Batch compute environment launched."""
    finding = check_appliable(session, finding_id)
    try:
        refuse_batch_launched(session, finding)
    except GuardRefusal as refusal:
        return RemediationOutcome(REFUSED, finding.id, finding.resource_name, message=str(refusal))
    found = facts(finding)
    stored = ResourceRepository(session).by_key(resource_key(finding.resource_arn, finding.resource_variant or None))
    tags = {str(k): str(v) for k, v in (stored.tags or {}).items()} if stored is not None else {}
    details = dict(stored.details or {}) if stored is not None else {}
    plan = preview(found, tags, details)
    return RemediationOutcome(DRY_RUN, finding.id, plan.resource, plan.calls, plan.undo)


def apply_held(
    session: Session,
    aws_for: AwsFactory,
    finding_id: str,
    *,
    actor: str,
    source: str,
    now: datetime,
    approved: bool = False,
) -> RemediationOutcome:
    """Apply a finding the caller holds (:meth:`RemediationRepository.claim`): its row locked for this transaction,
    checked, re-read, and acted on when ``approved``. Raises NotFound/InvalidInput for bad input (nothing stored);
    a refusal or a failed call is returned (and stored)."""
    audit = RemediationRepository(session)
    audit.hold(finding_id)
    finding = check_appliable(session, finding_id)
    found = facts(finding)
    action = mechanical_action(found) or "none"
    try:
        refuse_batch_launched(session, finding)
        plan = plan_step(aws_for(finding.account_id, finding.region), found, now)
    except GuardRefusal as refusal:
        audit.record(finding, RemediationEvent(REFUSAL, action, REFUSED, actor, source, result=str(refusal)), now)
        return RemediationOutcome(REFUSED, finding.id, finding.resource_name, message=str(refusal))
    if not approved:
        return RemediationOutcome(UNAPPROVED, finding.id, plan.resource, plan.calls, plan.undo)
    done, failure = _run(aws_for(finding.account_id, finding.region), plan)
    if failure:
        audit.record(finding, _event(plan, actor, source, FAILED, failure, done), now)
        return RemediationOutcome(FAILED, finding.id, plan.resource, plan.calls[:done], message=failure)
    audit.record(finding, _event(plan, actor, source, APPLIED, f"{plan.resource}: done", done), now)
    return RemediationOutcome(APPLIED, finding.id, plan.resource, plan.calls, plan.undo)


def _event(plan: RemediationPlan, actor: str, source: str, status: str, result: str, done: int) -> RemediationEvent:
    return RemediationEvent(
        APPLY,
        plan.action,
        status,
        actor,
        source,
        result=result,
        calls=[c.as_json() for c in plan.calls[:done]],
        undo=[c.as_json() for c in plan.undo[:done]],
        before=plan.before,
    )


def _run(aws: AwsContext, plan: RemediationPlan) -> tuple[int, str]:
    """Make the plan's calls in order; on a failure undo the ones made (newest first). Returns how many calls
    succeeded and the failure ("" when all did)."""
    for index, api in enumerate(plan.calls):
        try:
            call(aws, api)
        except (ClientError, BotoCoreError) as exc:
            left = _undo(aws, plan.undo[:index])
            message = f"{api.service}.{api.operation} failed ({_reason(exc)}) on {plan.resource}: " + (
                "the calls before it were undone" if not left else f"undo failed, still to undo: {'; '.join(left)}"
            )
            return index, message
    return len(plan.calls), ""


def _undo(aws: AwsContext, undo: list[ApiCall]) -> list[str]:
    """Make the undo calls newest first; the ones that failed (as text)."""
    left: list[str] = []
    for api in reversed(undo):
        try:
            call(aws, api)
        except (ClientError, BotoCoreError) as exc:
            if not _already_gone(api, exc):
                left.append(f"{api} ({_reason(exc)})")
    return left


def _already_gone(api: ApiCall, exc: Exception) -> bool:
    """A delete whose object is gone already (someone removed a schedule or a scheduled action by hand): undone."""
    code = str(exc.response.get("Error", {}).get("Code", "")) if isinstance(exc, ClientError) else ""
    return api.operation.startswith(("Delete", "Deregister")) and code in {
        "ObjectNotFoundException",  # Application Auto Scaling
        "ResourceNotFoundException",  # EventBridge Scheduler
    }


def _reason(exc: Exception) -> str:
    if isinstance(exc, ClientError):
        error = exc.response.get("Error", {})
        return f"{error.get('Code')}: {error.get('Message')}"
    return str(exc)


def rollback_held(
    session: Session, aws_for: AwsFactory, finding_id: str, *, actor: str, source: str, now: datetime
) -> RemediationOutcome:
    """Undo the apply in force of a finding the caller holds (its stored undo calls, newest first) and store the
    rollback."""
    audit = RemediationRepository(session)
    audit.hold(finding_id)
    finding = FindingRepository(session).get(finding_id)
    applied = audit.live_apply(finding.id)
    if applied is None:
        raise InvalidInput(f"finding {finding.id[:8]} has no apply in force: nothing to roll back")
    undo = [ApiCall.from_json(c) for c in applied.undo]
    aws = aws_for(finding.account_id, finding.region)
    try:
        restore_kept_config(aws, dict(applied.before or {}))
    except (ClientError, BotoCoreError) as exc:
        left = [f"sagemaker.CreateEndpointConfig from the kept configuration ({_reason(exc)})"]
    else:
        left = _undo(aws, undo)
    done = list(reversed(undo))
    event = RemediationEvent(
        ROLLBACK,
        applied.action,
        FAILED if left else ROLLED_BACK,
        actor,
        source,
        result=f"still to undo: {'; '.join(left)}" if left else "restored",
        calls=[c.as_json() for c in done],
        reverts_id=applied.id,
    )
    audit.record(finding, event, now)
    if left:
        return RemediationOutcome(
            FAILED, finding.id, finding.resource_name, done, message=f"rollback incomplete: {event.result}"
        )
    audit.mark_rolled_back(applied.id, now)
    return RemediationOutcome(ROLLED_BACK, finding.id, finding.resource_name, done)


__all__ = ["GuardRefusal", "RemediationOutcome", "apply_held", "check_appliable", "facts", "rollback_held"]
