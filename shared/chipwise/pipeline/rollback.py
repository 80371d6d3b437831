"""Roll back a finding's apply in force: the one door `chipwise findings rollback` uses. It holds the finding as an
apply does (:func:`chipwise.pipeline.apply.run_held`): a rollback never runs beside an apply of the same finding."""

from __future__ import annotations

from datetime import datetime

from chipwise.clock import utcnow
from chipwise.pipeline.apply import resolve, run_held
from chipwise.remediate.runner import AwsFactory, RemediationOutcome, remediation_context, rollback_held
from chipwise.settings import get_settings


def rollback_finding(
    finding_ref: str,
    *,
    actor: str,
    source: str,
    database_url: str | None = None,
    now: datetime | None = None,
    aws_for: AwsFactory = remediation_context,
) -> RemediationOutcome:
    """Undo the apply in force of ``finding_ref`` (id or prefix) as ``actor``. Raises NotFound/InvalidInput."""
    url = database_url or get_settings().database_url
    when = now or utcnow()
    finding_id = resolve(finding_ref, url)
    return run_held(
        url,
        finding_id,
        "rollback",
        actor,
        source,
        when,
        lambda session: rollback_held(session, aws_for, finding_id, actor=actor, source=source, now=when),
    )
